"""The refresh schedule of each crawl, kept in its meta (field names in
``frontier/keys.py``) so that ``status``, the dashboard and a restarted scheduler see
it: the crawl's interval, whether it adapts (``--every auto``), whether its last round
found changes, and when its next round is due (:func:`due_at`, the due times the round
planner of ``common/rounds.py`` plans on).

Whether a round found changes is read from the crawl's item counters (``items_new``,
``items_updated``, ``items_removed``: totals that a round never resets): their sum is
noted in ``refresh_base`` before the round starts (:func:`begin_round`) and compared
once it is over (:func:`schedule_next`). The note survives the scheduler: one that was
stopped mid-round measures the round when it runs again. The interval logic itself is
pure, in ``common/rounds.py`` and ``common/refresh_interval.py``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from invcrawl.common.rounds import Adaptive, Mode, next_interval
from invcrawl.frontier.keys import (
    META_NEXT_REFRESH,
    META_REFRESH_ADAPTIVE,
    META_REFRESH_BASE,
    META_REFRESH_CHANGED,
    META_REFRESH_INTERVAL,
)
from invcrawl.frontier.session import CrawlSession, Frontier

CHANGE_COUNTERS = ("items_new", "items_updated", "items_removed")


@dataclass(frozen=True, slots=True)
class Next:
    """A crawl's next round, as scheduled."""

    crawl_id: str
    interval: float  # seconds: the crawl's interval now
    changed: bool | None  # whether the round just over found changes (None: not measured)
    delay: float  # seconds from now (the interval, jittered)
    at_ms: int  # when, by the Redis clock


async def changes(session: CrawlSession) -> int:
    """Items added, changed and removed over the crawl's whole life."""
    counts = await session.commands.hmget(session.keys.stats, list(CHANGE_COUNTERS))
    return sum(int(n or 0) for n in counts)


async def begin_round(session: CrawlSession) -> None:
    """Note the crawl's changes so far, right before a refresh round of it starts."""
    await session.commands.hset(session.keys.meta, META_REFRESH_BASE, await changes(session))


async def schedule_next(session: CrawlSession, rng: random.Random, mode: Mode) -> Next:
    """After a round is over (or when a scheduler starts): measure it, and record the
    crawl's interval and next round as the round planner sets them (``common/rounds.py``:
    adapted within the bounds of :class:`Adaptive`, or the fixed period)."""
    k = session.keys
    stored, base = await session.commands.hmget(k.meta, [META_REFRESH_INTERVAL, META_REFRESH_BASE])
    changed = None if base is None else await changes(session) > int(base)
    planned = next_interval(mode, float(stored) if stored else None, changed, rng)
    interval, delay = planned.interval, planned.delay
    at = await session.server_ms() + int(delay * 1000)
    pipe = session.pipeline(transaction=True)
    pipe.hset(
        k.meta,
        mapping={
            META_REFRESH_INTERVAL: round(interval, 3),
            META_REFRESH_ADAPTIVE: int(isinstance(mode, Adaptive)),
            META_NEXT_REFRESH: at,
        },
    )
    if changed is not None:
        pipe.hset(k.meta, META_REFRESH_CHANGED, int(changed))
    pipe.hdel(k.meta, META_REFRESH_BASE)
    await pipe.execute()
    return Next(session.crawl_id, interval, changed, delay, at)


async def due_at(frontier: Frontier, crawl_ids: Sequence[str]) -> tuple[dict[str, int | None], int]:
    """When each crawl's next round is due (ms; None: not scheduled), and the Redis
    clock now."""
    pipe = frontier.pipeline(transaction=False)
    for crawl_id in crawl_ids:
        pipe.hget(frontier.crawl(crawl_id).keys.meta, META_NEXT_REFRESH)
    replies = await pipe.execute() if crawl_ids else []
    now = await frontier.registry.server_ms()
    return {c: int(r) if r else None for c, r in zip(crawl_ids, replies, strict=True)}, now
