"""The consumer's delivery loop, independent of Scrapy.

A :class:`Worker` serves a set of crawls (every open crawl in Redis, or the ones it is
pinned to: ``consumer/crawls.py``): it claims tasks within its capacity, spread over the
crawls by :class:`~consumer.scheduling.CrawlRotation`, holds them
(``consumer/holdings.py``) while a heartbeat beside page work renews their leases and
reaps expired ones (``consumer/heartbeat.py``), settles every task exactly once (commit,
retry, dead-letter or release), and rides out Redis outages with backoff. Runs on the
reactor's asyncio loop; never blocks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
import traceback
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

from common.config import Config
from common.items import CrawlInfo, PageOutcome, prepare
from consumer.crawls import ServedCrawl, ServedCrawls
from consumer.heartbeat import Heartbeat
from consumer.holdings import Holdings
from consumer.metrics import Metrics
from fetch.failures import Outcome, backoff_delay
from fetch.outages import Outages, StatSink
from fetch.politeness import HostGate
from frontier.session import Claim, CommitResult, CrawlNotFound, Frontier
from frontier.states import ProducerState

log = logging.getLogger("invcrawl.consumer")


class Upstream(Protocol):
    """A producer this consumer waits for (``produce --consume``): until it is done, an
    earlier run's finished state must not end the feed (a re-run may add pages)."""

    def poll(self) -> tuple[bool, str | None]:
        """(finished, error line)."""
        ...


