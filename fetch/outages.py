"""Riding out Redis outages: a consumer that loses Redis backs off (0.1 s doubling to
5 s) and retries the same call. It never treats an error as "no work" or "finished";
it gives up only where the caller allows it (stopping, or past a task's deadline, when
the result would be fenced anyway)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from frontier.connection import is_transient

log = logging.getLogger("invcrawl.consumer")
T = TypeVar("T")

StatSink = Callable[[str, int], None]


class Outages:
    def __init__(
        self,
        stat: StatSink,
        stopping: Callable[[], bool],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.stat = stat
        self._stopping = stopping
        self._on_error = on_error  # every transient error (metrics), not only the first
        self._since: float | None = None

    async def call(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        give_up_when_stopping: bool = False,
    ) -> T | None:
        """Run a Redis call, backing off through outages. Returns None only when giving
        up is allowed (``give_up_when_stopping`` while stopping, or past ``deadline``)."""
        delay = 0.1
        while True:
            try:
                result = await call()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self.note(exc)
                if give_up_when_stopping and self._stopping():
                    return None
                if deadline is not None and time.monotonic() > deadline:
                    log.warning("giving up on a Redis call after the task deadline: %s", exc)
                    return None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self.over()
            return result

    def lasting(self) -> float:
        """Seconds the current outage has lasted (0 when Redis is up)."""
        return 0.0 if self._since is None else time.monotonic() - self._since

    def note(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(exc)
        if self._since is None:
            self._since = time.monotonic()
            self.stat("invcrawl/redis_outages", 1)
            log.warning("Redis unavailable (%s); backing off and retrying", exc)

    def over(self) -> None:
        if self._since is not None:
            log.warning("Redis is back after %.1fs", time.monotonic() - self._since)
            self._since = None


def new_stat_sink(get_stats: Callable[[], Any]) -> StatSink:
    """A stat sink on a Scrapy stats collector that exists only once the crawl starts."""

    def inc(name: str, n: int) -> None:
        stats = get_stats()
        if stats is not None:
            stats.inc_value(name, n)

    return inc
