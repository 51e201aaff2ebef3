"""Riding out Redis outages: what every long-running process does when Redis restarts
(SIGKILLed and reloading its AOF), drops its connection (``CLIENT KILL``, a proxy, a
network blip) or fails over a shard.

* :class:`Backoff`: the waits between two tries, 0.1 s doubling to 5 s, each jittered by
  a quarter either way (processes cut off together do not come back in lockstep), back
  to 0.1 s after a success.
* :class:`Outage`: whether this process has lost Redis, and the one line it says when it
  does (once per outage: a connection that was already dead when Redis came back fails
  once more, which is the same outage); that it is back goes to the log (``-v``).
* :class:`Reconnect`: runs a Redis call again through an outage, with both, until it
  succeeds; the calls a long reader makes (``export --follow``, ``changes --follow``,
  ``status --watch``, the dashboard) go through one per process; an MCP server's tool
  calls through one that gives up after a few ``tries`` (a tool answers its error). A call
  retried must be safe to run again: a read, or a write that is idempotent (``XACK``).
  The client reconnects by itself on the next call (redis-py drops a broken connection).

The consumer's calls go through ``frontier/outages.Outages``, built on the same
:class:`Backoff` and :func:`~invcrawl.frontier.connection.is_transient`: it gives up where its
caller allows (a task past its deadline), which a reader never does.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from invcrawl.frontier.connection import is_transient
from invcrawl.process.secrets import mask_secrets

log = logging.getLogger("invcrawl.reconnect")
T = TypeVar("T")
Note = Callable[[str], None]

FIRST_WAIT_S = 0.1
MAX_WAIT_S = 5.0
JITTER = 0.25  # each wait is drawn within +-25% of its nominal value
SAME_OUTAGE_S = 10.0  # an error this soon after the last one belongs to the same outage


class Backoff:
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


class Reconnect:
    """Runs a reader's Redis calls through outages (:meth:`call`): share one per process,
    so that an outage is said once, however many calls it cut."""

    def __init__(
        self,
        outage: Outage,
        backoff: Callable[[], Backoff] = Backoff,
        tries: int | None = None,
        deadline_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.outage = outage
        self._backoff = backoff
        self.tries = tries  # None: until it succeeds; N: the Nth transient error is raised
        # None: no deadline; S: no try begins S seconds or more after the first began
        self.deadline_s = deadline_s
        self._clock = clock

    async def call(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``'s result, trying again after each transient error (after a wait of
        :class:`Backoff`) until it succeeds, or at most ``tries`` times in all, none
        begun ``deadline_s`` after the first (the last error raised: an MCP tool call
        answers, a long reader waits); any other error is raised."""
        backoff = self._backoff()
        tried, started = 0, self._clock()
        while True:
            try:
                result = await call()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self.outage.lost(exc)
                tried += 1
                if self.tries is not None and tried >= self.tries:
                    raise
                if self.deadline_s is not None and self._clock() - started >= self.deadline_s:
                    raise
                await backoff.sleep()
                continue
            self.outage.over()
            return result


class Calls(Protocol):
    """How a reader makes its Redis calls: through outages (:class:`Reconnect`) or once
    (:class:`Once`)."""

    async def call(self, call: Callable[[], Awaitable[T]]) -> T: ...


class Once:
    """A :class:`Reconnect` that does not: the call is made once (a command that is not
    long-running fails on an outage)."""

    async def call(self, call: Callable[[], Awaitable[T]]) -> T:
        return await call()


def reconnect(what: str, note: Note | None = None) -> Reconnect:
    """A :class:`Reconnect` whose notes name ``what`` (``"export --follow"``...)."""
    return Reconnect(Outage(what, note))
