"""The one retry policy for Redis calls: what every process does when Redis restarts
(SIGKILLed and reloading its AOF), drops its connection (``CLIENT KILL``, a proxy, a
network blip) or fails over a shard.

* :class:`RetryWaits`: the waits between two tries, 0.1 s doubling to 5 s, each jittered
  by a quarter either way (processes cut off together do not come back in lockstep).
* :class:`Outage`: whether this process has lost Redis, and the one line it says when it
  does (once per outage: a connection that was already dead when Redis came back fails
  once more, which is the same outage); that it is back goes to the log (``-v``).
* :class:`Retry`: runs a Redis call again after each transient error
  (:func:`~invcrawl.frontier.connection.is_transient`; any other error is raised at
  once), with the options each caller needs::

      Retry(outage)                                   # a reader: until it succeeds
      Retry(outage, deadline=t)                       # a task's call: not past its deadline
      Retry(outage, give_up=stopping)                 # not once the process is stopping
      Retry(tries=3, waits=lambda: GivenWaits(0.1, 0.5))  # a tool call: 3 tries

  A policy that gives up on a deadline or ``give_up`` raises :class:`GaveUp`; one out of
  ``tries`` raises the last error. A call retried must be safe to run again: a read, or
  a write that is idempotent or fenced. The client reconnects by itself on the next call
  (redis-py drops a broken connection).
* The long readers (``export --follow``, ``changes --follow``, ``status --watch``, the
  dashboard) share one :func:`reconnect` per process (:class:`Once` for a command that is
  not long-running); the consumer and the producer's host permits go through
  :class:`Outages`, which gives up where its caller allows (stopping, or past a task's
  deadline, when the result would be fenced anyway) and never takes an error for "no
  work" or "finished".
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from invcrawl.frontier.connection import is_transient
from invcrawl.process.secrets import mask_secrets

log = logging.getLogger("invcrawl.reconnect")
consumer_log = logging.getLogger("invcrawl.consumer")
T = TypeVar("T")
Note = Callable[[str], None]
StatSink = Callable[[str, int], None]

FIRST_WAIT_S = 0.1
MAX_WAIT_S = 5.0
JITTER = 0.25  # each wait is drawn within +-25% of its nominal value
SAME_OUTAGE_S = 10.0  # an error this soon after the last one belongs to the same outage


class RetryWaits:
    """The waits of a retry loop: ``first`` doubling to ``cap`` seconds, each drawn
    within ``jitter`` of its nominal value (never above ``cap``)."""

    def __init__(
        self,
        first: float = FIRST_WAIT_S,
        cap: float = MAX_WAIT_S,
        jitter: float = JITTER,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.first = first
        self.cap = cap
        self.jitter = jitter
        self._rng = rng
        self._nominal = first

    def next(self) -> float:
        """The next wait; the one after it is twice as long (up to ``cap``)."""
        nominal = self._nominal
        self._nominal = min(nominal * 2, self.cap)
        spread = 1 + self.jitter * (2 * self._rng() - 1)
        return min(nominal * spread, self.cap)

    def reset(self) -> None:
        self._nominal = self.first

    async def sleep(self) -> None:
        await asyncio.sleep(self.next())


class GivenWaits:
    """Waits given one by one (``GivenWaits(0.1, 0.5)``: 0.1 s, then 0.5 s, then 0.5 s
    again), for a caller whose tries are few and bounded (a tool call)."""

    def __init__(self, *seconds: float) -> None:
        if not seconds:
            raise ValueError("GivenWaits needs at least one wait")
        self._waits = list(seconds)

    def next(self) -> float:
        return self._waits.pop(0) if len(self._waits) > 1 else self._waits[0]

    async def sleep(self) -> None:
        await asyncio.sleep(self.next())


class Waits(Protocol):
    """The waits of one call's retries (:class:`RetryWaits`, :class:`GivenWaits`)."""

    async def sleep(self) -> None: ...


