"""The consumer's delivery loop, independent of Scrapy.

A :class:`Worker` serves a set of crawls (every open crawl in Redis, or the ones it is
pinned to: ``consumer/crawls.py``): it claims tasks within its capacity, spread over the
crawls by :class:`~invcrawl.consumer.scheduling.CrawlRotation`, holds them
(``consumer/holdings.py``) while a heartbeat beside page work renews their leases and
reaps expired ones (``consumer/heartbeat.py``), settles every task exactly once (commit,
retry, dead-letter or release: ``consumer/settling.py``), and rides out Redis outages
with backoff. Runs on the reactor's asyncio loop; never blocks it. Nothing but its runner
(``consumer/run.py``) imports it: the spider and the pipeline know it by the protocols of
``consumer/pages.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from invcrawl.consumer.crawls import ServedCrawl, ServedCrawls, Serving
from invcrawl.consumer.heartbeat import Heartbeat
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.metrics import Metrics
from invcrawl.consumer.pages import ClaimedPage, Ending, Settlement
from invcrawl.consumer.settling import PageBackoff, Settled, Settler
from invcrawl.fetch.politeness import HostGate
from invcrawl.frontier.claims import claim_many
from invcrawl.frontier.retry import Outages, StatSink
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.states import ProducerState
from invcrawl.frontier.values import Claim

log = logging.getLogger("invcrawl.consumer")


class Upstream(Protocol):
    """A producer this consumer waits for (``produce --consume``): until it is done, an
    earlier run's finished state must not end the feed (a re-run may add pages)."""

    def poll(self) -> tuple[bool, str | None]:
        """(finished, error line)."""
        ...


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """A worker's settings, and those of the components it composes."""

    concurrency: int  # pages held at once
    host_concurrency: int  # permits per host, shared by the fleet (fetch/politeness.py)
    host_delay: float
    leases: Leases
    backoff: PageBackoff
    serving: Serving


