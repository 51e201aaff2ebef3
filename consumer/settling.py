"""The one settle step: every claim a consumer took ends here exactly once, whatever
became of its page (committed with its items, retried later, dead-lettered, or given
back because its host is busy), through one fenced Lua call each
(``frontier/delivery.py``). Metrics are fed here (``consumer/metrics.py``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from invcrawl.common.items import Item, PageOutcome, prepare
from invcrawl.consumer.crawls import ServedCrawl, ServedCrawls
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.metrics import Metrics
from invcrawl.consumer.pages import Ending, PageFailure, PagePostponed, PageResult, Settlement
from invcrawl.fetch.failures import Outcome, OutcomeKind, backoff_delay
from invcrawl.frontier.retry import Outages, StatSink
from invcrawl.frontier.values import Claim, CommitResult

log = logging.getLogger("invcrawl.consumer")


@dataclass(frozen=True, slots=True)
class Settled:
    """What became of a settled claim: ``outcome``, and a commit's result (``commit``:
    committed, or fenced, with its counts)."""

    outcome: PageOutcome | Ending
    commit: CommitResult | None = None

    @property
    def committed(self) -> bool:
        return self.commit is not None and self.commit.committed


@dataclass(frozen=True, slots=True)
class PageBackoff:
    """The retry backoff of a failed page (``fetch/failures.backoff_delay``): ``base``
    seconds, doubled per delivery, capped at ``maximum``."""

    base: float
    maximum: float


class Settler:
    def __init__(
        self,
        leases: Leases,
        backoff: PageBackoff,
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

    async def settle(self, page: Settlement) -> Settled:
        """Settle the page's claim, once: a :class:`PageResult` is committed, a
        :class:`PageFailure` retried or dead-lettered, a :class:`PagePostponed` released
        without using a delivery; the claim of a crawl forgotten meanwhile is settled as
        ``forgotten`` (nothing to settle it in), one Redis could not be had for as
        ``abandoned``."""
        claim = page.claim
        if not isinstance(page, PagePostponed):
            if page.fetch_seconds is not None:
                self._metrics.fetched(page.fetch_seconds)
            if isinstance(page, PageFailure):
                if page.internal is not None:
                    log.error("extraction failed on %s", claim.task.url, exc_info=page.internal)
            elif page.extract_seconds is not None:
                self._metrics.extracted(page.extract_seconds)
        served = self._crawls.get(claim.crawl_id)
        if served is None:
            self._held.settled(claim, Ending.FORGOTTEN)
            return Settled(Ending.FORGOTTEN)
        settled = Settled(Ending.ABANDONED)  # until Redis answers
        try:
            if isinstance(page, PagePostponed):
                settled = await self._postpone(served, claim, page.seconds)
            elif isinstance(page, PageFailure):
                settled = await self._fail(served, claim, page.outcome)
            else:
                settled = await self._commit(served, claim, page)
        finally:
            self._held.settled(claim, settled.outcome)
        if isinstance(page, PageFailure):
            self._failed(claim, page.outcome, settled)
        elif isinstance(page, PageResult):
            self._committed(claim, page.items, settled)
        return settled

    async def _commit(self, served: ServedCrawl, claim: Claim, page: PageResult) -> Settled:
        prepared = [prepare(item, served.layout) for item in page.items]
        started = time.perf_counter()
        try:
            result = await self._outages.call(
                lambda: served.session.commit(claim, prepared, page.outcome, page.validators),
                deadline=self._settle_deadline(claim),
            )
        finally:
            self._metrics.committed(time.perf_counter() - started)
        if result is None:
            return Settled(Ending.ABANDONED)
        return Settled(page.outcome if result.committed else Ending.FENCED, result)

    def _committed(self, claim: Claim, items: Sequence[Item], settled: Settled) -> None:
        result = settled.commit
        if result is None:
            return
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

    async def _fail(self, served: ServedCrawl, claim: Claim, outcome: Outcome) -> Settled:
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
        result = await self._outages.call(
            lambda: served.session.fail(
                claim,
                error,
                int(delay * 1000),
                served.max_tries,
                dead_now=outcome.kind == OutcomeKind.DEAD,
            ),
            deadline=self._settle_deadline(claim),
        )
        return Settled(Ending(result.value) if result else Ending.ABANDONED)

    def _failed(self, claim: Claim, outcome: Outcome, settled: Settled) -> None:
        result = settled.outcome
        if result == Ending.ABANDONED:
            return
        if result == Ending.FENCED:
            self._metrics.fenced(claim.crawl_id)
        self._stat(f"invcrawl/{result}", 1)
        level = logging.WARNING if result == Ending.DEAD else logging.INFO
        log.log(
            level,
            "%s: %s -> %s (delivery %d)",
            claim.task.url,
            outcome.reason,
            result,
            claim.deliveries,
        )
        if result == Ending.RETRY:
            self._crawls.wake(claim.crawl_id)

    async def _postpone(self, served: ServedCrawl, claim: Claim, seconds: float) -> Settled:
        """Give the task back without using a delivery, not to be claimed again for
        ``seconds`` (its host is blocked or busy for a while)."""
        released = await self._outages.call(
            lambda: served.session.release(claim, int(seconds * 1000)),
            deadline=self._settle_deadline(claim),
        )
        if released is None:
            return Settled(Ending.ABANDONED)
        return Settled(Ending.POSTPONED if released else Ending.FENCED)

    def _settle_deadline(self, claim: Claim) -> float:
        # Keep trying to settle through a Redis outage; after the hard deadline plus a
        # lease the result would be fenced anyway and the task is reaped instead.
        return claim.claimed_at + self._leases.task_deadline + self._leases.lease
