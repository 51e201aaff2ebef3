"""Which crawls a consumer serves: discovering open crawls (or waiting for pinned ones),
attaching to a crawl (its session, slot policy, delivery limit, host) and detaching
from it when it is complete. Functions over a :class:`~consumer.worker.Worker`, like
the heartbeat's."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from common.items import CrawlInfo, bucket_count
from common.plan import base_of
from consumer.heartbeat import beat_crawl
from consumer.slots import SlotPolicy
from frontier.forget import withdraw
from frontier.hosts import origin_of
from frontier.session import CrawlSession
from frontier.states import CrawlState

if TYPE_CHECKING:
    from consumer.worker import Worker

log = logging.getLogger("invcrawl.consumer")

DISCOVER_EVERY = 1.0  # seconds between looks for new crawls (when not pinned)
# Between two looks, a glance at the crawl (re)opened last (one ZRANGE of one entry):
# a new crawl or a refresh round is served within this, not within DISCOVER_EVERY (an
# unchanged refresh of a 500-page site takes about half a second).
GLANCE_EVERY = 0.05


@dataclass(slots=True)
class ServedCrawl:
    """A crawl this consumer serves."""

    session: CrawlSession
    info: CrawlInfo
    buckets: int
    max_tries: int  # a property of the crawl (its producer's), so all consumers agree
    slots: SlotPolicy
    listed_at: float | None  # its score in the registry when seen (None: pinned)
    origin: str | None  # the host its pages are on (None: a local site)
    base: str = ""  # the inventory's folder: pages outside it are never fetched
    dead_recorded: set[str] = field(default_factory=set)  # dead pages given failed items


async def discover(worker: Worker) -> None:
    """Attach to the crawls to serve that are not served yet: every open crawl in the
    registry (a look per DISCOVER_EVERY), or the pinned ones (a look per 0.1 s)."""
    now = time.monotonic()
    if now < worker._next_discovery and not await _newly_opened(worker, now):
        return
    worker._next_discovery = now + (0.1 if worker._pinned else DISCOVER_EVERY)
    if worker._pinned:
        wanted: Mapping[str, float | None] = {
            c: None for c in worker._pinned if c not in worker._completed
        }
    else:
        wanted = await worker.outages.call(worker.frontier.registry.active) or {}
    for crawl_id, listed_at in wanted.items():
        if crawl_id not in worker.crawls:
            await attach(worker, crawl_id, listed_at)


def next_look_in(worker: Worker) -> float:
    """Seconds until :func:`discover` looks (or glances) at the registry again."""
    at = worker._next_discovery
    if not worker._pinned:
        at = min(at, worker._next_glance)
    return max(0.0, at - time.monotonic())


async def _newly_opened(worker: Worker, now: float) -> bool:
    """Whether a crawl this consumer does not serve was (re)opened since the last glance."""
    if worker._pinned or now < worker._next_glance:
        return False
    worker._next_glance = now + GLANCE_EVERY
    newest = await worker.outages.call(worker.frontier.registry.newest)
    if newest is None or newest[1] <= worker._newest_opened:
        return False
    worker._newest_opened = newest[1]
    return newest[0] not in worker.crawls


async def attach(worker: Worker, crawl_id: str, listed_at: float | None) -> None:
    """Start serving a crawl (or, finished, retire it from the registry)."""
    session = worker.frontier.crawl(crawl_id)
    meta = await worker.outages.call(session.meta) or {}
    state = CrawlState(meta["state"]) if meta.get("state") else None
    if state is not None and not state.open and worker.upstream is None:
        if listed_at is not None:
            await worker.outages.call(lambda: worker.frontier.registry.retire(crawl_id, listed_at))
        if worker._pinned:  # finished, or failed to produce: nothing to do for it
            worker._completed.add(crawl_id)
        return
    if not meta.get("slots"):
        if worker._pinned:  # usually being produced right now: look again soon
            log.debug("waiting for crawl %s to be created by a producer", crawl_id)
        return
    layout = await worker.outages.call(session.refresh_layout)
    assert layout is not None
    served = ServedCrawl(
        session=session,
        info=CrawlInfo(crawl_id, meta.get("project") or None, meta.get("version") or None),
        buckets=int(meta.get("buckets") or bucket_count(int(meta.get("entries") or 1))),
        max_tries=int(meta.get("max_tries") or worker.config.max_tries),
        slots=SlotPolicy(session, worker.id, worker.config, layout.slots),
        listed_at=listed_at,
        origin=origin_of(meta.get("inventory_url") or ""),
        base=base_of(meta["inventory_url"]) if meta.get("inventory_url") else "",
    )
    worker.crawls[crawl_id] = served
    worker.rotation.add(crawl_id, int(meta.get("weight") or 1))
    origin = served.origin
    if origin:  # listed for status at once (the heartbeat keeps it listed)
        now = await worker.outages.call(worker.frontier.registry.server_ms) or 0
        await worker.outages.call(lambda: worker.frontier.hosts.register([origin], now))
    await worker.outages.call(lambda: beat_crawl(worker, served))
    worker.start_heartbeat()
    log.info("consumer %s serving crawl %s (%d slots)", worker.id, crawl_id, layout.slots)


async def detach(worker: Worker, served: ServedCrawl, finished: bool) -> None:
    """Stop serving a crawl; ``finished``: it is complete (retired from the registry)."""
    crawl_id = served.session.crawl_id
    worker.rotation.remove(crawl_id)
    del worker.crawls[crawl_id]
    if finished:
        worker._completed.add(crawl_id)
        if served.listed_at is not None:
            listed_at = served.listed_at
            await worker.outages.call(lambda: worker.frontier.registry.retire(crawl_id, listed_at))
    with contextlib.suppress(Exception):
        await served.slots.leave()
    log.info("crawl %s complete; consumer %s leaves it", crawl_id, worker.id)


async def leave_failed(worker: Worker, crawl_id: str) -> None:
    """A crawl whose producer failed before enqueueing (produce_failed.lua made it
    `failed`, e.g. a refresh round whose inventory is cut short) gets no task: leave it,
    instead of waiting for a completion that cannot come."""
    session = worker.frontier.crawl(crawl_id)
    state = await worker.outages.call(lambda: session.meta_field("state"))
    if state != CrawlState.FAILED:
        return
    served = worker.crawls.get(crawl_id)
    if served is not None:
        await detach(worker, served, finished=True)
    else:
        worker._completed.add(crawl_id)


async def forgotten(worker: Worker, crawl_id: str) -> None:
    """The crawl was deleted while served (``invcrawl forget --force``): stop serving it,
    drop the pages held of it (their commits would be fenced), and take this consumer's
    own entries back out of its keys (a heartbeat may have written them after the
    deletion)."""
    served = worker.crawls.pop(crawl_id, None)
    if served is None:
        return
    worker.rotation.remove(crawl_id)
    worker._completed.add(crawl_id)
    for claim in [c for (held_crawl, _), c in worker.held.items() if held_crawl == crawl_id]:
        worker.settled(claim, "forgotten")
    log.warning("crawl %s was forgotten: consumer %s no longer serves it", crawl_id, worker.id)
    with contextlib.suppress(Exception):
        await withdraw(served.session, worker.id)
