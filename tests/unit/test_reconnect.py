"""The reconnecting mechanism every long-running reader shares (frontier/reconnect.py):
its waits are bounded and jittered, an outage is said in one line however many calls it
cuts, and only the errors that mean "Redis is unreachable" are ridden out."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.exceptions import BusyLoadingError, ConnectionError, NoPermissionError, ResponseError

from invcrawl.frontier.reconnect import MAX_WAIT_S, Backoff, Outage, Reconnect, reason


def test_backoff_doubles_to_its_cap_within_its_jitter() -> None:
    for draw in (0.0, 0.5, 1.0):
        backoff = Backoff(first=0.1, cap=5.0, jitter=0.25, rng=lambda draw=draw: draw)
        waits = [backoff.next() for _ in range(12)]
        nominal = [min(0.1 * 2**i, 5.0) for i in range(12)]
        for wait, base in zip(waits, nominal, strict=True):
            assert base * 0.75 - 1e-9 <= wait <= min(base * 1.25, 5.0) + 1e-9
        assert max(waits) <= MAX_WAIT_S
    # jittered: two processes cut off together do not come back in lockstep
    low, high = Backoff(rng=lambda: 0.0).next(), Backoff(rng=lambda: 1.0).next()
    assert (low, high) == (pytest.approx(0.075), pytest.approx(0.125))
    backoff = Backoff(rng=lambda: 0.5)
    for _ in range(10):
        backoff.next()
    backoff.reset()
    assert backoff.next() == pytest.approx(0.1)


def test_an_outage_is_said_once() -> None:
    said: list[str] = []
    outage = Outage("export --follow", said.append)
    for _ in range(5):
        outage.lost(ConnectionError("Connection closed by server."))
    outage.over()
    outage.lost(ConnectionError("a connection that died with the server"))  # the same outage
    outage.over()
    assert said == [
        "Redis unavailable (Connection closed by server.): export --follow reconnects with "
        "backoff (at most 5s apart)"
    ]
    later = Outage("x", said.append, same_outage_s=0.0)
    later.lost(ConnectionError("one"))
    later.over()
    later.lost(ConnectionError("two"))
    assert len(said) == 3 and later.outages == 2


def test_reasons_are_one_line_without_password() -> None:
    from invcrawl.process.secrets import register_secret

    register_secret("s3cret-pass")
    text = reason(ConnectionError("Error connecting to\nredis://u:s3cret-pass@host:1"))
    assert "\n" not in text and "s3cret-pass" not in text
    assert reason(ConnectionError()) == "ConnectionError"


def calls(*outcomes: Any) -> Callable[[], Awaitable[Any]]:
    """A call that raises or returns each outcome in turn."""
    left = list(outcomes)

    async def call() -> Any:
        outcome = left.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return call


def test_reconnect_rides_out_transient_errors_only() -> None:
    said: list[str] = []
    quick = Reconnect(Outage("r", said.append), lambda: Backoff(first=0.001, cap=0.002))
    loading = ResponseError("LOADING Redis is loading the dataset in memory")
    flaky = calls(ConnectionError("down"), BusyLoadingError("loading"), loading, 42)
    assert asyncio.run(quick.call(flaky)) == 42
    assert len(said) == 1 and not quick.outage.down
    with pytest.raises(NoPermissionError):
        asyncio.run(quick.call(calls(NoPermissionError("NOPERM"))))
    with pytest.raises(ResponseError):
        asyncio.run(quick.call(calls(ResponseError("NOGROUP No such key"))))


def test_reconnect_with_tries_raises_the_last_transient_error() -> None:
    """A tool call's policy (mcpserver/server.py): at most ``tries`` calls, the last
    transient error raised; a success within them returns as before."""
    made: list[int] = []

    def counted(*outcomes: Any) -> Callable[[], Awaitable[Any]]:
        inner = calls(*outcomes)

        def call() -> Awaitable[Any]:
            made.append(1)
            return inner()

        return call

    bounded = Reconnect(Outage("r", lambda _: None), lambda: Backoff(first=0.001), tries=3)
    down = [ConnectionError(f"down {n}") for n in range(5)]
    with pytest.raises(ConnectionError, match=r"^down 2$"):
        asyncio.run(bounded.call(counted(*down)))
    assert len(made) == 3 and bounded.outage.down
    made.clear()
    assert asyncio.run(bounded.call(counted(ConnectionError("x"), ConnectionError("y"), 7))) == 7
    assert len(made) == 3 and not bounded.outage.down


def test_reconnect_with_a_deadline_begins_no_try_after_it() -> None:
    """A frozen Redis times each try out: past ``deadline_s`` from the first try's start,
    the error is raised instead of a further try (mcpserver/server.py: 10 s, not 30)."""
    now = [0.0]
    made: list[float] = []

    async def frozen() -> Any:
        made.append(now[0])
        now[0] += 10.0  # the client's socket timeout
        raise TimeoutError("Timeout reading from socket")

    bounded = Reconnect(Outage("r", lambda _: None), lambda: Backoff(first=0.001), tries=3,
                        deadline_s=2.0, clock=lambda: now[0])  # fmt: skip
    with pytest.raises(TimeoutError):
        asyncio.run(bounded.call(frozen))
    assert made == [0.0]
    quick = calls(ConnectionError("dropped"), 5)  # a dropped connection: tried again
    assert asyncio.run(bounded.call(quick)) == 5
