"""``invcrawl produce --every DURATION``: the long-running producer of a deployment that
keeps its sites fresh (compose's ``producer`` service with ``INVCRAWL_EVERY``).

One process, one Scrapy reactor, one Redis client and one host gate for every round: the
first round produces each site as ``invcrawl produce`` does; then, every DURATION
(jittered by 10%, so that many producers do not hit their hosts in step), a refresh
round re-checks every crawl (``frontier/refresh.py``) and the running consumers
revalidate its pages. A round starts no interpreter, imports nothing and opens no
connection, which is most of what a one-shot ``produce --refresh`` costs on an
unchanged site (docs/performance.md). A crawl still being crawled when a round comes is
left to finish (``refresh.lua`` never restarts one; producing again only resumes it).

``status`` shows each crawl's next refresh; SIGINT/SIGTERM stop the loop (a round in
progress is stopped like ``produce``: producing is idempotent, the next run resumes)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import random
from collections.abc import Callable, Sequence

from scrapy.crawler import AsyncCrawlerProcess

from common.config import Config
from common.plan import PlanCache
from consumer.politeness import HostGate
from consumer.settings import base_settings
from frontier.refresh import announce_next_refresh, mark_next_refresh
from frontier.session import Frontier
from producer.run import (
    Produced,
    job_errors,
    produced,
    producer_clients,
    quiet_download_errors,
    redis_jobs,
    start_inventory_crawl,
)

log = logging.getLogger("invcrawl.producer")
JITTER = 0.1

Report = Callable[[Sequence[Produced], float], None]


def produce_every(config: Config, sites: Sequence[tuple[str, str]], report: Report) -> None:
    """Produce every site, then refresh them all every ``config.every`` seconds until a
    signal stops the process. ``report(results, next_in)`` after each round."""
    assert config.every
    process = AsyncCrawlerProcess(base_settings(config))
    quiet_download_errors()  # after the process, which configures logging
    frontier, gate = producer_clients(config)
    schedule = Schedule(process, config, sites, report, frontier=frontier, gate=gate)
    schedule.begin()
    try:
        process.start(stop_after_crawl=False)  # until SIGINT/SIGTERM
    finally:
        schedule.cancel()
        # The loop and its client are gone: one short connection says no refresh is due.
        asyncio.run(clear_next_refresh(config, schedule.crawl_ids))


class Schedule:
    def __init__(
        self,
        process: AsyncCrawlerProcess,
        config: Config,
        sites: Sequence[tuple[str, str]],
        report: Report,
        *,
        frontier: Frontier,
        gate: HostGate,
    ) -> None:
        self.process = process
        self.config = config
        self.frontier = frontier
        self.gate = gate
        self.sites = sites
        self.report = report
        self.crawl_ids = [crawl_id for _, crawl_id in sites]
        self._driver: asyncio.Task[None] | None = None
        # An unchanged inventory (a 304: most rounds) is not parsed and planned again.
        self.plans = PlanCache()

    def begin(self) -> None:
        """Schedule the first round (it runs once the process starts its loop)."""
        first = self._round(self.config)
        self._driver = first.get_loop().create_task(self._rounds(first))

    def cancel(self) -> None:
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()

    def _round(self, config: Config) -> asyncio.Task[list[Produced]]:
        sinks, jobs = redis_jobs(config, self.frontier, self.sites)
        crawler, crawl = start_inventory_crawl(self.process, config, jobs, self.gate, self.plans)

        async def outcome() -> list[Produced]:
            await crawl
            return produced(self.sites, sinks, job_errors(crawler, jobs))

        return crawl.get_loop().create_task(outcome())

    async def _rounds(self, first: asyncio.Task[list[Produced]]) -> None:
        current = first
        refresh = dataclasses.replace(self.config, refresh=True)
        assert self.config.every
        while True:
            try:
                results = await current
            except Exception:  # a broken round must not end the schedule
                log.exception("the round failed; the next one is tried on schedule")
                results = []
            delay = self.config.every * random.uniform(1 - JITTER, 1 + JITTER)
            try:
                await mark_next_refresh(self.frontier, self.crawl_ids, delay)
            except Exception as exc:  # Redis unreachable: status just lacks the time
                log.warning("could not record the next refresh time: %s", exc)
            self.report(results, delay)
            # The cached plans stay for the process's life: out of the collector's scans
            # (a full scan of them took ~40 ms of a round; refcounting still frees them).
            gc.freeze()
            await asyncio.sleep(delay)
            current = self._round(refresh)


async def clear_next_refresh(config: Config, crawl_ids: Sequence[str]) -> None:
    try:
        await announce_next_refresh(config.redis or "", config.redis_cluster, crawl_ids, None)
    except Exception as exc:  # Redis gone too: status shows a time that has passed
        log.warning("could not clear the next refresh time: %s", exc)
