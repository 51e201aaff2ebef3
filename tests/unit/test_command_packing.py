"""The client packing its commands with hiredis (frontier/connection.packed_in_c) sends
exactly the bytes redis-py's own packing sends, and refuses what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, ConnectionPool, UnixDomainSocketConnection
from redis.exceptions import DataError

from invcrawl.common.items import ItemStatus, PageOutcome
from invcrawl.common.search.ranking import Tier
from invcrawl.frontier.connection import connect, packed_in_c

pytest.importorskip("hiredis")


def pair(url: str = "redis://127.0.0.1:1") -> tuple[Any, Any]:
    """A connection of the client packing in C and one of redis-py's (never connected)."""
    ours = connect(url).connection_pool.make_connection()
    theirs = Redis.from_url(url, decode_responses=True).connection_pool.make_connection()
    return ours, theirs


def packed(connection: Any, args: tuple[Any, ...]) -> bytes:
    return b"".join(bytes(chunk) for chunk in connection.pack_command(*args))


ARG = st.one_of(
    st.binary(max_size=9000),  # past redis-py's 6,000-byte chunking
    st.text(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70),
)


@given(st.lists(ARG, max_size=40))
def test_the_same_bytes_as_redis_py(args: list[Any]) -> None:
    ours, theirs = pair()
    assert type(ours) is not Connection and isinstance(ours, Connection)
    for head in ("EVALSHA", b"EVALSHA", "SCRIPT LOAD", b"CLIENT SETNAME"):
        assert packed(ours, (head, *args)) == packed(theirs, (head, *args))


class Letters(bytes):
    pass


OTHER_VALUES = [1.5, 0.1, memoryview(b"abc"), bytearray(b"ab"), "é\u2028", 2**64]
ENUMS_AND_SUBCLASSES = [ItemStatus.OK, PageOutcome.FETCHED, Letters(b"xy"), Tier.EXACT]


@pytest.mark.parametrize("value", [*OTHER_VALUES, *ENUMS_AND_SUBCLASSES])
def test_other_values_as_redis_py(value: Any) -> None:
    ours, theirs = pair()
    assert packed(ours, ("SET", "k", value)) == packed(theirs, ("SET", "k", value))


def test_an_items_commit_is_packed_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit's values (a StrEnum status among them) take the C path, never redis-py's."""
    ours, theirs = pair()
    args = ("EVALSHA", "ab" * 20, 2, "k1", "k2", 1, "f", ItemStatus.OK, b"\x28\xb5", "é")
    expected = [b"".join(theirs.pack_command(*args))]

    def refused(*_: Any) -> Any:
        raise AssertionError("packed by redis-py")

    monkeypatch.setattr(Connection, "pack_command", refused)
    assert ours.pack_command(*args) == expected
    with pytest.raises(AssertionError):
        ours.pack_command(*args, 1.5)  # a float: redis-py's


@pytest.mark.parametrize("value", [True, None, object()])
def test_refused_as_redis_py(value: Any) -> None:
    ours, _ = pair()
    with pytest.raises(DataError):
        ours.pack_command("SET", "k", value)


def test_a_unix_socket_packs_in_c_too() -> None:
    client = connect("unix:///tmp/none.sock")
    assert issubclass(client.connection_pool.connection_class, UnixDomainSocketConnection)
    assert client.connection_pool.connection_class is not UnixDomainSocketConnection


def test_other_connections_are_left_alone() -> None:
    class Mine(Connection):
        pass

    client = Redis(connection_pool=ConnectionPool(connection_class=Mine))
    assert packed_in_c(client).connection_pool.connection_class is Mine
