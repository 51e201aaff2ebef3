"""Crawls written straight into Redis, in any state, for the tests of what reads them
(``status``, the dashboard): no producer or consumer needed."""

from __future__ import annotations

from typing import Any

import redis

from invcrawl.frontier.keys import ACTIVE, CRAWLS, CrawlKeys


def now_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def add_crawl(
    client: redis.Redis,
    crawl_id: str,
    state: str,
    *,
    tasks: int = 10,
    done: int = 0,
    started_ago_s: float = 10,
    **meta: Any,
) -> CrawlKeys:
    k = CrawlKeys(crawl_id)
    now = now_ms(client)
    fields = {
        "state": state,
        "producer": "done" if state != "producing" else "running",
        "site": f"https://{crawl_id}.example/docs/",
        "slots": 2,
        "max_slots": 2,
        "tasks": tasks,
        "entries": tasks * 3,
        "created_at": now - int(started_ago_s * 1000) - 500,
        "started_at": now - int(started_ago_s * 1000),
        **meta,
    }
    if state == "finished":
        fields["finished_at"] = now - 1000
    client.hset(k.meta, mapping=fields)
    client.hset(
        k.stats,
        mapping={"pages_done": done, "status:ok": done * 3 - 1, "status:anchor_missing": 1},
    )
    client.sadd(CRAWLS, crawl_id)
    if state in ("producing", "running"):  # listed open, as a producer lists it
        client.zadd(ACTIVE, {crawl_id: now})
    else:
        client.zrem(ACTIVE, crawl_id)
    return k
