"""Which Redis errors a consumer rides out with backoff (an outage) and which are final."""

from __future__ import annotations

import pytest
from redis.exceptions import BusyLoadingError, ConnectionError, NoScriptError, ResponseError

from frontier.connection import is_transient


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
