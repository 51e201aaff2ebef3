"""The one settle step: every claim a consumer took ends here exactly once, whatever
became of its page (committed with its items, retried later, dead-lettered, or given
back because its host is busy), through one fenced Lua call each
(``frontier/session.py``). Metrics are fed here (``consumer/metrics.py``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.items import PageOutcome, prepare
from consumer.crawls import ServedCrawls
from consumer.holdings import Holdings
from consumer.leases import Leases
from consumer.metrics import Metrics
from consumer.pages import PageFailure, PagePostponed, Settlement
from fetch.failures import Outcome, backoff_delay
from frontier.outages import Outages, StatSink
from frontier.values import Claim, CommitResult

log = logging.getLogger("invcrawl.consumer")


@dataclass(frozen=True, slots=True)
class Backoff:
    """The retry backoff of a failed page (``fetch/failures.backoff_delay``): ``base``
    seconds, doubled per delivery, capped at ``maximum``."""

    base: float
    maximum: float


class Settler:
    def __init__(
        self,
        leases: Leases,
        backoff: Backoff,
        consumer_id: str,
        *,
        crawls: ServedCrawls,
        held: Holdings,
        outages: Outages,
        metrics: Metrics,
        stat: StatSink,
    ) -> None:
        self._leases = leases
        self._backoff = backoff
        self._consumer_id = consumer_id
        self._crawls = crawls
        self._held = held
        self._outages = outages
        self._metrics = metrics
        self._stat = stat

    async def settle(self, page: Settlement) -> CommitResult | str | bool | None:
        """Settle the page's claim: a :class:`PageResult` is committed (its result, None
        if the crawl is gone or Redis could not be had), a :class:`PageFailure` retried
        or dead-lettered (``retry``, ``dead``, ``fenced`` or None), a
        :class:`PagePostponed` released without using a delivery (True; False: fenced)."""
        if isinstance(page, PagePostponed):
            return await self._postpone(page.claim, page.seconds)
        if page.fetch_seconds is not None:
            self._metrics.fetched(page.fetch_seconds)
        if isinstance(page, PageFailure):
            if page.internal is not None:
                log.error("extraction failed on %s", page.claim.task.url, exc_info=page.internal)
            return await self._fail(page.claim, page.outcome)
        if page.extract_seconds is not None:
            self._metrics.extracted(page.extract_seconds)
        return await self._commit(page.claim, page.items, page.outcome, page.validators)

    async def _commit(
        self,
        claim: Claim,
        items: Sequence[Mapping[str, Any]],
        outcome: PageOutcome,
        validators: str = "",
    ) -> CommitResult | None:
        served = self._crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile: nothing to commit to
            self._held.settled(claim, "forgotten")
            return None
        prepared = [prepare(item, served.buckets) for item in items]
        settled_as, started = "abandoned", time.perf_counter()  # abandoned: gave up on Redis
        try:
            result = await self._outages.call(
                lambda: served.session.commit(claim, prepared, outcome, validators),
                deadline=self._settle_deadline(claim),
            )
            if result is not None:
                settled_as = str(outcome) if result.committed else "fenced"
        finally:
            self._metrics.committed(time.perf_counter() - started)
            self._held.settled(claim, settled_as)
        if result is None:
            return None
        if result.committed:
            self._stat("invcrawl/pages_done", 1)
            self._stat("invcrawl/items_new", result.new)
            self._stat("invcrawl/items_updated", result.updated)
            self._stat("invcrawl/items_unchanged", result.unchanged)
            self._metrics.items_committed(claim.crawl_id, items, result)
        else:
            self._stat("invcrawl/fenced", 1)
            self._metrics.fenced(claim.crawl_id)
            log.warning(
                "commit of %s fenced (%s): another delivery owns it",
                claim.task.url,
                "lease expired" if result.expired else "lease lost",
            )
        return result

    async def _fail(self, claim: Claim, outcome: Outcome) -> str | None:
        served = self._crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile
            self._held.settled(claim, "forgotten")
            return None
        delay = backoff_delay(
            claim.deliveries,
            self._backoff.base,
            self._backoff.maximum,
            outcome.retry_after,
        )
        error = {
            "reason": outcome.reason,
            "error": outcome.reason,
            "url": claim.task.url,
            "consumer": self._consumer_id,
            "delivery": claim.deliveries,
        }
        settled_as = "abandoned"
        try:
            result = await self._outages.call(
                lambda: served.session.fail(
                    claim,
                    error,
                    int(delay * 1000),
                    served.max_tries,
                    dead_now=outcome.kind == "dead",
                ),
                deadline=self._settle_deadline(claim),
            )
            settled_as = result or settled_as
        finally:
            self._held.settled(claim, settled_as)
        if result == "fenced":
            self._metrics.fenced(claim.crawl_id)
        if result:
            self._stat(f"invcrawl/{result}", 1)
            level = logging.WARNING if result == "dead" else logging.INFO
            log.log(
                level,
                "%s: %s -> %s (delivery %d)",
                claim.task.url,
                outcome.reason,
                result,
                claim.deliveries,
            )
            if result == "retry":
                self._crawls.wake(claim.crawl_id)
        return result

    async def _postpone(self, claim: Claim, seconds: float) -> bool | None:
        """Give the task back without using a delivery, not to be claimed again for
        ``seconds`` (its host is blocked or busy for a while)."""
        served = self._crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile
            self._held.settled(claim, "forgotten")
            return None
        released: bool | None = None
        try:
            released = await self._outages.call(
                lambda: served.session.release(claim, int(seconds * 1000)),
                deadline=self._settle_deadline(claim),
            )
            return released
        finally:
            outcomes = {True: "postponed", False: "fenced", None: "abandoned"}
            self._held.settled(claim, outcomes[released])

    def _settle_deadline(self, claim: Claim) -> float:
        # Keep trying to settle through a Redis outage; after the hard deadline plus a
        # lease the result would be fenced anyway and the task is reaped instead.
        return claim.claimed_at + self._leases.task_deadline + self._leases.lease
