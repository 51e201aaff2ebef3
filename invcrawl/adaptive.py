"""``invcrawl crawl SITE... --every``: the crawl supervisor's refresh rounds, on the round
planner of ``common/rounds.py`` (the same plan as ``produce --every``). Each round is a
crawl run of the due crawls (``run_once``: the supervisor's ``CrawlRun``); between runs
no event loop is running, so each Redis step opens a connection of its own
(``frontier/connection.fresh_frontier``).

* ``--every DURATION``: every crawl together, every period jittered by 10%; each
  crawl's next refresh is recorded for ``status``.
* ``--every auto``: each crawl on its own interval (``common/refresh_interval.py``, kept in its
  meta by ``frontier/refresh_schedule.py``): the crawls that are due are refreshed together by
  one crawl run, then each gets its next round from what its round found."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from invcrawl import terminal
from invcrawl.common import rounds
from invcrawl.common.refresh_interval import Bounds
from invcrawl.common.settings.config import Config
from invcrawl.errors import EXIT_INTERRUPTED
from invcrawl.frontier import refresh_schedule
from invcrawl.frontier.connection import fresh_frontier
from invcrawl.frontier.refresh import clear_next_refresh, record_next_refresh
from invcrawl.frontier.refresh_schedule import Next
from invcrawl.frontier.session import Frontier
from invcrawl.process import interrupts
from invcrawl.render import duration

T = TypeVar("T")
Sites = Sequence[tuple[str, str]]
RunOnce = Callable[[Config, Sites], int]


def run_every(config: Config, sites: Sites, run_once: RunOnce) -> int:
    """The first run of every site, then refresh rounds (``--every``), until a stop
    signal (recorded, and acted on between steps: see ``process/interrupts.recorded``)."""
    assert config.every is not None
    mode = rounds.mode_of(config.every, Bounds(config.refresh_min, config.refresh_max))
    crawl_ids = [crawl_id for _, crawl_id in sites]
    with interrupts.recorded():
        run_once(config, sites)
        refresh = dataclasses.replace(config, refresh=True)
        if isinstance(mode, rounds.FixedPeriod):
            _fixed_rounds(config, refresh, sites, mode, run_once)
        else:
            _adaptive_rounds(config, refresh, sites, mode, run_once)
        asyncio.run(clear_next_refresh(config.redis or "", config.redis_cluster, crawl_ids))
        return interrupts.exit_code() or EXIT_INTERRUPTED


def _fixed_rounds(
    config: Config, refresh: Config, sites: Sites, mode: rounds.FixedPeriod, run_once: RunOnce
) -> None:
    crawl_ids = [crawl_id for _, crawl_id in sites]
    while interrupts.first() is None:
        delay = rounds.fixed_delay(mode)
        _with(config, functools.partial(record_next_refresh, crawl_ids=crawl_ids, delay=delay))
        print(f"next refresh in {duration(delay)}", file=sys.stderr, flush=True)
        if not interrupts.sleep(delay):
            break
        run_once(refresh, sites)


def _adaptive_rounds(
    config: Config, refresh: Config, sites: Sites, mode: rounds.Adaptive, run_once: RunOnce
) -> None:
    site_of = {crawl_id: site for site, crawl_id in sites}
    crawl_ids = list(site_of)
    rng = random.Random()
    if interrupts.first() is None:
        _schedule(config, crawl_ids, mode, rng)
    while interrupts.first() is None:
        due_at, now = _with(config, functools.partial(refresh_schedule.due_at, crawl_ids=crawl_ids))
        wake = rounds.wake(due_at, now)
        if not interrupts.sleep(wake.sleep):
            break
        due = rounds.due_by(due_at, wake.at_ms)
        for crawl_id in due:
            _with(config, functools.partial(_begin_round, crawl_id=crawl_id))
        run_once(refresh, [(site_of[c], c) for c in due])
        if interrupts.first() is None:
            _schedule(config, due, mode, rng)


def _schedule(
    config: Config, crawl_ids: Sequence[str], mode: rounds.Adaptive, rng: random.Random
) -> None:
    for crawl_id in crawl_ids:
        nxt = _with(
            config, functools.partial(_schedule_next, crawl_id=crawl_id, rng=rng, mode=mode)
        )
        report_next(nxt)


async def _begin_round(frontier: Frontier, crawl_id: str) -> None:
    await refresh_schedule.begin_round(frontier.crawl(crawl_id))


async def _schedule_next(
    frontier: Frontier, crawl_id: str, rng: random.Random, mode: rounds.Adaptive
) -> Next:
    return await refresh_schedule.schedule_next(frontier.crawl(crawl_id), rng, mode)


def _with(config: Config, job: Callable[[Frontier], Awaitable[T]]) -> T:
    """``job`` over a connection of its own (between runs no event loop is running)."""

    async def main() -> T:
        async with fresh_frontier(config.redis or "", config.redis_cluster) as frontier:
            return await job(frontier)

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
