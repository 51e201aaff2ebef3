"""The consumer's delivery loop in-process, against a real redis-server: the test plays
the spider (it takes claims from ``Worker.feed`` and settles them through
``Worker.settle``), so claim, renew, reap, fencing, retries, dead letters, release and
the choice of crawls are exercised without Scrapy or subprocesses."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from conftest import run

from invcrawl.common.items import CrawlInfo, ItemStatus, PageOutcome, status_items
from invcrawl.common.settings.config import Config
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.consumer.pages import PageFailure, PageResult
from invcrawl.consumer.run import worker_settings
from invcrawl.consumer.worker import Worker, WorkerSettings
from invcrawl.fetch.failures import Outcome
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.values import Claim

OK = ItemStatus.OK


def make_tasks(crawl: str, n: int) -> list[Task]:
    tasks = []
    for i in range(n):
        fp = hashlib.sha1(f"{crawl}-{i}".encode()).hexdigest()
        entries = (TaskEntry(f"{crawl}.f{i}", "py", "function", 1, f"f{i}", "-"),)
        tasks.append(Task(fp[:16], f"http://{crawl}.test/p{i}.html", entries))
    return tasks


async def produce(url: str, crawl: str, n: int, max_tries: int = 5, slots: int = 4) -> list[Task]:
    frontier = Frontier(connect(url))
    session = frontier.crawl(crawl)
    tasks = make_tasks(crawl, n)
    await session.open({"site": crawl, "max_tries": max_tries}, slots, 2)
    added = await session.enqueue(tasks)
    await session.produced({"entries": n, "pages": n, "tasks": n}, added)
    await frontier.aclose()
    return tasks


def settings(url: str, crawl_id: str | None = None, **kw: Any) -> WorkerSettings:
    base = Config(redis=url, lease=0.6, concurrency=4, burst=True, backoff_base=0.05)
    return worker_settings(replace(base, crawl_ids=(crawl_id,) if crawl_id else (), **kw))


async def commit(worker: Worker, claim: Claim) -> Any:
    items = status_items(CrawlInfo(claim.crawl_id, None, None), claim.task, OK, None)
    return await worker.settle(PageResult(claim, PageOutcome.FETCHED, items))


async def drive(worker: Worker, settle: Callable[[Claim], Awaitable[None]]) -> None:
    """The spider's part: every claim is settled in a task of its own, like a download."""
    pending: set[asyncio.Task[None]] = set()
    try:
        async for page in worker.feed():
            pending.add(asyncio.ensure_future(settle(page.claim)))
        await asyncio.gather(*pending)
    finally:
        await worker.close()


def stats(sync_redis: Any, crawl: str) -> dict[str, str]:
    return sync_redis.hgetall(f"invcrawl:{{{crawl}}}:stats")  # type: ignore[no-any-return]


def test_a_pinned_worker_settles_every_task_then_stops(redis_url: str, sync_redis: Any) -> None:
    async def main() -> Worker:
        await produce(redis_url, "a", 12)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="a"))
        await asyncio.wait_for(drive(worker, lambda c: commit(worker, c)), 20)
        return worker

    worker = run(main())
    assert not worker.held and not worker.crawls and worker.fatal is None
    assert stats(sync_redis, "a")["pages_done"] == "12"
    assert sync_redis.hget("invcrawl:{a}:meta", "state") == "finished"
    assert sync_redis.xlen("invcrawl:{a}:items") == 12


def test_an_unpinned_worker_serves_every_open_crawl_fairly(redis_url: str, sync_redis: Any) -> None:
    """A small crawl produced after a large one is served from the next claims on,
    not after the large one drains; both finish and leave the list of open crawls."""
    order: list[str] = []

    async def main() -> None:
        await produce(redis_url, "large", 60)
        await produce(redis_url, "small", 4)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, concurrency=2))

        async def settle(claim: Claim) -> None:
            order.append(claim.crawl_id)
            await asyncio.sleep(0.01)
            await commit(worker, claim)

        await asyncio.wait_for(drive(worker, settle), 30)

    run(main())
    assert order.count("small") == 4 and order.count("large") == 60
    last_small = max(i for i, c in enumerate(order) if c == "small")
    assert last_small < 12, order[:16]
    for crawl in ("large", "small"):
        assert sync_redis.hget(f"invcrawl:{{{crawl}}}:meta", "state") == "finished"
    assert sync_redis.zcard("invcrawl:active") == 0


