"""``invcrawl produce --every DURATION|auto``: the long-running producer of a deployment
that keeps its sites fresh (compose's ``producer`` service with ``INVCRAWL_EVERY``).

One process, one Scrapy reactor, one Redis client and one host gate for every round: the
first round produces each site as ``invcrawl produce`` does; then refresh rounds re-check
the crawls (``frontier/refresh.py``) and the running consumers revalidate their pages. A
round starts no interpreter, imports nothing and opens no connection, which is most of
what a one-shot ``produce --refresh`` costs on an unchanged site (docs/performance.md).
A crawl still being crawled when a round comes is left to finish (``refresh.lua`` never
restarts one; producing again only resumes it).

When rounds come and which crawls they take is the round planner's
(``common/rounds.py``, the same plan as the ``crawl`` supervisor's ``--every``); this
module keeps how a round runs here.

* ``--every DURATION``: every crawl together, every DURATION jittered by 10% (so that
  many producers do not hit their hosts in step).
* ``--every auto``: each crawl on its own interval (``common/refresh_interval.py``): once a
  crawl's round is over (its crawl finished), the interval is shortened if the round
  found changes and lengthened if not, within ``--refresh-min`` and ``--refresh-max``,
  and the crawl's next round is due one jittered interval later; due crawls are
  refreshed together in one inventory crawl. Interval and next round live in each
  crawl's meta (``frontier/refresh_schedule.py``), so a restarted producer keeps them.

``status`` shows each crawl's interval and next round; SIGINT/SIGTERM stop the loop (a
round in progress is stopped like ``produce``: producing is idempotent, the next run
resumes)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import random
from collections.abc import Callable, Sequence

from scrapy.crawler import AsyncCrawlerProcess

from invcrawl.common import rounds
from invcrawl.common.plan import PlanCache
from invcrawl.common.refresh_interval import Bounds
from invcrawl.common.settings.config import Config
from invcrawl.fetch.settings import base_settings
from invcrawl.frontier import refresh_schedule
from invcrawl.frontier.refresh import clear_next_refresh, record_next_refresh
from invcrawl.frontier.refresh_schedule import Next
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import crawl_summaries
from invcrawl.producer.enqueue import SinkSettings
from invcrawl.producer.run import (
    Produced,
    job_errors,
    produced,
    producer_clients,
    quiet_download_errors,
    record_signals_on_start,
    redis_jobs,
    sink_settings,
    start_inventory_crawl,
)

log = logging.getLogger("invcrawl.producer")

Report = Callable[[Sequence[Produced], float | None], None]
Announce = Callable[[Next], None]


@dataclasses.dataclass(frozen=True, slots=True)
class ScheduleSettings:
    """When rounds come (``--every``: a fixed period, or "auto" within ``--refresh-min``
    and ``--refresh-max``), and what each round's sinks are given."""

    mode: rounds.Mode
    sink: SinkSettings


def produce_every(
    config: Config,
    sites: Sequence[tuple[str, str]],
    report: Report,
    announce: Announce | None = None,
) -> None:
    """Produce every site, then refresh them on schedule until a signal stops the
    process. ``report(results, next_in)`` after each inventory round (``next_in``: the
    fixed period's next delay, None with ``auto``); ``announce(next)``: a crawl's next
    round was scheduled (``auto``)."""
    assert config.every
    frontier, gate = producer_clients(config)
    process = AsyncCrawlerProcess(base_settings(config, gate))
    quiet_download_errors()  # after the process, which configures logging
    bounds = Bounds(config.refresh_min, config.refresh_max)
    settings = ScheduleSettings(rounds.mode_of(config.every, bounds), sink_settings(config))
    schedule = Schedule(process, settings, sites, report, frontier=frontier, announce=announce)
    schedule.begin()
    record_signals_on_start()
    try:
        process.start(stop_after_crawl=False)  # until SIGINT/SIGTERM
    finally:
        schedule.cancel()
        # The loop and its client are gone: one short connection says no refresh is due.
        redis_url, crawl_ids = config.redis or "", schedule.crawl_ids
        asyncio.run(clear_next_refresh(redis_url, config.redis_cluster, crawl_ids))


