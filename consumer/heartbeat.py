"""The consumer's heartbeat, a task beside the delivery loop on the same event loop (never
blocking the reactor): host permits and task leases are renewed, slots refreshed and
expired leases reaped, so that a consumer that stops beating (killed, paused, cut off)
loses its leases within one lease and its tasks are redelivered."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from typing import Any

from invcrawl.consumer.crawls import ServedCrawl, ServedCrawls
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.pages import Ending
from invcrawl.fetch.politeness import HostGate
from invcrawl.frontier.connection import is_transient
from invcrawl.frontier.retry import Outages, StatSink
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.values import CrawlNotFound

log = logging.getLogger("invcrawl.consumer")


class Heartbeat:
    def __init__(
        self,
        frontier: Frontier,
        leases: Leases,
        consumer_id: str,
        *,
        hosts: HostGate,
        crawls: ServedCrawls,
        held: Holdings,
        outages: Outages,
        stat: StatSink,
    ) -> None:
        self._frontier = frontier
        self._leases = leases
        self._consumer_id = consumer_id
        self._hosts = hosts
        self._crawls = crawls
        self._held = held
        self._outages = outages
        self._stat = stat
        self._started = time.time()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._loop())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _loop(self) -> None:
        """Every lease/3, a beat (:meth:`beat`)."""
        interval = max(0.2, self._leases.lease / 3)
        while True:
            await asyncio.sleep(interval)
            await self.beat()

    async def beat(self) -> None:
        """List this consumer in the fleet, renew host permits and register hosts, then
        per crawl renew task leases (abandoning tasks past the hard deadline), refresh
        slots and reap: the crawls it holds pages of and a bounded turn of the others
        (``ServedCrawls.to_beat``), so that a beat costs the same whatever the number of
        crawls served."""
        crawls = self._crawls.to_beat(self._held.crawl_ids())
        try:
            await self.beat_fleet()
            await self._hosts.renew()
            origins = {s.origin for s in crawls if s.origin}
            now_ms = await self._frontier.registry.server_ms()
            await self._frontier.hosts.register(origins, now_ms)
        except Exception as exc:
            if not is_transient(exc):
                log.exception("heartbeat of the host permits failed")
            self._outages.note(exc)
            return
        for served in crawls:
            try:
                await self.beat_crawl(served, now_ms)
            except CrawlNotFound:  # invcrawl forget --force
                await self._crawls.forgotten(served.crawl_id)
            except Exception as exc:
                if is_transient(exc):
                    self._outages.note(exc)
                    break
                log.exception("heartbeat of crawl %s failed", served.crawl_id)

    def _info(self) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": self._started,
            "lease_ms": self._leases.lease_ms,  # status judges liveness by the beat's own lease
        }

    async def beat_fleet(self) -> None:
        """List this consumer in the fleet (``invcrawl:fleet``), serving a crawl or idle,
        so that ``status`` and the dashboard show idle consumers too."""
        await self._frontier.registry.beat_consumer(self._consumer_id, self._info())

    async def beat_crawl(self, served: ServedCrawl, now_ms: int | None = None) -> None:
        """Renew this consumer's leases on one crawl, refresh its slots, reap the leases
        expired before ``now_ms`` (the Redis time the beat started; None: read now)."""
        session, crawl_id, leases = served.session, served.crawl_id, self._leases
        now = time.monotonic()
        renew = []
        for claim in self._held.of_crawl(crawl_id):
            if now - claim.claimed_at > leases.task_deadline:
                # Hard deadline: stop renewing; the lease expires and the task is reaped.
                log.warning(
                    "%s exceeded the %.0fs task deadline; abandoning it",
                    claim.task.url,
                    leases.task_deadline,
                )
                self._stat("invcrawl/abandoned", 1)
                self._held.settled(claim, Ending.ABANDONED)
            else:
                renew.append(claim)
        info = {**self._info(), "slots": served.slots.owned, "held": len(renew)}
        for task_id in await session.renew(self._consumer_id, renew, leases.lease_ms, info):
            lost = self._held.get(crawl_id, task_id)
            if lost:
                log.warning("lease of %s lost", lost.task.url)
                self._stat("invcrawl/leases_lost", 1)
                self._held.settled(lost, Ending.LEASE_LOST)
        await served.slots.refresh()
        if now_ms is None:
            now_ms = await self._frontier.registry.server_ms()
        expired = await session.expired(served.slots.reap_order(), now_ms)
        for slot, task_ids in expired.items():
            requeued, dead = await session.reap_expired(slot, served.max_tries, task_ids)
            if requeued or dead:
                log.info("reaped %s slot %d: %d requeued, %d dead", crawl_id, slot, requeued, dead)
                self._stat("invcrawl/reaped", requeued + dead)
                self._crawls.wake(crawl_id)
        self._outages.over()
