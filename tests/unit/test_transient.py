"""Which Redis errors a consumer rides out with backoff (an outage) and which are final."""

from __future__ import annotations

import pytest
from redis.exceptions import BusyLoadingError, ConnectionError, NoScriptError, ResponseError

from invcrawl.frontier.connection import is_transient


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
        BusyLoadingError("Redis is loading the dataset in memory"),
        ResponseError("LOADING Redis is loading the dataset in memory"),
        ResponseError("TRYAGAIN Multiple keys request during rehashing of slot"),
        # another client's long script: the command was refused, not run
        ResponseError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or"),
        OSError("Network is unreachable"),
    ],
)
def test_outages(exc: BaseException) -> None:
    assert is_transient(exc)


@pytest.mark.parametrize(
    "exc",
    [
        ResponseError("NOPERM this user has no permissions to run the 'xadd' command"),
        ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        ResponseError("BUSYGROUP Consumer Group name already exists"),
        NoScriptError("NOSCRIPT No matching script."),
        ValueError("not Redis at all"),
    ],
)
def test_final_errors(exc: BaseException) -> None:
    assert not is_transient(exc)


def test_a_write_on_a_closed_connection_is_an_outage() -> None:
    """redis-py's asyncio client writing on a connection another task disconnected (its
    writer gone, as when a Redis Cluster node is killed mid-crawl): redis-py 8 raises
    ConnectionError, older releases the transport's AttributeError (redis-py #4287).
    Either way the command was not delivered: an outage."""
    import asyncio

    from redis.asyncio.connection import Connection

    async def write_on_a_closed_connection() -> BaseException:
        connection = Connection()
        try:
            await connection._send_packed_command([b"PING\r\n"])
        except Exception as exc:
            return exc
        raise AssertionError("a write without a writer went through")

    exc = asyncio.run(write_on_a_closed_connection())
    assert isinstance(exc, (ConnectionError, AttributeError))
    assert is_transient(exc)


@pytest.mark.parametrize("error", ["AttributeError", "TypeError"])
@pytest.mark.parametrize(
    "where, outage",
    [
        ("site-packages/redis/asyncio/connection.py", True),
        ("lib/python3.11/asyncio/streams.py", True),
        ("lib/python3.11/asyncio/selector_events.py", True),
        ("invcrawl/frontier/commit.py", False),
    ],
)
def test_a_transport_error_is_an_outage_only_where_the_socket_is_written(
    error: str, where: str, outage: bool
) -> None:
    """The transport's own AttributeError or TypeError (``'NoneType' object has no
    attribute 'writelines'``), raised in redis-py's or asyncio's socket code, is an
    outage; the same error raised anywhere else is a bug, final."""
    code = compile(
        "None.writelines([])" if error == "AttributeError" else "f = None\nf()", where, "exec"
    )
    try:
        exec(code, {})
    except (AttributeError, TypeError) as exc:
        assert is_transient(exc) is outage
    else:
        raise AssertionError("the statement raised nothing")