def reason(exc: BaseException) -> str:
    """An error as one line of a note: its text (or its type), no password, no newline."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return mask_secrets(text)


class Outage:
    """One process's view of Redis being unreachable. :meth:`lost` on every transient
    error, :meth:`over` on every success; ``note`` gets one line when an outage begins
    (``what``: who reconnects, for that line)."""

    def __init__(
        self, what: str, note: Note | None = None, same_outage_s: float = SAME_OUTAGE_S
    ) -> None:
        self.what = what
        self._note: Note = note or log.warning
        self.same_outage_s = same_outage_s
        self._since: float | None = None  # the outage under way began then
        self._last_error = -float("inf")
        self.outages = 0  # outages noted since the start

    @property
    def down(self) -> bool:
        return self._since is not None

    def lasting(self) -> float:
        """Seconds the current outage has lasted (0 when Redis answers)."""
        return 0.0 if self._since is None else time.monotonic() - self._since

    def lost(self, exc: BaseException) -> None:
        now = time.monotonic()
        if self._since is None:
            self._since = now
            if now - self._last_error > self.same_outage_s:
                self.outages += 1
                self._note(
                    f"Redis unavailable ({reason(exc)}): {self.what} reconnects with "
                    f"backoff (at most {MAX_WAIT_S:g}s apart)"
                )
        self._last_error = now

    def over(self) -> None:
        if self._since is not None:
            log.info("Redis is back after %.1fs: %s goes on", self.lasting(), self.what)
            self._since = None


class GaveUp(Exception):
    """A :class:`Retry` stopped before the call succeeded: its deadline passed, or its
    ``give_up`` said so (the message says which). The last transient error is its
    ``__cause__``."""


STOPPING, PAST_DEADLINE = "stopping", "past the deadline"


@dataclass(frozen=True)
class Retry:
    """How a Redis call is tried again through an outage (the module's docstring)."""

    outage: Outage | None = None  # says the outage once, sees it over (None: silent)
    deadline: float | None = None  # time.monotonic() past which it gives up
    tries: int | None = None  # at most this many calls (None: unbounded)
    give_up: Callable[[], bool] | None = None  # asked after each error: stop now?
    waits: Callable[[], Waits] = RetryWaits  # a fresh sequence for each call
    on_error: Callable[[BaseException], None] | None = None  # every transient error

    def but(self, **options: Any) -> Retry:
        """The same policy (and outage) with other options: ``retry.but(deadline=t)``."""
        return dataclasses.replace(self, **options)

    async def call(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``'s result, tried again after a wait of :attr:`waits` on each
        transient error; any other error is raised, and so is the last one after
        ``tries``. Raises :class:`GaveUp` past ``deadline`` or once ``give_up()``."""
        waits = self.waits()
        tried = 0
        while True:
            try:
                result = await call()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                tried += 1
                if self.on_error is not None:
                    self.on_error(exc)
                if self.outage is not None:
                    self.outage.lost(exc)
                if self.tries is not None and tried >= self.tries:
                    raise
                if self.give_up is not None and self.give_up():
                    raise GaveUp(STOPPING) from exc
                if self.deadline is not None and time.monotonic() > self.deadline:
                    raise GaveUp(PAST_DEADLINE) from exc
                await waits.sleep()
                continue
            if self.outage is not None:
                self.outage.over()
            return result


class Calls(Protocol):
    """How a reader makes its Redis calls: through outages (:class:`Retry`) or once
    (:class:`Once`)."""

    async def call(self, call: Callable[[], Awaitable[T]]) -> T: ...


class Once:
    """A :class:`Retry` that does not: the call is made once (a command that is not
    long-running fails on an outage)."""

    async def call(self, call: Callable[[], Awaitable[T]]) -> T:
        return await call()


def reconnect(what: str, note: Note | None = None) -> Retry:
    """A reader's policy: every call until it succeeds, the outages said as ``what``
    (``"export --follow"``...). Share one per process: an outage is said once, however
    many calls it cut."""
    return Retry(Outage(what, note))


class Outages:
    """The consumer's (and the producer's host permits') Redis calls: :meth:`call`
    gives up only where its caller allows, counting each outage in ``stat``."""

    def __init__(
        self,
        stat: StatSink,
        stopping: Callable[[], bool],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.stat = stat
        self._stopping = stopping
        self._on_error = on_error  # every transient error (metrics), not only the first
        self._outage = Outage("the consumer", self._began)
        self._retry = Retry(self._outage, on_error=on_error)

    def _began(self, line: str) -> None:
        consumer_log.warning("%s", line)
        self.stat("invcrawl/redis_outages", 1)

    async def call(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        give_up_when_stopping: bool = False,
    ) -> T | None:
        """Run a Redis call, backing off through outages. Returns None only when giving
        up is allowed (``give_up_when_stopping`` while stopping, or past ``deadline``)."""
        retry = self._retry.but(
            deadline=deadline, give_up=self._stopping if give_up_when_stopping else None
        )
        try:
            return await retry.call(call)
        except GaveUp as gave_up:
            if deadline is not None and str(gave_up) == PAST_DEADLINE:
                consumer_log.warning(
                    "giving up on a Redis call after the task deadline: %s", gave_up.__cause__
                )
            return None

    def lasting(self) -> float:
        """Seconds the current outage has lasted (0 when Redis is up)."""
        return self._outage.lasting()

    def note(self, exc: BaseException) -> None:
        """A transient error met outside :meth:`call` (the heartbeat's own loop)."""
        if self._on_error is not None:
            self._on_error(exc)
        self._outage.lost(exc)

    def over(self) -> None:
        self._outage.over()


def new_stat_sink(get_stats: Callable[[], Any]) -> StatSink:
    """A stat sink on a Scrapy stats collector that exists only once the crawl starts."""

    def inc(name: str, n: int) -> None:
        stats = get_stats()
        if stats is not None:
            stats.inc_value(name, n)

    return inc
