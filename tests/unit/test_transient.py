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


def test_a_socket_layer_error_of_a_closed_connection_is_an_outage() -> None:
    """redis-py's asyncio client writing on a connection another task disconnected (its
    writer gone, as when a Redis Cluster node is killed mid-crawl) raises the transport's
    AttributeError, not ConnectionError: an outage all the same. The same error raised
    anywhere else is a bug, final."""
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
    assert isinstance(exc, AttributeError)
    assert is_transient(exc)
    try:
        None.writelines([])  # type: ignore[attr-defined]
    except AttributeError as ours:
        assert not is_transient(ours)
