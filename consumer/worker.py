"""The consumer's delivery loop, independent of Scrapy: claim tasks within capacity,
renew their leases from a heartbeat that runs beside page work, reap expired leases,
settle every task exactly once (commit, retry, dead-letter or release), and ride out
Redis outages with backoff. Runs on the reactor's asyncio loop; never blocks it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

from redis.asyncio import Redis

from common.config import Config
from common.items import CrawlInfo, PreparedItem, bucket_count
from common.redisconn import is_transient
from common.status import known_crawls
from common.store import Claim, CommitResult, Store
from consumer.failures import Outcome, backoff_delay
from consumer.slots import SlotPolicy

log = logging.getLogger("invcrawl.consumer")
T = TypeVar("T")

IDLE_POLL_MIN = 0.05
IDLE_POLL_MAX = 1.0


class Worker:
    def __init__(
        self,
        redis: Redis,
        config: Config,
        consumer_id: str | None = None,
        on_stat: Callable[[str, int], None] | None = None,
    ) -> None:
        self.redis = redis
        self.config = config
        self.id = consumer_id or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
        self.on_stat = on_stat or (lambda name, n: None)
        self.store: Store | None = None
        self.crawl: CrawlInfo | None = None
        self.buckets = 1
        self.max_tries = config.max_tries
        self.slots: SlotPolicy | None = None
        self.held: dict[str, Claim] = {}
        self.lost: set[str] = set()
        self.isolated = False  # holding a suspect task: claim nothing else meanwhile
        self.stopping = False
        self.finished_reason = "stopped"
        self.fatal: str | None = None  # set when the feed dies of a non-transient error
        # True while a producer spider in this same process is still enqueuing (produce
        # --consume): until it is done, an earlier run's finished state must not end
        # the feed (a re-run may add pages).
        self.awaiting_producer = False
        self._wake = asyncio.Event()
        self._heartbeat: asyncio.Task[None] | None = None
        self._outage_since: float | None = None
        self.started = time.time()

    # -- lifecycle -----------------------------------------------------------------------

    def request_stop(self) -> None:
        """Graceful stop (SIGTERM): claim nothing more; in-flight pages finish."""
        if not self.stopping and self.held:
            log.warning("stopping: finishing %d in-flight page(s)", len(self.held))
        self.stopping = True
        self._wake.set()

    def producer_finished(self, error: str | None) -> None:
        """The producer spider sharing this process is done: go on, or stop if it failed."""
        self.awaiting_producer = False
        if error:
            self.request_stop()
        self._wake.set()

    async def close(self) -> None:
        """Release what is still held (cancelled downloads), deregister, stop beating."""
        if self._heartbeat:
            self._heartbeat.cancel()
        if self.store:
            for claim in list(self.held.values()):
                try:
                    await self.store.release(claim)
                    self.on_stat("invcrawl/released", 1)
                except Exception as exc:  # the lease will expire and be reaped instead
                    log.warning("could not release %s: %s", claim.task.id, exc)
            self.held.clear()
            try:
                if self.slots:
                    await self.slots.leave()
            except Exception as exc:
                log.debug("could not deregister: %s", exc)
        await self.redis.aclose()

    # -- the feed ------------------------------------------------------------------------

    async def feed(self) -> AsyncIterator[Claim]:
        """Yield claimed tasks, never more than ``concurrency`` held at once. Ends when
        stopping, or (burst) when the crawl is complete."""
        try:
            while not self.stopping:
                if not await self._open_next_crawl():
                    return
                async for claim in self._feed_crawl():
                    yield claim
                if self.stopping or self.config.burst or self.config.crawl_id:
                    if not self.stopping:
                        self.finished_reason = "finished"
                    return
        except Exception as exc:
            self.fatal = f"{type(exc).__name__}: {exc}"
            raise

    async def _open_next_crawl(self) -> bool:
        waited = 0.0
        while not self.stopping:
            crawl_id = self.config.crawl_id or await self._pick_crawl()
            if crawl_id:
                store = Store(self.redis, crawl_id)
                meta = await self._redis(store.meta)
                if meta and meta.get("slots"):
                    await self._attach(store, meta)
                    return True
            if self.config.burst and not self.config.crawl_id:
                log.warning("no unfinished crawl in Redis; nothing to do")
                self.finished_reason = "finished"
                return False
            # A named crawl is usually being produced right now (invcrawl crawl starts
            # its consumers beside the producer): look again soon.
            delay = 0.1 if self.config.crawl_id else 1.0
            if waited % 30 < delay:
                log.info("waiting for crawl %s to be created by a producer", crawl_id or "(any)")
            await asyncio.sleep(delay)
            waited += delay
        return False

    async def _pick_crawl(self) -> str | None:
        for crawl_id in await self._redis(lambda: known_crawls(self.redis)):
            state = await self._redis(
                lambda c=crawl_id: self.redis.hget(Store(self.redis, c).keys.meta, "state")
            )
            if state != "finished":
                return crawl_id
        return None

    async def _attach(self, store: Store, meta: dict[str, str]) -> None:
        self.store = store
        self.crawl = CrawlInfo(
            store.crawl_id, meta.get("project") or None, meta.get("version") or None
        )
        self.buckets = int(meta.get("buckets") or bucket_count(int(meta.get("entries") or 1)))
        # The delivery limit is a property of the crawl (set by its producer), so that
        # every consumer dead-letters after the same number of deliveries.
        self.max_tries = int(meta.get("max_tries") or self.config.max_tries)
        layout = await self._redis(store.refresh_layout)
        self.slots = SlotPolicy(store, self.id, self.config, layout.slots)
        await self._redis(self._beat)
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.ensure_future(self._heartbeat_loop())
        log.info("consumer %s serving crawl %s (%d slots)", self.id, store.crawl_id, layout.slots)

    async def _feed_crawl(self) -> AsyncIterator[Claim]:
        assert self.store and self.slots
        poll = IDLE_POLL_MIN
        while not self.stopping:
            free = self.config.concurrency - len(self.held)
            if free <= 0 or self.isolated:
                await self._sleep(1.0)
                continue
            claims = await self._claim(self.slots.claim_order(), free)
            if not claims:  # nothing in our own slots: help with the others
                claims = await self._claim(self.slots.steal_order(), free)
                if claims:
                    self.on_stat("invcrawl/stolen", len(claims))
            if claims:
                poll = IDLE_POLL_MIN
                for claim in claims:
                    self.held[claim.task.id] = claim
                    self.isolated = self.isolated or claim.suspect
                    self.on_stat("invcrawl/claims", 1)
                    if claim.deliveries > 1:
                        self.on_stat("invcrawl/redeliveries", 1)
                    yield claim
                continue
            if (
                not self.held
                and not self.awaiting_producer
                and await self._redis(self.store.is_complete, give_up_when_stopping=True)
            ):
                return
            await self._sleep(poll)
            poll = min(poll * 2, IDLE_POLL_MAX)

    async def _claim(self, slots: list[int], free: int) -> list[Claim]:
        assert self.store
        store = self.store
        claims = await self._redis(
            lambda: store.claim(
                self.id, slots, free, busy=bool(self.held), lease_ms=self.config.lease_ms
            ),
            give_up_when_stopping=True,
        )
        return claims or []

    async def _sleep(self, seconds: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)

    def _done(self, claim: Claim) -> None:
        self.held.pop(claim.task.id, None)
        self.lost.discard(claim.task.id)
        if claim.suspect:
            self.isolated = False
        self._wake.set()

    # -- settling ------------------------------------------------------------------------

    async def commit(
        self, claim: Claim, items: Sequence[PreparedItem], outcome: str
    ) -> CommitResult | None:
        assert self.store
        store = self.store
        try:
            result = await self._redis(
                lambda: store.commit(claim, items, outcome), deadline=self._settle_deadline(claim)
            )
        finally:
            self._done(claim)
        if result is None:
            return None
        if result.committed:
            self.on_stat("invcrawl/pages_done", 1)
            self.on_stat("invcrawl/items_new", result.new)
            self.on_stat("invcrawl/items_updated", result.updated)
            self.on_stat("invcrawl/items_unchanged", result.unchanged)
        else:
            self.on_stat("invcrawl/fenced", 1)
            log.warning(
                "commit of %s fenced (%s): another delivery owns it",
                claim.task.url,
                "lease expired" if result.expired else "lease lost",
            )
        return result

    async def fail(self, claim: Claim, outcome: Outcome, dead_now: bool = False) -> str | None:
        assert self.store
        store = self.store
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
        try:
            result = await self._redis(
                lambda: store.fail(
                    claim,
                    error,
                    int(delay * 1000),
                    self.max_tries,
                    dead_now=dead_now or outcome.kind == "dead",
                ),
                deadline=self._settle_deadline(claim),
            )
        finally:
            self._done(claim)
        if result:
            self.on_stat(f"invcrawl/{'dead' if result == 'dead' else result}", 1)
            level = logging.WARNING if result == "dead" else logging.INFO
            log.log(
                level,
                "%s: %s -> %s (delivery %d)",
                claim.task.url,
                outcome.reason,
                result,
                claim.deliveries,
            )
        return result

    async def fail_with_exception(self, claim: Claim, exc: BaseException) -> None:
        """An unexpected error in our own code is deterministic: dead-letter at once with
        the traceback's last line, rather than burn retries on it."""
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        log.error("extraction failed on %s", claim.task.url, exc_info=exc)
        await self.fail(claim, Outcome("dead", f"internal error: {text[:500]}"), dead_now=True)

    def _settle_deadline(self, claim: Claim) -> float:
        # Keep trying to settle through a Redis outage; after the hard deadline plus a
        # lease the result would be fenced anyway and the task is reaped instead.
        return claim.claimed_at + self.config.task_deadline + self.config.lease

    # -- heartbeat -----------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = max(0.2, self.config.lease / 3)
        while True:
            await asyncio.sleep(interval)
            try:
                await self._beat()
            except Exception as exc:
                if not is_transient(exc):
                    log.exception("heartbeat failed")
                else:
                    self._note_outage(exc)

    async def _beat(self) -> None:
        assert self.store and self.slots
        now = time.monotonic()
        renew = []
        for claim in list(self.held.values()):
            if now - claim.claimed_at > self.config.task_deadline:
                # Hard deadline: stop renewing; the lease expires and the task is reaped.
                log.warning(
                    "%s exceeded the %.0fs task deadline; abandoning it",
                    claim.task.url,
                    self.config.task_deadline,
                )
                self.on_stat("invcrawl/abandoned", 1)
                self.lost.add(claim.task.id)
                self._done(claim)
            else:
                renew.append(claim)
        info = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": self.started,
            "slots": self.slots.owned,
            "held": len(self.held),
            "lease_ms": self.config.lease_ms,  # status judges liveness by the beat's own lease
        }
        lost = await self.store.renew(self.id, renew, self.config.lease_ms, info)
        for task_id in lost:
            claim = self.held.get(task_id)
            if claim:
                log.warning("lease of %s lost", claim.task.url)
                self.on_stat("invcrawl/leases_lost", 1)
                self.lost.add(task_id)
                self._done(claim)
        await self.slots.refresh()
        for slot in self.slots.reap_order():
            requeued, dead = await self.store.reap(slot, self.max_tries)
            if requeued or dead:
                log.info("reaped slot %d: %d requeued, %d dead", slot, requeued, dead)
                self.on_stat("invcrawl/reaped", requeued + dead)
        self._outage_over()

    # -- Redis outages -------------------------------------------------------------------

    async def _redis(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        give_up_when_stopping: bool = False,
    ) -> T | None:  # type: ignore[type-var]
        """Run a Redis call, backing off through outages (never treating an error as
        "idle" or "finished"). Returns None only when giving up is allowed."""
        delay = 0.1
        while True:
            try:
                result = await call()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self._note_outage(exc)
                if give_up_when_stopping and self.stopping:
                    return None
                if deadline is not None and time.monotonic() > deadline:
                    log.warning("giving up on a Redis call after the task deadline: %s", exc)
                    return None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self._outage_over()
            return result

    def _note_outage(self, exc: BaseException) -> None:
        if self._outage_since is None:
            self._outage_since = time.monotonic()
            self.on_stat("invcrawl/redis_outages", 1)
            log.warning("Redis unavailable (%s); backing off and retrying", exc)

    def _outage_over(self) -> None:
        if self._outage_since is not None:
            log.warning("Redis is back after %.1fs", time.monotonic() - self._outage_since)
            self._outage_since = None
