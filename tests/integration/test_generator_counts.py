"""Items per page generator, counted by the commit scripts against a real redis-server
(stats ``generator:<name>``): exact across re-commits with the same content, changes of
status and of generator, and tombstones, and equal to a count of the latest items."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
from redis.asyncio import Redis
from test_store import CRAWL, FETCHED, claim_all, make_task, with_store

from invcrawl.common.codec import item_json
from invcrawl.common.items import LETTERS, ItemLayout, build_item, prepare
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.session import CrawlSession
from support.accounting import stream_range

STATS = "invcrawl:{t}:stats"


def _items(task: Any, generator: str | None, status: str = "ok", doc: str = "body") -> list[Any]:
    content = {"status": status, "doc": doc, "generator": generator}
    return [prepare(build_item(CRAWL, task, e, content), ItemLayout(4, 1)) for e in task.entries]


def _latest(sync_redis: Any) -> Counter[str]:
    """Items per generator, from the latest stream entry of each key."""
    latest: dict[str, dict[str, Any]] = {}
    for _, fields in stream_range(sync_redis, "invcrawl:{t}:items", count=100_000):
        key = fields["key"]
        if fields["kind"] == "removed":
            latest.pop(key, None)
        else:
            latest[key] = orjson.loads(item_json(fields["data"]))
    return Counter(i["generator"] for i in latest.values() if i["generator"])


def _counters(sync_redis: Any) -> Counter[str]:
    stats = sync_redis.hgetall(STATS)
    return Counter(
        {k.split(":", 1)[1]: int(v) for k, v in stats.items() if k.startswith("generator:")}
    )


def test_every_letter_decodes_to_its_status_and_generator() -> None:
    task = make_task(1, entries=1)
    for letter, (status, generator) in LETTERS.items():
        (item,) = _items(task, generator, status)
        assert item.value[-1] == letter


def test_generator_counters_are_exact_across_recommits_changes_and_removals(
    redis_url: str, sync_redis: Any
) -> None:
    task = make_task(5, entries=3)
    other = make_task(6, entries=2)
    rounds = [
        (task, "pydoctor", "ok", "body"),
        (other, "sphinx", "ok", "body"),
        (task, "pydoctor", "ok", "body"),  # unchanged: no entry, no count
        (task, "pydoctor", "anchor_missing", "gone"),  # status changes, generator stays
        (task, "unknown", "anchor_missing", "gone"),  # the same content, another generator
        (task, "mkdocstrings", "ok", "new"),
    ]
    seen: list[Counter[str]] = []

    async def job(store: CrawlSession, client: Redis) -> None:
        for page, generator, status, doc in rounds:
            await client.srem(store.keys.seen, page.id)
            await store.enqueue([page])
            (claim,) = await claim_all(store)
            await store.commit(claim, _items(page, generator, status, doc), FETCHED)
            seen.append(_counters(sync_redis))
        await Refresh(store).tombstone([other.entries[0].key], [], 4)

    with_store(redis_url, job)
    assert seen[0] == {"pydoctor": 3}
    assert seen[1] == seen[2] == seen[3] == {"pydoctor": 3, "sphinx": 2}
    assert seen[4] == {"pydoctor": 0, "unknown": 3, "sphinx": 2}
    assert seen[5] == {"pydoctor": 0, "unknown": 0, "mkdocstrings": 3, "sphinx": 2}
    final = +_counters(sync_redis)
    assert final == {"mkdocstrings": 3, "sphinx": 1}
    assert final == _latest(sync_redis)
    stats = sync_redis.hgetall(STATS)
    assert (stats["status:ok"], stats["status:anchor_missing"]) == ("4", "0")
