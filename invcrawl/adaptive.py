"""``invcrawl crawl SITE... --every auto``: after the first run, each crawl is refreshed
on its own interval (``common/cadence.py``, kept in its meta by ``frontier/cadence.py``,
the same schedule as ``produce --every auto``): the crawls that are due are refreshed
together by one crawl run, then each gets its next round from what its round found."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from common.cadence import Bounds
from common.settings.config import Config
from frontier import cadence
from frontier.cadence import Next
from frontier.connection import connect
from frontier.refresh import clear_next_refresh
from frontier.session import Frontier
from invcrawl import terminal
from invcrawl.errors import EXIT_INTERRUPTED
from invcrawl.render import duration
from process import interrupts

T = TypeVar("T")
Sites = Sequence[tuple[str, str]]
RunOnce = Callable[[Config, Sites], int]


def run_adaptive(config: Config, sites: Sites, run_once: RunOnce) -> int:
    """The first run of every site, then refreshes of the due ones, until a stop signal
    (recorded, and acted on between steps: see ``process/interrupts.recorded``)."""
    site_of = {crawl_id: site for site, crawl_id in sites}
    crawl_ids = list(site_of)
    with interrupts.recorded():
        run_once(config, sites)
        bounds = Bounds(config.refresh_min, config.refresh_max)
        rng = random.Random()
        refresh = dataclasses.replace(config, refresh=True)
        if interrupts.first() is None:
            _schedule(config, crawl_ids, bounds, rng)
        while interrupts.first() is None:
            due_at, now = _with(config, functools.partial(cadence.due_at, crawl_ids=crawl_ids))
            soonest = min((at for at in due_at.values() if at), default=now)
            if not interrupts.sleep(max(0.0, (soonest - now) / 1000)):
                break
            due = [c for c, at in due_at.items() if at is None or at <= soonest]
            for crawl_id in due:
                _with(config, _begin_round(crawl_id))
            run_once(refresh, [(site_of[c], c) for c in due])
            if interrupts.first() is None:
                _schedule(config, due, bounds, rng)
        asyncio.run(clear_next_refresh(config.redis or "", config.redis_cluster, crawl_ids))
        return interrupts.exit_code() or EXIT_INTERRUPTED


def _schedule(config: Config, crawl_ids: Sequence[str], bounds: Bounds, rng: random.Random) -> None:
    for crawl_id in crawl_ids:
        nxt = _with(config, _schedule_next(crawl_id, rng, bounds))
        report_next(nxt)


def _begin_round(crawl_id: str) -> Callable[[Frontier], Awaitable[None]]:
    async def job(frontier: Frontier) -> None:
        await cadence.begin_round(frontier.crawl(crawl_id))

    return job


def _schedule_next(
    crawl_id: str, rng: random.Random, bounds: Bounds
) -> Callable[[Frontier], Awaitable[Next]]:
    async def job(frontier: Frontier) -> Next:
        return await cadence.schedule_next(frontier.crawl(crawl_id), rng, bounds)

    return job


def _with(config: Config, job: Callable[[Frontier], Awaitable[T]]) -> T:
    """``job`` over a connection of its own (between runs no event loop is running)."""

    async def main() -> T:
        frontier = Frontier(connect(config.redis or "", config.redis_cluster))
        try:
            return await job(frontier)
        finally:
            await frontier.aclose()

    return asyncio.run(main())


def report_next(nxt: Next) -> None:
    """A crawl's next refresh round was scheduled (``--every auto``)."""
    why = ""
    if nxt.changed is not None:
        why = f"; its last round found {'changes' if nxt.changed else 'none'}"
    terminal.say(
        f"crawl {nxt.crawl_id}: next refresh in {duration(nxt.delay)} "
        f"(interval {duration(nxt.interval)}{why})"
    )