class Worker:
    """Composes the crawls it serves (:class:`~invcrawl.consumer.crawls.ServedCrawls`), the claims
    it holds (:class:`~invcrawl.consumer.holdings.Holdings`), its heartbeat
    (:class:`~invcrawl.consumer.heartbeat.Heartbeat`) and its side of host politeness
    (:class:`~invcrawl.fetch.politeness.HostGate`); feeds claims and settles them."""

    def __init__(
        self,
        frontier: Frontier,
        settings: WorkerSettings,
        stat: StatSink | None = None,
        upstream: Upstream | None = None,
        consumer_id: str | None = None,
        *,
        metrics: Metrics | None = None,
    ) -> None:
        self.frontier = frontier
        self.settings = settings
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
            limit=settings.host_concurrency,
            delay=settings.host_delay,
            lease=settings.leases.lease,
            outages=self.outages,
        )
        self.held = Holdings(self.metrics, self.stat, on_settled=self._settled)
        self.crawls = ServedCrawls(
            frontier,
            self.id,
            serving=settings.serving,
            leases=settings.leases,
            outages=self.outages,
            held=self.held,
        )
        self.heartbeat = Heartbeat(
            frontier,
            settings.leases,
            self.id,
            hosts=self.hosts,
            crawls=self.crawls,
            held=self.held,
            outages=self.outages,
            stat=self.stat,
        )
        self.settler = Settler(
            settings.leases,
            settings.backoff,
            self.id,
            crawls=self.crawls,
            held=self.held,
            outages=self.outages,
            metrics=self.metrics,
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
        with contextlib.suppress(Exception):  # (a hint: a watcher reads the crawl anyway)
            await self.crawls.mark_changes(now=True)
        for claim in self.held:
            served = self.crawls.get(claim.crawl_id)
            try:
                if served is not None:
                    await served.session.release(claim)
                    self.stat("invcrawl/released", 1)
            except Exception as exc:  # the lease will expire and be reaped instead
                log.warning("could not release %s: %s", claim.task.id, exc)
            self.held.settled(claim, Ending.RELEASED)
        with contextlib.suppress(Exception):  # else they expire after one lease
            await self.hosts.close()
        await self.crawls.close()
        try:
            await self.frontier.registry.leave_fleet(self.id)
        except Exception as exc:  # it ages out of the list by its heartbeat instead
            log.debug("could not leave the fleet list: %s", exc)
        await self.frontier.aclose()

    # -- the feed ------------------------------------------------------------------------

    async def feed(self) -> AsyncIterator[ClaimedPage]:
        """Yield claimed pages, never more than ``concurrency`` held at once. Ends when
        stopping, or when there is nothing left to serve (pinned crawls complete, or
        ``burst`` and every open crawl complete)."""
        try:
            # Listed in the fleet at once, serving a crawl or not (status, dashboard).
            await self.outages.call(self.heartbeat.beat_fleet, give_up_when_stopping=True)
            self.heartbeat.start()
            while not self.stopping:
                upstream_busy = await self._poll_upstream()
                await self._discover()
                await self.crawls.mark_changes()  # (every 0.25 s at most)
                if not upstream_busy and self.crawls.all_done():
                    await self.crawls.mark_changes(now=True)
                    return
                free = self.settings.concurrency - len(self.held)
                # With pages in hand, claim once a quarter of the room is free: one claim
                # (a Redis round trip and a script run) then brings several pages, not one.
                wanted = max(1, self.settings.concurrency // 4) if self.held else 1
                if free < wanted or self.held.isolated():
                    await self._sleep(1.0)
                    continue
                claims = await self._claim_turn(free)
                for served, claim in claims:
                    yield ClaimedPage(claim, served.info, served.origin, served.base)
                if not upstream_busy:
                    await self.crawls.retire_complete()
                    if self.crawls.all_done():  # at once, not after an idle sleep
                        await self.crawls.mark_changes(now=True)
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

    async def _claim_turn(self, free: int) -> list[tuple[ServedCrawl, Claim]]:
        asks: list[tuple[ServedCrawl, int]] = []
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
            held_per_host[served.origin] = held_per_host.get(served.origin, 0) + asked
            asks.append((served, asked))
        claims: list[tuple[ServedCrawl, Claim]] = []
        for (served, asked), got in zip(asks, await self._claim(asks), strict=True):
            self.crawls.claimed(served.crawl_id, asked, len(got))
            claims += [(served, claim) for claim in got]
        self.held.add(claim for _, claim in claims)
        return claims

    async def _claim(self, asks: list[tuple[ServedCrawl, int]]) -> list[list[Claim]]:
        """Claim from the slots we own; of a crawl with nothing there, help with the
        others. Every crawl of a turn in one round trip (``frontier/claims.py``)."""
        got = await self._claim_slots([(s, s.slots.claim_order(), n) for s, n in asks])
        idle = [i for i, claims in enumerate(got) if not claims]
        if idle:
            steals = [(asks[i][0], asks[i][0].slots.steal_order(), asks[i][1]) for i in idle]
            for i, claims in zip(idle, await self._claim_slots(steals), strict=True):
                if claims:
                    self.stat("invcrawl/stolen", len(claims))
                got[i] = claims
        return got

    async def _claim_slots(
        self, asks: list[tuple[ServedCrawl, list[int], int]]
    ) -> list[list[Claim]]:
        if not any(slots for _, slots, _ in asks):
            return [[] for _ in asks]
        busy = bool(self.held)

        async def claim() -> list[list[Claim]]:
            return await claim_many(
                [(served.session, slots, n) for served, slots, n in asks],
                self.id,
                busy,
                self.settings.leases.lease_ms,
            )

        return await self.outages.call(claim, give_up_when_stopping=True) or [[] for _ in asks]

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=max(seconds, 0.01))

    # -- settling ------------------------------------------------------------------------

    async def settle(self, page: Settlement) -> Settled:
        """Settle a page's claim, whatever became of the page (``consumer/settling.py``)."""
        return await self.settler.settle(page)

    def _settled(self, claim: Claim) -> None:
        """A claim left the holdings: make room for the next claims."""
        self.crawls.changed(claim.crawl_id)
        if not self.held.holds_crawl(claim.crawl_id):
            self.crawls.emptied(claim.crawl_id)
        self._wake.set()
