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
from typing import TYPE_CHECKING

from frontier.connection import is_transient
from frontier.session import CrawlNotFound

if TYPE_CHECKING:
    from consumer.discovery import ServedCrawl
    from consumer.worker import Worker

log = logging.getLogger("invcrawl.consumer")


async def heartbeat_loop(worker: Worker) -> None:
    """Every lease/3: list this consumer in the fleet, renew host permits and register
    hosts, then per crawl renew task leases (abandoning tasks past the hard deadline),
    refresh slots and reap."""
    interval = max(0.2, worker.config.lease / 3)
    while True:
        await asyncio.sleep(interval)
        try:
            await beat_fleet(worker)
            await worker.hosts.renew()
            origins = {s.origin for s in worker.crawls.values() if s.origin}
            await worker.frontier.hosts.register(
                origins, await worker.frontier.registry.server_ms()
            )
        except Exception as exc:
            if not is_transient(exc):
                log.exception("heartbeat of the host permits failed")
            worker.outages.note(exc)
            continue
        for served in list(worker.crawls.values()):
            try:
                await beat_crawl(worker, served)
            except CrawlNotFound:  # invcrawl forget --force
                from consumer.discovery import forgotten  # noqa: PLC0415 - it imports us

                await forgotten(worker, served.session.crawl_id)
            except Exception as exc:
                if is_transient(exc):
                    worker.outages.note(exc)
                    break
                log.exception("heartbeat of crawl %s failed", served.session.crawl_id)


async def beat_fleet(worker: Worker) -> None:
    """List this consumer in the fleet (``invcrawl:fleet``), serving a crawl or idle, so
    that ``status`` and the dashboard show idle consumers too."""
    await worker.frontier.registry.beat_consumer(
        worker.id,
        {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": worker.started,
            "lease_ms": worker.config.lease_ms,
        },
    )


async def beat_crawl(worker: Worker, served: ServedCrawl) -> None:
    """Renew this consumer's leases on one crawl, refresh its slots, reap."""
    session, crawl_id = served.session, served.session.crawl_id
    now = time.monotonic()
    renew = []
    for claim in [c for (cid, _), c in worker.held.items() if cid == crawl_id]:
        if now - claim.claimed_at > worker.config.task_deadline:
            # Hard deadline: stop renewing; the lease expires and the task is reaped.
            log.warning(
                "%s exceeded the %.0fs task deadline; abandoning it",
                claim.task.url,
                worker.config.task_deadline,
            )
            worker.stat("invcrawl/abandoned", 1)
            worker.settled(claim, "abandoned")
        else:
            renew.append(claim)
    info = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": worker.started,
        "slots": served.slots.owned,
        "held": len(renew),
        "lease_ms": worker.config.lease_ms,  # status judges liveness by the beat's own lease
    }
    for task_id in await session.renew(worker.id, renew, worker.config.lease_ms, info):
        lost = worker.held.get((crawl_id, task_id))
        if lost:
            log.warning("lease of %s lost", lost.task.url)
            worker.stat("invcrawl/leases_lost", 1)
            worker.settled(lost, "lease_lost")
    await served.slots.refresh()
    for slot in served.slots.reap_order():
        requeued, dead = await session.reap(slot, served.max_tries)
        if requeued or dead:
            log.info("reaped %s slot %d: %d requeued, %d dead", crawl_id, slot, requeued, dead)
            worker.stat("invcrawl/reaped", requeued + dead)
            worker.rotation.wake(crawl_id)
    worker.outages.over()