class Schedule:
    def __init__(
        self,
        process: AsyncCrawlerProcess,
        settings: ScheduleSettings,
        sites: Sequence[tuple[str, str]],
        report: Report,
        *,
        frontier: Frontier,
        announce: Announce | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.process = process
        self.settings = settings
        self.frontier = frontier
        self.sites = sites
        self.report = report
        self.announce = announce or (lambda nxt: None)
        self.rng = rng or random.Random()
        self.crawl_ids = [crawl_id for _, crawl_id in sites]
        self._driver: asyncio.Task[None] | None = None
        # An unchanged inventory (a 304: most rounds) is not parsed and planned again.
        self.plans = PlanCache()

    def begin(self) -> None:
        """Schedule the first round (it runs once the process starts its loop)."""
        first = self._round(self.settings.sink, self.sites)
        mode = self.settings.mode
        if isinstance(mode, rounds.FixedPeriod):
            driver = self._fixed(first, mode)
        else:
            driver = self._adaptive(first, mode)
        self._driver = first.get_loop().create_task(driver)

    def cancel(self) -> None:
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()

    def _round(
        self, sink: SinkSettings, sites: Sequence[tuple[str, str]]
    ) -> asyncio.Task[list[Produced]]:
        sinks, jobs = redis_jobs(sink, self.frontier, sites)
        crawler, crawl = start_inventory_crawl(self.process, sink.max_inflated, jobs, self.plans)

        async def outcome() -> list[Produced]:
            await crawl
            return produced(sites, sinks, job_errors(crawler, jobs))

        return crawl.get_loop().create_task(outcome())

    async def _results(self, round_: asyncio.Task[list[Produced]]) -> list[Produced]:
        try:
            return await round_
        except Exception:  # a broken round must not end the schedule
            log.exception("the round failed; the next one is tried on schedule")
            return []

    async def _fixed(self, first: asyncio.Task[list[Produced]], mode: rounds.FixedPeriod) -> None:
        """``--every DURATION``: every crawl, every DURATION (jittered)."""
        current = first
        refresh = dataclasses.replace(self.settings.sink, refresh=True)
        while True:
            results = await self._results(current)
            delay = rounds.fixed_delay(mode, self.rng)
            try:
                await record_next_refresh(self.frontier, self.crawl_ids, delay)
            except Exception as exc:  # Redis unreachable: status just lacks the time
                log.warning("could not record the next refresh time: %s", exc)
            self.report(results, delay)
            # The cached plans stay for the process's life: out of the collector's scans
            # (refcounting still frees them; docs/performance.md).
            gc.freeze()
            await asyncio.sleep(delay)
            current = self._round(refresh, self.sites)

    async def _adaptive(self, first: asyncio.Task[list[Produced]], mode: rounds.Adaptive) -> None:
        """``--every auto``: each crawl on its own interval; due crawls refreshed together."""
        refresh = dataclasses.replace(self.settings.sink, refresh=True)
        site_of = {crawl_id: site for site, crawl_id in self.sites}
        under_way = set(self.crawl_ids)  # a round was started: measured once it is over
        due_at: dict[str, int] = {}
        current: asyncio.Task[list[Produced]] | None = first
        producing = set(self.crawl_ids)  # in the inventory crawl under way
        while True:
            if current is not None and current.done():
                self.report(await self._results(current), None)
                gc.freeze()  # as in _fixed
                current, producing = None, set()
            now: int | None
            try:
                # Not before its inventory crawl is done: until then a crawl whose round
                # has not started yet still looks finished.
                for crawl_id in await self._over(under_way - producing):
                    nxt = await refresh_schedule.schedule_next(
                        self.frontier.crawl(crawl_id), self.rng, mode
                    )
                    under_way.discard(crawl_id)
                    due_at[crawl_id] = nxt.at_ms
                    self.announce(nxt)
                now = await self.frontier.registry.server_ms()
                due = sorted(rounds.due_by(due_at, now))
                if due and current is None:  # one inventory crawl at a time
                    for crawl_id in due:
                        await refresh_schedule.begin_round(self.frontier.crawl(crawl_id))
                        del due_at[crawl_id]
                    under_way.update(due)
                    producing = set(due)
                    current = self._round(refresh, [(site_of[c], c) for c in due])
                    continue
            except Exception as exc:  # Redis unreachable: try again in a moment
                log.warning("the refresh schedule could not be read or written: %s", exc)
                now = None
            busy = bool(under_way) or current is not None
            await asyncio.sleep(rounds.nap(due_at, now, busy))

    async def _over(self, crawl_ids: set[str]) -> list[str]:
        """The crawls among ``crawl_ids`` whose round is over: finished, or failed."""
        ids = sorted(crawl_ids)
        if not ids:
            return []
        summaries = await crawl_summaries(self.frontier, ids)
        return [s.crawl_id for s in summaries if s.is_settled]