def test_weights_share_claims_in_proportion(redis_url: str, sync_redis: Any) -> None:
    order: list[str] = []

    async def main() -> None:
        await produce(redis_url, "heavy", 40)
        await produce(redis_url, "light", 40)
        await connect(redis_url).hset("invcrawl:{heavy}:meta", "weight", 3)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, concurrency=1))

        async def settle(claim: Claim) -> None:
            order.append(claim.crawl_id)
            await commit(worker, claim)

        await asyncio.wait_for(drive(worker, settle), 30)

    run(main())
    first = order[:40]
    assert 27 <= first.count("heavy") <= 33, first  # 3:1 while both have work


def test_the_heartbeat_keeps_a_slow_page_leased(redis_url: str, sync_redis: Any) -> None:
    results: list[Any] = []

    async def main() -> None:
        await produce(redis_url, "slow", 3)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="slow"))

        async def settle(claim: Claim) -> None:
            await asyncio.sleep(2.0)  # > 3 leases of 0.6 s
            results.append(await commit(worker, claim))

        await asyncio.wait_for(drive(worker, settle), 20)

    run(main())
    assert len(results) == 3 and all(r.committed for r in results)
    assert "fenced" not in stats(sync_redis, "slow")


def test_a_lost_lease_is_dropped_and_its_late_commit_fenced(
    redis_url: str, sync_redis: Any
) -> None:
    results: list[Any] = []

    async def main() -> Worker:
        await produce(redis_url, "lost", 1, max_tries=3)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="lost"))
        client = connect(redis_url)
        first = True

        async def settle(claim: Claim) -> None:
            nonlocal first
            if first:  # another delivery takes the task over (as after a reap)
                first = False
                await client.hset("invcrawl:{lost}:lease", claim.task.id, "other:1")
                await asyncio.sleep(0.6)
                assert (claim.crawl_id, claim.task.id) not in worker.held  # the beat saw it
                results.append(await commit(worker, claim))
                # The other delivery gives it back, atomically as reap.lua would (a
                # consumer checking completion in between must not see it nowhere).
                pipe = client.pipeline(transaction=True)
                pipe.hdel("invcrawl:{lost}:lease", claim.task.id)
                pipe.zrem(f"invcrawl:{{lost}}:inflight:{claim.slot}", claim.task.id)
                pipe.rpush(f"invcrawl:{{lost}}:q:{claim.slot}", claim.task.id)
                await pipe.execute()
                return
            results.append(await commit(worker, claim))

        await asyncio.wait_for(drive(worker, settle), 20)
        await client.aclose()
        return worker

    run(main())
    assert [r.committed for r in results] == [False, True]
    assert stats(sync_redis, "lost")["fenced"] == "1"
    assert sync_redis.xlen("invcrawl:{lost}:items") == 1


def test_a_dead_consumers_tasks_are_reaped_and_redelivered_alone(
    redis_url: str, sync_redis: Any
) -> None:
    seen: list[tuple[int, bool, int]] = []  # (deliveries, suspect, held when yielded)

    async def main() -> None:
        await produce(redis_url, "reap", 5)
        ghosts = Frontier(connect(redis_url))
        ghost = ghosts.crawl("reap")
        await ghost.refresh_layout()
        claimed = await ghost.claim("ghost", [0, 1, 2, 3], 5, False, 200)  # never renewed
        assert len(claimed) == 5
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="reap"))

        async def settle(claim: Claim) -> None:
            seen.append((claim.deliveries, claim.suspect, len(worker.held)))
            await asyncio.sleep(0.05)
            await commit(worker, claim)

        await asyncio.wait_for(drive(worker, settle), 20)
        await ghosts.aclose()

    run(main())
    assert len(seen) == 5
    assert all(d == 2 and suspect and held == 1 for d, suspect, held in seen)
    assert int(stats(sync_redis, "reap")["reaped"]) == 5


