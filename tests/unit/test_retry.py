"""The one retry policy every process shares (frontier/retry.py): its waits are bounded
and jittered, an outage is said in one line however many calls it cuts, only the errors
that mean "Redis is unreachable" are ridden out, and each option (tries, deadline, give
up when stopping) stops where it says."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.exceptions import BusyLoadingError, ConnectionError, NoPermissionError, ResponseError

from invcrawl.frontier.retry import (
    MAX_WAIT_S,
    PAST_DEADLINE,
    STOPPING,
    GaveUp,
    GivenWaits,
    Outage,
    Outages,
    Retry,
    RetryWaits,
    reason,
)


def test_backoff_doubles_to_its_cap_within_its_jitter() -> None:
    for draw in (0.0, 0.5, 1.0):
        backoff = RetryWaits(first=0.1, cap=5.0, jitter=0.25, rng=lambda draw=draw: draw)
        waits = [backoff.next() for _ in range(12)]
        nominal = [min(0.1 * 2**i, 5.0) for i in range(12)]
        for wait, base in zip(waits, nominal, strict=True):
            assert base * 0.75 - 1e-9 <= wait <= min(base * 1.25, 5.0) + 1e-9
        assert max(waits) <= MAX_WAIT_S
    # jittered: two processes cut off together do not come back in lockstep
    low, high = RetryWaits(rng=lambda: 0.0).next(), RetryWaits(rng=lambda: 1.0).next()
    assert (low, high) == (pytest.approx(0.075), pytest.approx(0.125))
    backoff = RetryWaits(rng=lambda: 0.5)
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
    quick = Retry(Outage("r", said.append), waits=lambda: RetryWaits(first=0.001, cap=0.002))
    loading = ResponseError("LOADING Redis is loading the dataset in memory")
    flaky = calls(ConnectionError("down"), BusyLoadingError("loading"), loading, 42)
    assert asyncio.run(quick.call(flaky)) == 42
    assert len(said) == 1 and not quick.outage.down
    with pytest.raises(NoPermissionError):
        asyncio.run(quick.call(calls(NoPermissionError("NOPERM"))))
    with pytest.raises(ResponseError):
        asyncio.run(quick.call(calls(ResponseError("NOGROUP No such key"))))


QUICK = {"waits": lambda: RetryWaits(first=0.001, cap=0.002)}


def test_bounded_tries_raise_the_last_error() -> None:
    tool = Retry(tries=3, **QUICK)
    errors: list[BaseException] = []
    third = ConnectionError("third")
    with pytest.raises(ConnectionError) as raised:
        asyncio.run(
            tool.but(on_error=errors.append).call(
                calls(ConnectionError("1"), ConnectionError("2"), third, 42)
            )
        )
    assert raised.value is third and len(errors) == 3
    assert asyncio.run(tool.call(calls(ConnectionError("1"), 42))) == 42


def test_given_waits_are_taken_in_turn_the_last_kept() -> None:
    waits = GivenWaits(0.1, 0.5)
    assert [waits.next() for _ in range(4)] == [0.1, 0.5, 0.5, 0.5]
    with pytest.raises(ValueError):
        GivenWaits()


def test_a_deadline_or_a_stop_gives_up_and_says_why() -> None:
    past = Retry(deadline=0.0, **QUICK)  # time.monotonic() is past it already
    down = ConnectionError("down")
    with pytest.raises(GaveUp, match=PAST_DEADLINE) as gave_up:
        asyncio.run(past.call(calls(down, 42)))
    assert gave_up.value.__cause__ is down
    stops = iter([False, True])
    stopping = Retry(give_up=lambda: next(stops), **QUICK)
    with pytest.raises(GaveUp, match=STOPPING):
        asyncio.run(stopping.call(calls(down, down, down, 42)))
    # a policy never told to give up rides the errors out
    assert asyncio.run(Retry(**QUICK).call(calls(down, down, 42))) == 42


def test_the_consumers_calls_give_up_only_where_allowed() -> None:
    stats: list[tuple[str, int]] = []
    stopping = [True]
    outages = Outages(lambda name, n: stats.append((name, n)), lambda: stopping[0])
    outages._retry = outages._retry.but(**QUICK)
    down = ConnectionError("down")
    assert asyncio.run(outages.call(calls(down, 42), give_up_when_stopping=True)) is None
    assert asyncio.run(outages.call(calls(down, 42))) == 42  # stopping, but not allowed
    assert asyncio.run(outages.call(calls(down, 42), deadline=0.0)) is None
    assert stats == [("invcrawl/redis_outages", 1)]  # one outage, said and counted once
