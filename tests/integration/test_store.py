"""The Lua scripts and the store against a real redis-server: enqueue, claim, lease,
fencing, commit with dedup, retries with backoff, dead letters, redrive, reaper,
release, completion, resharding."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from conftest import run
from redis.asyncio import Redis

from invcrawl.common.codec import item_json
from invcrawl.common.items import CrawlInfo, ItemLayout, PageOutcome, build_item, prepare
from invcrawl.common.sharding import slot_for
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier import admin
from invcrawl.frontier.connection import connect
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.states import CrawlState
from invcrawl.frontier.values import Claim
from support.accounting import stream_range

FETCHED = PageOutcome.FETCHED
CRAWL = CrawlInfo("t", "Proj", "1.0")


def make_task(n: int, entries: int = 2) -> Task:
    fp = hashlib.sha1(f"page-{n}".encode()).hexdigest()
    return Task(
        id=fp[:16],
        url=f"http://example.test/p{n}.html",
        entries=tuple(
            TaskEntry(f"mod.f{n}_{i}", "py", "function", 1, f"mod.f{n}_{i}", "-")
            for i in range(entries)
        ),
    )


LAYOUT = ItemLayout(4, 1)


def items_for(task: Task, doc: str = "body", status: str = "ok") -> list[Any]:
    return [
        prepare(build_item(CRAWL, task, e, {"status": status, "doc": f"{doc} {e.name}"}), LAYOUT)
        for e in task.entries
    ]


def with_store(
    redis_url: str,
    job: Callable[[CrawlSession, Redis], Awaitable[Any]],
    slots: int = 4,
    crawl: str = "t",
) -> Any:
    async def main() -> Any:
        client = connect(redis_url)
        store = Frontier(client).crawl(crawl)
        await store.open({"site": "x", "max_tries": 3}, slots, 4)
        try:
            return await job(store, client)
        finally:
            await client.aclose()

    return run(main())


async def claim_all(
    store: CrawlSession,
    consumer: str = "c1",
    n: int = 100,
    lease_ms: int = 30000,
    busy: bool = False,
) -> list[Claim]:
    layout = await store.refresh_layout()
    return await store.claim(consumer, list(range(layout.slots)), n, busy, lease_ms)


def test_enqueue_is_idempotent_and_sharded(redis_url: str, sync_redis: Any) -> None:
    tasks = [make_task(i) for i in range(40)]

    async def job(store: CrawlSession, _: Redis) -> tuple[int, int]:
        return await store.enqueue(tasks), await store.enqueue(tasks)

    first, second = with_store(redis_url, job)
    assert (first, second) == (40, 0)
    for slot in range(4):
        queued = sync_redis.lrange(f"invcrawl:{{t}}:q:{slot}", 0, -1)
        assert all(slot_for(task_id, 4) == slot for task_id in queued)
    assert sum(sync_redis.llen(f"invcrawl:{{t}}:q:{s}") for s in range(4)) == 40
    payload = json.loads(sync_redis.hget("invcrawl:{t}:task", tasks[0].id))
    assert payload["url"] == tasks[0].url and payload["v"] == 1


def test_claim_records_lease_token_and_delivery(redis_url: str, sync_redis: Any) -> None:
    async def job(store: CrawlSession, _: Redis) -> list[Claim]:
        await store.enqueue([make_task(i) for i in range(3)])
        return await claim_all(store, lease_ms=10_000)

    claims = with_store(redis_url, job)
    assert len(claims) == 3
    now_ms = time.time() * 1000
    tokens = set()
    for claim in claims:
        deadline = sync_redis.zscore(f"invcrawl:{{t}}:inflight:{claim.slot}", claim.task.id)
        assert now_ms + 8_000 < deadline < now_ms + 12_000
        assert sync_redis.hget("invcrawl:{t}:lease", claim.task.id) == claim.token
        assert claim.deliveries == 1 and claim.token.startswith("c1:")
        tokens.add(claim.token)
    assert len(tokens) == 3
    assert sum(sync_redis.llen(f"invcrawl:{{t}}:q:{s}") for s in range(4)) == 0


def test_commit_writes_items_and_acks_atomically(redis_url: str, sync_redis: Any) -> None:
    task = make_task(1, entries=3)

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([task])
        (claim,) = await claim_all(store)
        return await store.commit(claim, items_for(task), FETCHED), claim

    result, claim = with_store(redis_url, job)
    assert result.committed and result.new == 3
    entries = stream_range(sync_redis, "invcrawl:{t}:items")
    assert [e[1]["key"] for e in entries] == [e.key for e in task.entries]
    assert all(e[1]["kind"] == "new" and e[1]["task"] == task.id for e in entries)
    assert json.loads(item_json(entries[0][1]["data"]))["doc"] == "body mod.f1_0"
    assert sync_redis.zscore(f"invcrawl:{{t}}:inflight:{claim.slot}", task.id) is None
    assert not sync_redis.hexists("invcrawl:{t}:task", task.id)
    assert sync_redis.hget("invcrawl:{t}:stats", "status:ok") == "3"
    assert sync_redis.hget("invcrawl:{t}:stats", "pages_done") == "1"


def test_recommit_same_content_adds_nothing_and_changes_are_updates(
    redis_url: str, sync_redis: Any
) -> None:
    task = make_task(2)

    async def job(store: CrawlSession, client: Redis) -> list[Any]:
        results = []
        for doc in ("body", "body", "changed"):
            await client.srem(store.keys.seen, task.id)  # let the same page be produced again
            await store.enqueue([task])
            (claim,) = await claim_all(store)
            results.append(await store.commit(claim, items_for(task, doc), FETCHED))
        return results

    first, same, changed = with_store(redis_url, job)
    assert (first.new, same.new, same.updated, same.unchanged) == (2, 0, 0, 2)
    assert (changed.new, changed.updated) == (0, 2)
    kinds = [e[1]["kind"] for e in stream_range(sync_redis, "invcrawl:{t}:items")]
    assert kinds == ["new", "new", "update", "update"]
    assert sync_redis.hget("invcrawl:{t}:stats", "status:ok") == "2"


def test_status_counters_follow_updates_that_change_status(redis_url: str, sync_redis: Any) -> None:
    task = make_task(3, entries=3)

    async def job(store: CrawlSession, client: Redis) -> None:
        for doc, status in (("body", "ok"), ("gone", "anchor_missing"), ("gone", "anchor_missing")):
            await client.srem(store.keys.seen, task.id)
            await store.enqueue([task])
            (claim,) = await claim_all(store)
            await store.commit(claim, items_for(task, doc, status), FETCHED)

    with_store(redis_url, job)
    stats = sync_redis.hgetall("invcrawl:{t}:stats")
    # 3 items went ok -> anchor_missing once, then were recommitted unchanged.
    assert (stats["status:ok"], stats["status:anchor_missing"]) == ("0", "3")
    assert (stats["items_new"], stats["items_updated"], stats["items_unchanged"]) == ("3", "3", "3")


def test_commit_with_a_stale_token_is_fenced(redis_url: str, sync_redis: Any) -> None:
    task = make_task(3)

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([task])
        (claim,) = await claim_all(store)
        forged = Claim("t", claim.task, claim.token + "x", 1, claim.slot, False)
        return await store.commit(forged, items_for(task), FETCHED)

    result = with_store(redis_url, job)
    assert not result.committed and not result.expired
    assert sync_redis.xlen("invcrawl:{t}:items") == 0
    assert sync_redis.hget("invcrawl:{t}:stats", "fenced") == "1"


def test_commit_after_lease_expiry_is_fenced_even_before_reaping(
    redis_url: str, sync_redis: Any
) -> None:
    task = make_task(4)

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([task])
        (claim,) = await claim_all(store, lease_ms=50)
        await asyncio.sleep(0.15)
        return await store.commit(claim, items_for(task), FETCHED)

    result = with_store(redis_url, job)
    assert not result.committed and result.expired
    assert sync_redis.xlen("invcrawl:{t}:items") == 0


def test_fail_delays_with_backoff_then_dead_letters_at_the_limit(
    redis_url: str, sync_redis: Any
) -> None:
    task = make_task(5)

    async def job(store: CrawlSession, _: Redis) -> list[Any]:
        await store.enqueue([task])
        outcomes = []
        for delivery in (1, 2, 3):  # max_tries is 3 for this crawl
            claims = []
            while not claims:  # wait out the backoff
                claims = await claim_all(store)
                if not claims:
                    await asyncio.sleep(0.05)
            (claim,) = claims
            assert claim.deliveries == delivery
            early = await claim_all(store)
            assert early == []
            outcomes.append(
                await store.fail(claim, {"reason": "HTTP 503", "error": "HTTP 503"}, 200, 3)
            )
        return outcomes

    assert with_store(redis_url, job) == ["retry", "retry", "dead"]
    assert sync_redis.zscore("invcrawl:{t}:dlq", task.id) is not None
    why = json.loads(sync_redis.hget("invcrawl:{t}:dlq:why", task.id))
    assert why["reason"] == "HTTP 503" and why["tries"] == 3
    assert sync_redis.hget("invcrawl:{t}:stats", "retries") == "2"


def test_dead_tasks_and_redrive_reset_tries(redis_url: str, sync_redis: Any) -> None:
    task = make_task(6)

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([task])
        (claim,) = await claim_all(store)
        await store.fail(claim, {"reason": "HTTP 403"}, 0, 3, dead_now=True)
        dead = await admin.dead_tasks(store)
        assert await admin.redrive(store, None) == 1
        (again,) = await claim_all(store)
        return dead, again

    dead, again = with_store(redis_url, job)
    assert [(d["id"], d["reason"], d["tries"]) for d in dead] == [(task.id, "HTTP 403", 1)]
    assert dead[0]["url"] == task.url and dead[0]["entries"] == 2
    assert again.deliveries == 1 and sync_redis.zcard("invcrawl:{t}:dlq") == 0


def test_reaper_requeues_expired_leases_once_as_suspects(redis_url: str, sync_redis: Any) -> None:
    tasks = [make_task(10 + i) for i in range(3)]

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue(tasks)
        claims = await claim_all(store, lease_ms=50)
        await asyncio.sleep(0.15)
        reaped = [await store.reap(s, 3) for s in range(4)]
        again = [await store.reap(s, 3) for s in range(4)]
        late = await store.commit(claims[0], items_for(claims[0].task), FETCHED)
        busy = await claim_all(store, consumer="c2", busy=True)
        idle = await claim_all(store, consumer="c2")
        return reaped, again, late, busy, idle

    reaped, again, late, busy, idle = with_store(redis_url, job)
    assert sum(r for r, _ in reaped) == 3
    assert all(r == (0, 0) for r in again)  # idempotent
    assert not late.committed  # the old holder is fenced
    assert busy == []  # suspects are never handed to a busy consumer
    assert len(idle) == 1 and idle[0].suspect and idle[0].deliveries == 2  # alone
    assert sync_redis.scard("invcrawl:{t}:reaped") == 3


def test_reaper_dead_letters_after_the_limit(redis_url: str, sync_redis: Any) -> None:
    task = make_task(20)

    async def job(store: CrawlSession, _: Redis) -> None:
        await store.enqueue([task])
        for _ in range(3):
            (_claim,) = await claim_all(store, lease_ms=30)
            await asyncio.sleep(0.08)
            for slot in range(4):
                await store.reap(slot, 3)

    with_store(redis_url, job)
    why = json.loads(sync_redis.hget("invcrawl:{t}:dlq:why", task.id))
    assert why["reason"] == "lease expired" and why["tries"] == 3
    assert sync_redis.hexists("invcrawl:{t}:task", task.id)  # payload kept for redrive


def test_renew_extends_live_leases_and_reports_lost_ones(redis_url: str, sync_redis: Any) -> None:
    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([make_task(30), make_task(31), make_task(32)])
        a, b, c = await claim_all(store, lease_ms=300)
        forged = Claim("t", b.task, "other:1", 1, b.slot, False)
        await asyncio.sleep(0.1)
        lost = await store.renew("c1", [a, forged], 5000, {"pid": 1})
        await asyncio.sleep(0.3)
        expired_lost = await store.renew("c1", [a, c], 5000, {"pid": 1})
        return a, b, lost, c, expired_lost

    a, b, lost, c, expired_lost = with_store(redis_url, job)
    assert lost == {b.task.id}  # a forged token is not the lease holder
    assert c.task.id in expired_lost and a.task.id not in expired_lost  # expiry is final
    assert sync_redis.zscore("invcrawl:{t}:consumers", "c1") is not None


def test_release_returns_the_task_without_using_a_delivery(redis_url: str, sync_redis: Any) -> None:
    task = make_task(40)

    async def job(store: CrawlSession, _: Redis) -> Any:
        await store.enqueue([task])
        (claim,) = await claim_all(store)
        assert await store.release(claim)
        assert not await store.release(claim)  # second release is fenced
        (again,) = await claim_all(store)
        return again

    assert with_store(redis_url, job).deliveries == 1


def test_completion_needs_producer_done_and_every_set_empty(
    redis_url: str, sync_redis: Any
) -> None:
    task = make_task(50)

    async def job(store: CrawlSession, _: Redis) -> list[bool]:
        seen = [await store.is_complete()]  # producer still running
        await store.enqueue([task])
        await store.produced({"pages": 1}, 1)
        seen.append(await store.is_complete())  # queued
        (claim,) = await claim_all(store)
        seen.append(await store.is_complete())  # in flight
        await store.fail(claim, {"reason": "HTTP 500"}, 60_000, 3)
        seen.append(await store.is_complete())  # delayed
        return seen

    assert with_store(redis_url, job) == [False, False, False, False]

    async def finish(store: CrawlSession, client: Redis) -> bool:
        await client.delete(*[store.keys.delayed(s) for s in range(4)])
        await store.produced({"pages": 1}, 0)  # with_store reopened the crawl
        return await store.is_complete()

    assert with_store(redis_url, finish)
    assert sync_redis.hget("invcrawl:{t}:meta", "state") == "finished"


def test_completion_asked_without_finishing_leaves_the_state(
    redis_url: str, sync_redis: Any
) -> None:
    async def job(store: CrawlSession, _: Redis) -> list[int]:
        await store.enqueue([make_task(51)])
        await store.produced({"pages": 1}, 1)
        seen = [await store.completion(finish=False)]  # queued
        (claim,) = await claim_all(store)
        await store.fail(claim, {"reason": "HTTP 403"}, 0, 1, dead_now=True)
        seen.append(await store.completion(finish=False))  # dead-lettered: complete
        seen.append(int(await store.state() == CrawlState.FINISHED))  # but not marked
        seen.append(await store.completion(finish=True))
        seen.append(int(await store.state() == CrawlState.FINISHED))
        return seen

    assert with_store(redis_url, job, crawl="ask") == [0, 1, 0, 1, 1]


def test_completion_of_a_failed_crawl_says_so(redis_url: str) -> None:
    async def job(store: CrawlSession, _: Redis) -> list[int]:
        await store.enqueue([make_task(52)])
        # a producer that fails before it records the crawl produced
        await store._redis.hset(store.keys.meta, "state", "failed")
        return [await store.completion(finish=False), await store.completion(finish=True)]

    assert with_store(redis_url, job, crawl="failing") == [-1, -1]


def test_reshard_moves_queued_and_delayed_and_stale_callers_recover(
    redis_url: str, sync_redis: Any
) -> None:
    tasks = [make_task(60 + i) for i in range(30)]

    async def job(store: CrawlSession, client: Redis) -> Any:
        await store.enqueue(tasks)
        held = await claim_all(store, n=2)
        await store.fail(held[0], {"reason": "HTTP 500"}, 60_000, 3)
        stale = Frontier(client).crawl("t")
        await stale.refresh_layout()  # remembers 4 slots
        moved = await admin.reshard(store, 7)
        outcome = await stale.fail(held[1], {"reason": "HTTP 500"}, 60_000, 3)
        return moved, outcome, held

    (queued, delayed), outcome, held = with_store(redis_url, job)
    assert (queued, delayed) == (28, 1) and outcome == "retry"
    assert sync_redis.hget("invcrawl:{t}:meta", "slots") == "7"
    for slot in range(7):
        for task_id in sync_redis.lrange(f"invcrawl:{{t}}:q:{slot}", 0, -1):
            assert slot_for(task_id, 7) == slot
        for task_id in sync_redis.zrange(f"invcrawl:{{t}}:delayed:{slot}", 0, -1):
            assert slot_for(task_id, 7) == slot
    moved_held = sync_redis.zscore(
        f"invcrawl:{{t}}:delayed:{slot_for(held[1].task.id, 7)}", held[1].task.id
    )
    assert moved_held is not None  # the stale caller retried under the new slot count


def test_assign_gives_every_slot_exactly_one_owner(redis_url: str, sync_redis: Any) -> None:
    async def job(store: CrawlSession, _: Redis) -> Any:
        first = await store.assign_slots("a", 8, 5000, 5000, None)
        await store.assign_slots("b", 8, 5000, 5000, None)
        again = await store.assign_slots("a", 8, 5000, 5000, None)  # a drops b's half
        b = await store.assign_slots("b", 8, 5000, 5000, None)  # b takes it
        await store.drop_slots("a", 8)
        b_alone = await store.assign_slots("b", 8, 5000, 1, None)
        return first, again, b, b_alone

    first, again, b, b_alone = with_store(redis_url, job)
    assert first == (1, list(range(8)))
    assert again[0] == 2 and b[0] == 2
    assert sorted(again[1] + b[1]) == list(range(8)) and not set(again[1]) & set(b[1])
    assert b_alone[1] == list(range(8))
    owners = [sync_redis.get(f"invcrawl:{{t}}:owner:{s}") for s in range(8)]
    assert owners == ["b"] * 8


def test_acknowledged_writes_survive_redis_sigkill(fresh_redis: Any) -> None:
    tasks = [make_task(70 + i) for i in range(20)]

    async def before() -> Any:
        client = connect(fresh_redis.url)
        store = Frontier(client).crawl("t")
        await store.open({"site": "x"}, 4, 4)
        await store.enqueue(tasks)
        (claim, *_) = await claim_all(store)
        result = await store.commit(claim, items_for(claim.task), FETCHED)
        await client.aclose()
        return result

    assert run(before()).committed
    fresh_redis.kill()
    fresh_redis.start()

    async def after() -> Any:
        client = connect(fresh_redis.url)
        store = Frontier(client).crawl("t")
        try:
            return (
                await client.scard(store.keys.seen),
                await client.xlen(store.keys.items),
                await store.enqueue(tasks),
            )
        finally:
            await client.aclose()

    assert run(after()) == (20, 2, 0)


@pytest.mark.parametrize("crawl", ["a.b-c_d", "x" * 100])
def test_every_key_of_a_crawl_shares_its_hash_tag(crawl: str) -> None:
    keys = CrawlKeys(crawl)
    names = [keys.meta, keys.queue(3), keys.isum(9), keys.items, keys.owner(1), keys.dlq_why]
    assert {n.split("{")[1].split("}")[0] for n in names} == {crawl}
