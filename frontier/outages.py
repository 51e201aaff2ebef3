"""Riding out Redis outages in a consumer (and the producer's host permits): a call that
meets an outage backs off (``frontier/reconnect.Backoff``: 0.1 s doubling to 5 s,
jittered) and is tried again. It never treats an error as "no work" or "finished"; it
gives up only where the caller allows it (stopping, or past a task's deadline, when the
result would be fenced anyway). The outage is said once (``frontier/reconnect.Outage``),
as every long-running reader says it."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from invcrawl.frontier.connection import is_transient
from invcrawl.frontier.reconnect import Backoff, Outage

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
        self._outage = Outage("the consumer", log.warning)

    async def call(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        give_up_when_stopping: bool = False,
    ) -> T | None:
        """Run a Redis call, backing off through outages. Returns None only when giving
        up is allowed (``give_up_when_stopping`` while stopping, or past ``deadline``)."""
        backoff = Backoff()
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
                await backoff.sleep()
                continue
            self.over()
            return result

    def lasting(self) -> float:
        """Seconds the current outage has lasted (0 when Redis is up)."""
        return self._outage.lasting()

    def note(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(exc)
        noted = self._outage.outages
        self._outage.lost(exc)
        if self._outage.outages > noted:
            self.stat("invcrawl/redis_outages", 1)

    def over(self) -> None:
        self._outage.over()


def new_stat_sink(get_stats: Callable[[], Any]) -> StatSink:
    """A stat sink on a Scrapy stats collector that exists only once the crawl starts."""

    def inc(name: str, n: int) -> None:
        stats = get_stats()
        if stats is not None:
            stats.inc_value(name, n)

    return inc
