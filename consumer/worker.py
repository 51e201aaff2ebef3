"""The consumer's delivery loop, independent of Scrapy.

A :class:`Worker` serves a set of crawls (every open crawl in Redis, or the ones it is
pinned to): it claims tasks within its capacity, spread over the crawls by
:class:`~consumer.scheduling.CrawlRotation`, renews their leases from a heartbeat that
runs beside page work, reaps expired leases, settles every task exactly once (commit,
retry, dead-letter or release), and rides out Redis outages with backoff. Per-crawl
state (session, slots, delivery limit, dedup buckets) is one :class:`ServedCrawl`. Runs
on the reactor's asyncio loop; never blocks it.
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
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, Protocol

from common.config import Config
from common.items import CrawlInfo, PageOutcome, prepare
from consumer.dead_pages import record_dead_pages
from consumer.discovery import (
    ServedCrawl,
    detach,
    discover,
    forgotten,
    leave_failed,
    next_look_in,
)
from consumer.heartbeat import beat_fleet, heartbeat_loop
from consumer.metrics import Metrics
from consumer.scheduling import CrawlRotation
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
        self.crawls: dict[str, ServedCrawl] = {}
        self.rotation = CrawlRotation()
        self.held: dict[tuple[str, str], Claim] = {}
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
        self.started = time.time()
        self._pinned = config.crawl_ids
        self._completed: set[str] = set()
        self._emptied: list[str] = []  # crawls whose last claim came back empty
        self._next_discovery = 0.0
        self._next_glance = 0.0  # consumer/discovery.py
        self._newest_opened = 0.0  # the newest score in the registry at the last glance
        self._wake = asyncio.Event()
        self._heartbeat: asyncio.Task[None] | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def request_stop(self) -> None:
        """Graceful stop (SIGTERM): claim nothing more; in-flight pages finish."""
        if not self.stopping and self.held:
            log.warning("stopping: finishing %d in-flight page(s)", len(self.held))
        self.stopping = True
        self._wake.set()

    async def close(self) -> None:
        """Release what is still held (cancelled downloads), deregister, stop beating."""
        if self._heartbeat:
            self._heartbeat.cancel()
        for claim in list(self.held.values()):
            try:
                await self.crawls[claim.crawl_id].session.release(claim)
                self.stat("invcrawl/released", 1)
            except Exception as exc:  # the lease will expire and be reaped instead
                log.warning("could not release %s: %s", claim.task.id, exc)
            self.settled(claim, "released")
        with contextlib.suppress(Exception):  # else they expire after one lease
            await self.hosts.close()
        for served in list(self.crawls.values()):
            try:
                await served.slots.leave()
            except Exception as exc:
                log.debug("could not deregister from %s: %s", served.session.crawl_id, exc)
        try:
            await self.frontier.registry.leave_fleet(self.id)
        except Exception as exc:  # it ages out of the list by its heartbeat instead
            log.debug("could not leave the fleet list: %s", exc)
        await self.frontier.aclose()

    def start_heartbeat(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.ensure_future(heartbeat_loop(self))

    def crawl_info(self, claim: Claim) -> CrawlInfo:
        return self.crawls[claim.crawl_id].info

    # -- the feed ------------------------------------------------------------------------

    async def feed(self) -> AsyncIterator[Claim]:
        """Yield claimed tasks, never more than ``concurrency`` held at once. Ends when
        stopping, or when there is nothing left to serve (pinned crawls complete, or
        ``burst`` and every open crawl complete)."""
        try:
            # Listed in the fleet at once, serving a crawl or not (status, dashboard).
            await self.outages.call(lambda: beat_fleet(self), give_up_when_stopping=True)
            self.start_heartbeat()
            while not self.stopping:
                upstream_busy = await self._poll_upstream()
                await discover(self)
                if not upstream_busy and self._all_done():
                    return
                free = self.config.concurrency - len(self.held)
                # With pages in hand, claim once a quarter of the room is free: one claim
                # (a Redis round trip and a script run) then brings several pages, not one.
                wanted = max(1, self.config.concurrency // 4) if self.held else 1
                if free < wanted or self._isolated():
                    await self._sleep(1.0)
                    continue
                claims = await self._claim_turn(free)
                for claim in claims:
                    yield claim
                if not upstream_busy:
                    await self._retire_complete()
                    if self._all_done():  # at once, not after an idle sleep
                        return
                if not claims:  # until a crawl is worth asking again, or the next look
                    await self._sleep(min(self.rotation.next_ready_in(), next_look_in(self)))
        except Exception as exc:
            self.fatal = f"{type(exc).__name__}: {exc}"
            raise

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
            for crawl_id in self._pinned:
                session = self.frontier.crawl(crawl_id)
                producer = await self.outages.call(
                    lambda s=session: s.meta_field("producer")  # type: ignore[misc]
                )
                if producer in (None, ProducerState.RUNNING):
                    log.error("the producer stopped before crawl %s was produced", crawl_id)
                    self.request_stop()
                elif producer == ProducerState.FAILED:
                    await leave_failed(self, crawl_id)
        return False

    def _all_done(self) -> bool:
        if self._pinned:
            return all(c in self._completed for c in self._pinned)
        return self.config.burst and not self.crawls and time.monotonic() < self._next_discovery

    def _held_per_host(self) -> dict[str | None, int]:
        counts: dict[str | None, int] = {}
        for (crawl_id, _), _claim in self.held.items():
            origin = self.crawls[crawl_id].origin if crawl_id in self.crawls else None
            counts[origin] = counts.get(origin, 0) + 1
        return counts

    def _isolated(self) -> bool:
        # Holding a suspect task: claim nothing else until it is settled (docs/delivery.md).
        return any(claim.suspect for claim in self.held.values())

    async def _claim_turn(self, free: int) -> list[Claim]:
        claims: list[Claim] = []
        held_per_host = self._held_per_host()
        for crawl_id, turn in self.rotation.turns(free):
            served = self.crawls[crawl_id]
            # Politeness steers the claims: no page of a host that cannot take a request
            # soon, and no more pages of a host than could be in flight on it at once;
            # other hosts' pages meanwhile.
            if self.hosts.unavailable_for(served.origin) > 0:
                self.rotation.claimed(crawl_id, turn, 0)
                continue
            room = self.hosts.room(served.origin, held_per_host.get(served.origin, 0))
            asked = min(turn, room)
            if asked < 1:
                continue
            got = await self._claim(served, asked)
            self.rotation.claimed(crawl_id, asked, len(got))
            if not got:
                self._emptied.append(crawl_id)
            held_per_host[served.origin] = held_per_host.get(served.origin, 0) + len(got)
            claims += got
        for claim in claims:
            self.held[(claim.crawl_id, claim.task.id)] = claim
            self.metrics.claimed(claim.crawl_id, claim.task.url)
            self.stat("invcrawl/claims", 1)
            if claim.deliveries > 1:
                self.stat("invcrawl/redeliveries", 1)
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
            await forgotten(self, served.session.crawl_id)
            return []

    async def _retire_complete(self) -> None:
        """Crawls whose claim came back empty and of which we hold nothing: complete?
        Then stop serving them (and unlist them from the open crawls)."""
        held = {crawl_id for crawl_id, _ in self.held}
        emptied, self._emptied = set(self._emptied), []
        for crawl_id in emptied:
            served = self.crawls.get(crawl_id)
            if served is None or crawl_id in held:
                continue

            def record(s: ServedCrawl = served) -> Awaitable[int]:
                return record_dead_pages(s.session, s.info, s.buckets, s.dead_recorded)

            # Before completion, so that the finished crawl has them: consumer/dead_pages.py
            try:
                await self.outages.call(record, give_up_when_stopping=True)
                complete = await self.outages.call(
                    served.session.is_complete, give_up_when_stopping=True
                )
            except CrawlNotFound:
                await forgotten(self, crawl_id)
                continue
            if complete:
                await detach(self, served, finished=True)

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
            self.settled(claim, "forgotten")
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
            self.settled(claim, settled_as)
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
            self.settled(claim, "forgotten")
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
            self.settled(claim, settled_as)
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
                self.rotation.wake(claim.crawl_id)
        return result

    async def postpone(self, claim: Claim, seconds: float) -> bool | None:
        """Give the task back without using a delivery, not to be claimed again for
        ``seconds`` (its host is blocked or busy for a while)."""
        served = self.crawls.get(claim.crawl_id)
        if served is None:  # forgotten meanwhile
            self.settled(claim, "forgotten")
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
            self.settled(claim, outcomes[released])

    async def fail_with_exception(self, claim: Claim, exc: BaseException) -> None:
        """An unexpected error in our own code is deterministic: dead-letter at once with
        the traceback's last line, rather than burn retries on it."""
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        log.error("extraction failed on %s", claim.task.url, exc_info=exc)
        await self.fail(claim, Outcome("dead", f"internal error: {text[:500]}"), dead_now=True)

    def settled(self, claim: Claim, outcome: str = "released") -> None:
        """The claim is no longer ours (committed, failed, released, lease lost or
        abandoned: ``outcome``, counted once per claim): make room for the next claims."""
        if self.held.pop((claim.crawl_id, claim.task.id), None) is not None:
            self.metrics.page_settled(claim.crawl_id, claim.task.url, outcome)
        if not any(crawl_id == claim.crawl_id for crawl_id, _ in self.held):
            # Its last page in hand: check the crawl for completion now, not after its
            # idle backoff (up to a second at the end of every crawl, measured).
            self._emptied.append(claim.crawl_id)
        self._wake.set()

    def _settle_deadline(self, claim: Claim) -> float:
        # Keep trying to settle through a Redis outage; after the hard deadline plus a
        # lease the result would be fenced anyway and the task is reaped instead.
        return claim.claimed_at + self.config.task_deadline + self.config.lease
