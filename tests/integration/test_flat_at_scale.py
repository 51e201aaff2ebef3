"""Flat at scale (issue 39): what a tick of the crawl supervisor and a consumer's claim and
commit cycle cost does not grow with the number of crawls Redis holds. Counted in Redis
commands (INFO commandstats deltas) at 10 and at 1,000 registered crawls, against the
real redis-server of the session: equal counts, never a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from conftest import run

from invcrawl.common.items import CrawlInfo, ItemStatus, PageOutcome, status_items
from invcrawl.common.settings.config import Config
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.consumer.crawls import BEAT_OTHERS
from invcrawl.consumer.pages import PageResult
from invcrawl.consumer.run import worker_settings
from invcrawl.consumer.worker import Worker
from invcrawl.frontier.connection import connect
from invcrawl.frontier.keys import ACTIVE, CRAWLS
from invcrawl.frontier.session import Frontier
from invcrawl.supervisor import CrawlRun

SIZES = (10, 1_000)


def fresh(url: str) -> None:
    """An empty server, its script cache too (each size loads the same scripts)."""
    client = redis.Redis.from_url(url)
    client.flushall()
    client.script_flush()
    client.close()


def commands(url: str) -> int:
    """Commands the server ran so far (every command but INFO, which this asks with)."""
    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


async def counted(url: str, step: Callable[[], Awaitable[Any]]) -> int:
    before = commands(url)
    await step()
    return commands(url) - before


def task(crawl: str) -> Task:
    return Task(
        f"{abs(hash(crawl)):016x}"[:16],
        f"http://{crawl}.test/p.html",
        (TaskEntry(f"{crawl}.f", "py", "function", 1, "f", "-"),),
    )


async def register(frontier: Frontier, crawl_ids: list[str]) -> None:
    """Open and produce crawls of one page each through the frontier's own functions,
    a hundred at a time."""

    async def one(crawl_id: str) -> None:
        session = frontier.crawl(crawl_id)
        await session.open({"site": f"http://{crawl_id}.test/"}, 1, 1)
        added = await session.enqueue([task(crawl_id)])
        await session.produced({"entries": 1, "pages": 1, "tasks": 1}, added)

    for start in range(0, len(crawl_ids), 100):
        await asyncio.gather(*(one(c) for c in crawl_ids[start : start + 100]))


def crawl_run(url: str, tmp: Path, crawl_ids: list[str]) -> CrawlRun:
    config = Config(redis=url, data_dir=tmp / "data", out_dir=tmp / "out", quiet=True)
    (tmp / "out").mkdir(parents=True, exist_ok=True)
    return CrawlRun(config, [(f"http://{c}.test/", c) for c in crawl_ids])


def supervisor_ticks(url: str, tmp: Path, size: int) -> tuple[int, int, int]:
    """The commands of the supervisor's first tick (every crawl: once), of a tick with
    nothing changed, and of a tick after one crawl changed."""

    async def job() -> tuple[int, int, int]:
        frontier = Frontier(connect(url))
        crawl_ids = [f"c{i:05d}" for i in range(size)]
        await register(frontier, crawl_ids)
        crawl = crawl_run(url, tmp, crawl_ids)
        crawl.sessions.update((c, frontier.crawl(c)) for c in crawl_ids)
        crawl.outputs.open(await frontier.registry.server_ms())
        try:
            first = await counted(url, lambda: crawl.tick(frontier))
            quiet = await counted(url, lambda: crawl.tick(frontier))
            await frontier.registry.mark_changed([crawl_ids[size // 2]])
            one = await counted(url, lambda: crawl.tick(frontier))
            assert crawl.summaries[crawl_ids[size // 2]].pages_total == 1
            return first, quiet, one
        finally:
            crawl.outputs.abandon()
            await frontier.aclose()

    return run(job())


@pytest.mark.timeout(120)
def test_a_supervisor_tick_costs_what_changed_not_the_number_of_crawls(
    redis_url: str, tmp_path: Path
) -> None:
    counts = {}
    for size in SIZES:
        fresh(redis_url)
        counts[size] = supervisor_ticks(redis_url, tmp_path / str(size), size)
    (first_small, quiet_small, one_small), (first_big, quiet_big, one_big) = counts.values()
    assert first_big > first_small  # the first tick reads every crawl, once
    assert quiet_small == quiet_big  # then a tick reads the journal only...
    assert one_small == one_big > quiet_small  # ...and the crawls it lists


def consumer_cycle(url: str, size: int) -> tuple[int, int, int]:
    """The commands of a consumer pinned to ``size`` crawls (one page each), after it
    attached to them: a look for pinned crawls, a claim of four pages, their commits,
    the mark of the crawls changed and the completion of the four crawls; then those of
    one heartbeat, and how many crawls it beat."""

    async def job() -> tuple[int, int, int]:
        frontier = Frontier(connect(url))
        crawl_ids = [f"c{i:05d}" for i in range(size)]
        await register(frontier, crawl_ids)
        # a lease of an hour: no beat or renewal (every lease/3) can fall inside a counted
        # step, however long a loaded machine makes it
        base = Config(redis=url, lease=3600.0, concurrency=4, burst=True)
        worker = Worker(
            Frontier(connect(url)), worker_settings(replace(base, crawl_ids=tuple(crawl_ids)))
        )
        try:
            await worker._discover()  # attaches to (and beats) every crawl: once
            worker.heartbeat.stop()
            assert len(worker.crawls) == size

            async def cycle() -> None:
                worker.crawls._next_discovery = 0.0  # (a look is due)
                await worker._discover()
                claims = await worker._claim_turn(4)
                assert len(claims) == 4
                for _, claim in claims:
                    info = CrawlInfo(claim.crawl_id, None, None)
                    items = status_items(info, claim.task, ItemStatus.OK, None)
                    await worker.settle(PageResult(claim, PageOutcome.FETCHED, items))
                await worker.crawls.mark_changes(now=True)
                await worker.crawls.retire_complete()
                assert len(worker.crawls) == size - 4

            commands = await counted(url, cycle)
            beaten = len(worker.crawls.to_beat(set()))
            worker.crawls._beat_next = 0
            return commands, await counted(url, worker.heartbeat.beat), beaten
        finally:
            worker.heartbeat.stop()
            await worker.frontier.aclose()
            await frontier.aclose()

    return run(job())


@pytest.mark.timeout(180)
def test_a_consumers_claim_commit_cycle_and_heartbeat_cost_the_same_at_any_number_of_crawls(
    redis_url: str,
) -> None:
    """At 50 and at 1,000 crawls served (more than a heartbeat's turn of
    ``BEAT_OTHERS``)."""
    counts = []
    for size in (50, 1_000):
        fresh(redis_url)
        counts.append(consumer_cycle(redis_url, size))
    assert counts[0] == counts[1], counts
    assert counts[0][2] == BEAT_OTHERS


async def opened(frontier: Frontier, crawl_ids: list[str], url: str) -> None:
    """Open crawls cheaply: their meta by the frontier's own ``open.lua``, a thousand
    calls a round trip (``Scripts.run_many``), and their registry entries (listed as
    known and open) in one pipeline."""
    for start in range(0, len(crawl_ids), 1_000):
        batch = crawl_ids[start : start + 1_000]
        await frontier._scripts.run_many(
            [("open", frontier.crawl(c).keys.bind("meta"), [1, 1, 1, "site", c], []) for c in batch]
        )
    client = redis.Redis.from_url(url)
    client.sadd(CRAWLS, *crawl_ids)
    client.zadd(ACTIVE, dict.fromkeys(crawl_ids, 1))
    client.close()


@pytest.mark.timeout(180)
def test_status_and_the_dashboard_show_a_page_of_ten_thousand_crawls(redis_url: str) -> None:
    """``status`` reads and shows a page of crawls, and the dashboard's snapshot a bounded
    number (open ones first), with counts of every crawl; what a page costs in Redis
    commands is the same at 100 and at 10,000 crawls."""
    from invcrawl.dashboard.snapshot import DASHBOARD_CRAWLS, Throughput, take
    from invcrawl.frontier.status import FLEET_PAGE, fleet_status
    from invcrawl.render_status import render_fleet

    async def job(size: int) -> tuple[int, Any, Any, dict[str, Any]]:
        frontier = Frontier(connect(redis_url))
        try:
            await opened(frontier, [f"c{i:05d}" for i in range(size)], redis_url)
            page = await counted(redis_url, lambda: fleet_status(frontier, limit=FLEET_PAGE))
            first = await fleet_status(frontier, limit=FLEET_PAGE)
            last = await fleet_status(frontier, limit=FLEET_PAGE, offset=size - 10)
            snapshot = await take(frontier, redis_url, 30_000, Throughput())
            return page, first, last, snapshot
        finally:
            await frontier.aclose()

    fresh(redis_url)
    small = run(job(100))
    fresh(redis_url)
    page, first, last, snapshot = run(job(10_000))
    assert page == small[0]  # a page costs the same, whatever the number of crawls
    assert len(first.crawls) == FLEET_PAGE and first.page()["total"] == 10_000
    assert first.totals()["crawls"] == 10_000 and first.totals()["open"] == 10_000
    assert [c.crawl_id for c in last.crawls][-1] == "c09999" and len(last.crawls) == 10
    assert not first.is_settled  # open crawls are off the page: --watch goes on
    text = render_fleet(first)
    assert "crawls 1-50 of 10000 shown" in text and len(text.splitlines()) < FLEET_PAGE + 10
    assert len(snapshot["crawls"]) == DASHBOARD_CRAWLS and snapshot["totals"]["crawls"] == 10_000


@pytest.mark.timeout(180)
def test_versions_shows_a_page_of_ten_thousand_projects(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``versions`` prints a page of 50 projects by name (``--page N``, ``--all``), and its
    JSON says which; an unknown project is a one-line error of bounded length, not a list
    of every project."""
    from invcrawl.commands.versions import PROJECTS_PAGE, versions
    from invcrawl.frontier.versions import CrawlRefError, crawl_versions

    size = 10_000
    fresh(redis_url)
    crawl_ids = [f"c{i:05d}" for i in range(size)]
    client = redis.Redis.from_url(redis_url)
    frontier = Frontier(connect(redis_url))
    pipe = client.pipeline(transaction=False)
    for i, crawl_id in enumerate(crawl_ids):
        meta = frontier.crawl(crawl_id).keys.meta
        fields = {"project": f"p{i:05d}", "version": "1.0", "state": "finished", "site": "s"}
        pipe.hset(meta, mapping=fields)
    pipe.sadd(CRAWLS, *crawl_ids)
    pipe.execute()
    client.close()
    run(frontier.aclose())

    def read(job: Any) -> Any:
        async def once() -> Any:
            reader = Frontier(connect(redis_url))
            try:
                return await job(reader)
            finally:
                await reader.aclose()

        return run(once())

    assert len(read(crawl_versions)) == size

    def shown(**options: Any) -> str:
        versions(Config(redis=redis_url, **options), read)
        return capsys.readouterr().out

    first = shown().splitlines()
    assert first[0].startswith("p00000: 1 version(s)") and f"p{PROJECTS_PAGE - 1:05d}" in first[-3]
    assert first[-1].startswith(f"projects 1-{PROJECTS_PAGE} of {size} shown: --page N")
    assert len(first) == 2 * PROJECTS_PAGE + 1  # a project's line and its version's, and the footer
    last = shown(page=size // PROJECTS_PAGE).splitlines()
    assert last[-2].strip().startswith("1.0") and last[-3].startswith("p09999:")
    assert shown(page=size // PROJECTS_PAGE + 1).startswith("no projects on this page: 10000")
    assert len(shown(show_all=True).splitlines()) == 2 * size  # no footer: every one shown
    listing = json.loads(shown(json=True, page=2))
    assert listing["page"] == {"offset": PROJECTS_PAGE, "shown": PROJECTS_PAGE, "total": size}
    assert listing["projects"][0]["project"] == f"p{PROJECTS_PAGE:05d}"
    one = json.loads(shown(json=True, project_name="P00042"))
    assert [p["project"] for p in one["projects"]] == ["p00042"]
    with pytest.raises(CrawlRefError) as error:
        shown(project_name="nope")
    assert "\n" not in str(error.value) and len(str(error.value)) < 400
    assert f"and {size - 20} more" in str(error.value)