def test_failures_back_off_then_dead_letter_at_the_crawls_limit(
    redis_url: str, sync_redis: Any
) -> None:
    deliveries: list[int] = []

    async def main() -> None:
        await produce(redis_url, "flaky", 1, max_tries=3)
        # The consumer's own limit is higher: the crawl's (its producer's) wins.
        worker = Worker(
            Frontier(connect(redis_url)), settings(redis_url, crawl_id="flaky", max_tries=9)
        )

        async def settle(claim: Claim) -> None:
            deliveries.append(claim.deliveries)
            await worker.settle(PageFailure(claim, Outcome("retry", "HTTP 503")))

        await asyncio.wait_for(drive(worker, settle), 20)

    run(main())
    assert deliveries == [1, 2, 3]
    assert sync_redis.zcard("invcrawl:{flaky}:dlq") == 1
    assert stats(sync_redis, "flaky")["retries"] == "2"
    assert sync_redis.hget("invcrawl:{flaky}:meta", "state") == "finished"


def test_stopping_releases_held_tasks_without_using_a_delivery(
    redis_url: str, sync_redis: Any
) -> None:
    async def main() -> int:
        await produce(redis_url, "stop", 6)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="stop"))
        held = 0
        async for _page in worker.feed():
            held += 1
            if held == 4:  # full: stop instead of settling anything
                worker.request_stop()
        await worker.close()
        return held

    assert run(main()) == 4
    queued = sum(sync_redis.llen(f"invcrawl:{{stop}}:q:{s}") for s in range(4))
    assert queued == 6 and sync_redis.hlen("invcrawl:{stop}:tries") == 0
    assert stats(sync_redis, "stop")["released"] == "4"


class SlowProducer:
    """An upstream producer (``produce --consume``) that finishes after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.done_at = time.monotonic() + seconds

    def poll(self) -> tuple[bool, str | None]:
        return time.monotonic() >= self.done_at, None


def test_a_finished_crawl_does_not_end_the_feed_while_its_producer_runs(
    redis_url: str, sync_redis: Any
) -> None:
    async def main() -> float:
        tasks = await produce(redis_url, "rerun", 2)
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="rerun"))
        await asyncio.wait_for(drive(worker, lambda c: commit(worker, c)), 20)
        assert sync_redis.hget("invcrawl:{rerun}:meta", "state") == "finished"
        # A re-run: its producer adds a page while the consumer already runs.
        upstream = SlowProducer(0.5)
        worker = Worker(
            Frontier(connect(redis_url)), settings(redis_url, crawl_id="rerun"), upstream=upstream
        )
        started = time.monotonic()

        async def add_page() -> None:
            await asyncio.sleep(0.3)
            producer = Frontier(connect(redis_url))
            session = producer.crawl("rerun")
            await session.open({}, 4, 2)
            extra = make_tasks("rerun-extra", 1)
            await session.produced({}, await session.enqueue([*tasks, *extra]))
            await producer.aclose()

        await asyncio.wait_for(
            asyncio.gather(drive(worker, lambda c: commit(worker, c)), add_page()), 20
        )
        return time.monotonic() - started

    assert run(main()) >= 0.5
    assert stats(sync_redis, "rerun")["pages_done"] == "3"
    assert sync_redis.hget("invcrawl:{rerun}:meta", "state") == "finished"


def test_a_pinned_worker_leaves_a_crawl_whose_producer_failed_after_enqueueing(
    redis_url: str, sync_redis: Any
) -> None:
    """Every page enqueued, then the producer failed before it recorded the crawl as
    produced (the crawl is `failed`): the pages are all settled, nothing can complete
    the crawl, and a worker pinned to it must leave it rather than wait for ever."""

    async def main() -> None:
        frontier = Frontier(connect(redis_url))
        session = frontier.crawl("cut")
        await session.open({"site": "cut", "max_tries": 5}, 4, 2)
        await session.enqueue(make_tasks("cut", 6))
        worker = Worker(Frontier(connect(redis_url)), settings(redis_url, crawl_id="cut"))

        async def fail_once_all_done() -> None:
            while int(sync_redis.hget(session.keys.stats, "pages_done") or 0) < 6:
                await asyncio.sleep(0.05)
            await session.produce_failed("the inventory could not be processed", {})

        failing = asyncio.ensure_future(fail_once_all_done())
        # (the bound only keeps a broken worker from hanging the suite)
        await asyncio.wait_for(drive(worker, lambda c: commit(worker, c)), 120)
        await failing
        await frontier.aclose()

    run(main())
    assert sync_redis.hget("invcrawl:{cut}:meta", "state") == "failed"
    assert stats(sync_redis, "cut").get("pages_done") == "6"