class Worker:
    """Composes the crawls it serves (:class:`~consumer.crawls.ServedCrawls`), the claims
    it holds (:class:`~consumer.holdings.Holdings`), its heartbeat
    (:class:`~consumer.heartbeat.Heartbeat`) and its side of host politeness
    (:class:`~fetch.politeness.HostGate`); feeds claims and settles them."""

    def __init__(
        self,
        frontier: Frontier,
        config: Config,
        stat: StatSink | None = None,
        upstream: Upstream | None = None,
        consumer_id: str | None = None,
        *,
        metrics: Metrics | None = None,
    ) -> None:
        self.frontier = frontier
        self.config = config
        self.id = consumer_id or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
        self.stat: StatSink = stat or (lambda name, n: None)
        # Where things settle, for Prometheus (consume --metrics-port; else a no-op).
        self.metrics = metrics or Metrics()
        self.upstream = upstream
        self.stopping = False
        self.fatal: str | None = None  # set when the feed dies of a non-transient error
        self.outages = Outages(
            self.stat, lambda: self.stopping, on_error=lambda exc: self.metrics.redis_error()
        )
        self.hosts = HostGate(
            frontier.hosts,
            self.id,
            limit=config.host_concurrency,
            delay=config.host_delay,
            lease=config.lease,
            outages=self.outages,
        )
        self.held = Holdings(self.metrics, self.stat, on_settled=self._settled)
        self.crawls = ServedCrawls(frontier, config, self.id, self.outages, self.held)
        self.heartbeat = Heartbeat(
            frontier,
            config,
            self.id,
            hosts=self.hosts,
            crawls=self.crawls,
            held=self.held,
            outages=self.outages,
            stat=self.stat,
        )
        self._wake = asyncio.Event()

    # -- lifecycle -----------------------------------------------------------------------

    def request_stop(self) -> None:
        """Graceful stop (SIGTERM): claim nothing more; in-flight pages finish."""
        if not self.stopping and self.held:
            log.warning("stopping: finishing %d in-flight page(s)", len(self.held))
        self.stopping = True
        self._wake.set()

    async def close(self) -> None:
        """Release what is still held (cancelled downloads), deregister, stop beating."""
        self.heartbeat.stop()
        for claim in self.held:
            served = self.crawls.get(claim.crawl_id)
            try:
                if served is not None:
                    await served.session.release(claim)
                    self.stat("invcrawl/released", 1)
            except Exception as exc:  # the lease will expire and be reaped instead
                log.warning("could not release %s: %s", claim.task.id, exc)
            self.held.settled(claim, "released")
        with contextlib.suppress(Exception):  # else they expire after one lease
            await self.hosts.close()
        await self.crawls.close()
        try:
            await self.frontier.registry.leave_fleet(self.id)
        except Exception as exc:  # it ages out of the list by its heartbeat instead
            log.debug("could not leave the fleet list: %s", exc)
        await self.frontier.aclose()

    def crawl_info(self, claim: Claim) -> CrawlInfo:
        served = self.crawls.get(claim.crawl_id)
        assert served is not None
        return served.info

    # -- the feed ------------------------------------------------------------------------

    async def feed(self) -> AsyncIterator[Claim]:
        """Yield claimed tasks, never more than ``concurrency`` held at once. Ends when
        stopping, or when there is nothing left to serve (pinned crawls complete, or
        ``burst`` and every open crawl complete)."""
        try:
            # Listed in the fleet at once, serving a crawl or not (status, dashboard).
            await self.outages.call(self.heartbeat.beat_fleet, give_up_when_stopping=True)
            self.heartbeat.start()
            while not self.stopping:
                upstream_busy = await self._poll_upstream()
                await self._discover()
                if not upstream_busy and self.crawls.all_done():
                    return
                free = self.config.concurrency - len(self.held)
                # With pages in hand, claim once a quarter of the room is free: one claim
                # (a Redis round trip and a script run) then brings several pages, not one.
                wanted = max(1, self.config.concurrency // 4) if self.held else 1
                if free < wanted or self.held.isolated():
                    await self._sleep(1.0)
                    continue
                claims = await self._claim_turn(free)
                for claim in claims:
                    yield claim
                if not upstream_busy:
                    await self.crawls.retire_complete()
                    if self.crawls.all_done():  # at once, not after an idle sleep
                        return
                if not claims:  # until a crawl is worth asking again, or the next look
                    await self._sleep(self.crawls.idle_for())
        except Exception as exc:
            self.fatal = f"{type(exc).__name__}: {exc}"
            raise

    async def _discover(self) -> None:
        for served in await self.crawls.discover(upstream=self.upstream is not None):
            await self.outages.call(lambda s=served: self.heartbeat.beat_crawl(s))  # type: ignore[misc]
            self.heartbeat.start()

    async def _poll_upstream(self) -> bool:
        """Whether a producer we wait for is still running. A site it could not read is a
        failed crawl, not our concern; but a producer that died before it settled a crawl
        leaves it unable to complete: stop, so that our supervisor produces it again."""
        if self.upstream is None:
            return False
        finished, error = self.upstream.poll()
        if not finished:
            return True
        self.upstream = None
        if error:
            for crawl_id in self.crawls.pinned:
                session = self.frontier.crawl(crawl_id)
                producer = await self.outages.call(
                    lambda s=session: s.meta_field("producer")  # type: ignore[misc]
                )
                if producer in (None, ProducerState.RUNNING):
                    log.error("the producer stopped before crawl %s was produced", crawl_id)
                    self.request_stop()
                elif producer == ProducerState.FAILED:
                    await self.crawls.leave_failed(crawl_id)
        return False

    async def _claim_turn(self, free: int) -> list[Claim]:
        claims: list[Claim] = []
        held_per_host = self.held.per_host(self.crawls.origin)
        for served, turn in self.crawls.turns(free):
            # Politeness steers the claims: no page of a host that cannot take a request
            # soon, and no more pages of a host than could be in flight on it at once;
            # other hosts' pages meanwhile.
            if self.hosts.unavailable_for(served.origin) > 0:
                self.crawls.host_busy(served.crawl_id, turn)
                continue
            room = self.hosts.room(served.origin, held_per_host.get(served.origin, 0))
            asked = min(turn, room)
            if asked < 1:
                continue
            got = await self._claim(served, asked)
            self.crawls.claimed(served.crawl_id, asked, len(got))
            held_per_host[served.origin] = held_per_host.get(served.origin, 0) + len(got)
            claims += got
        self.held.add(claims)
        return claims

    async def _claim(self, served: ServedCrawl, n: int) -> list[Claim]:
        """Claim from the slots we own; with nothing there, help with the others."""
        claims = await self._claim_slots(served, served.slots.claim_order(), n)
        if not claims:
            claims = await self._claim_slots(served, served.slots.steal_order(), n)
            if claims:
                self.stat("invcrawl/stolen", len(claims))
        return claims

    async def _claim_slots(self, served: ServedCrawl, slots: list[int], n: int) -> list[Claim]:
        if not slots:
            return []
        busy = bool(self.held)

        async def claim() -> list[Claim]:
            return await served.session.claim(self.id, slots, n, busy, self.config.lease_ms)

        try:
            return await self.outages.call(claim, give_up_when_stopping=True) or []
        except CrawlNotFound:
            await self.crawls.forgotten(served.crawl_id)
            return []

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=max(seconds, 0.01))

    # -- settling ------------------------------------------------------------------------

    async def commit(
        self,
        claim: Claim,
        items: Sequence[Mapping[str, Any]],
        outcome: PageOutcome,
        validators: str = "",
    ) -> CommitResult | None:
        served = self.crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile: nothing to commit to
            self.held.settled(claim, "forgotten")
            return None
        prepared = [prepare(item, served.buckets) for item in items]
        settled_as, started = "abandoned", time.perf_counter()  # abandoned: gave up on Redis
        try:
            result = await self.outages.call(
                lambda: served.session.commit(claim, prepared, outcome, validators),
                deadline=self._settle_deadline(claim),
            )
            if result is not None:
                settled_as = str(outcome) if result.committed else "fenced"
        finally:
            self.metrics.committed(time.perf_counter() - started)
            self.held.settled(claim, settled_as)
        if result is None:
            return None
        if result.committed:
            self.stat("invcrawl/pages_done", 1)
            self.stat("invcrawl/items_new", result.new)
            self.stat("invcrawl/items_updated", result.updated)
            self.stat("invcrawl/items_unchanged", result.unchanged)
            self.metrics.items_committed(claim.crawl_id, items, result)
        else:
            self.stat("invcrawl/fenced", 1)
            self.metrics.fenced(claim.crawl_id)
            log.warning(
                "commit of %s fenced (%s): another delivery owns it",
                claim.task.url,
                "lease expired" if result.expired else "lease lost",
            )
        return result

    async def fail(self, claim: Claim, outcome: Outcome, dead_now: bool = False) -> str | None:
        served = self.crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile
            self.held.settled(claim, "forgotten")
            return None
        delay = backoff_delay(
            claim.deliveries, self.config.backoff_base, self.config.backoff_max, outcome.retry_after
        )
        error = {
            "reason": outcome.reason,
            "error": outcome.reason,
            "url": claim.task.url,
            "consumer": self.id,
            "delivery": claim.deliveries,
        }
        settled_as = "abandoned"
        try:
            result = await self.outages.call(
                lambda: served.session.fail(
                    claim,
                    error,
                    int(delay * 1000),
                    served.max_tries,
                    dead_now=dead_now or outcome.kind == "dead",
                ),
                deadline=self._settle_deadline(claim),
            )
            settled_as = result or settled_as
        finally:
            self.held.settled(claim, settled_as)
        if result == "fenced":
            self.metrics.fenced(claim.crawl_id)
        if result:
            self.stat(f"invcrawl/{result}", 1)
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
                self.crawls.wake(claim.crawl_id)
        return result

    async def postpone(self, claim: Claim, seconds: float) -> bool | None:
        """Give the task back without using a delivery, not to be claimed again for
        ``seconds`` (its host is blocked or busy for a while)."""
        served = self.crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile
            self.held.settled(claim, "forgotten")
            return None
        released: bool | None = None
        try:
            released = await self.outages.call(
                lambda: served.session.release(claim, int(seconds * 1000)),
                deadline=self._settle_deadline(claim),
            )
            return released
        finally:
            outcomes = {True: "postponed", False: "fenced", None: "abandoned"}
            self.held.settled(claim, outcomes[released])

    async def fail_with_exception(self, claim: Claim, exc: BaseException) -> None:
        """An unexpected error in our own code is deterministic: dead-letter at once with
        the traceback's last line, rather than burn retries on it."""
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        log.error("extraction failed on %s", claim.task.url, exc_info=exc)
        await self.fail(claim, Outcome("dead", f"internal error: {text[:500]}"), dead_now=True)

    def _settled(self, claim: Claim) -> None:
        """A claim left the holdings: make room for the next claims."""
        if not self.held.holds_crawl(claim.crawl_id):
            self.crawls.emptied(claim.crawl_id)
        self._wake.set()

    def _settle_deadline(self, claim: Claim) -> float:
        # Keep trying to settle through a Redis outage; after the hard deadline plus a
        # lease the result would be fenced anyway and the task is reaped instead.
        return claim.claimed_at + self.config.task_deadline + self.config.lease
