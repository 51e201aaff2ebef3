"""crawl_status: liveness is judged by each consumer's own lease."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from conftest import run

from invcrawl.common.settings.config import Config
from invcrawl.consumer.run import worker_settings
from invcrawl.consumer.worker import Worker
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import crawl_status, fleet_status


def test_consumers_alive_by_their_own_lease(redis_url: str, sync_redis: Any) -> None:
    async def job() -> list[str]:
        client = connect(redis_url)
        store = Frontier(client).crawl("s")
        await store.open({"site": "x"}, 2, 1)
        now = await store.server_ms()
        beats = {"fresh": now - 1_000, "short-dead": now - 4_000, "slow": now - 60_000}
        await client.zadd(store.keys.consumers, beats)
        await client.hset(
            store.keys.cinfo,
            mapping={
                "fresh": json.dumps({"lease_ms": 1_000}),
                "short-dead": json.dumps({"lease_ms": 1_000}),  # 4 s > 3 leases of 1 s
                "slow": json.dumps({"lease_ms": 30_000}),  # 60 s < 3 leases of 30 s
            },
        )
        status = await crawl_status(store, lease_ms=30_000)
        await client.aclose()
        return list(status.consumers_alive)

    assert run(job()) == ["fresh", "slow"]


def test_an_idle_consumer_is_listed_in_the_fleet_and_leaves_it_on_close(redis_url: str) -> None:
    """A consumer that serves no crawl (none is open) still shows in the fleet status,
    alive, with no crawls; once closed (a clean exit) it is gone from the list at once."""

    async def job() -> list[dict[str, Any]]:
        frontier = Frontier(connect(redis_url))
        idle = Worker(
            Frontier(connect(redis_url)), worker_settings(Config(redis=redis_url, lease=0.6))
        )
        feed = asyncio.ensure_future(anext(idle.feed(), None))
        await asyncio.sleep(0.5)  # more than one heartbeat (lease/3)
        seen = (await fleet_status(frontier, lease_ms=30_000)).as_dict()
        idle.request_stop()
        await feed
        await idle.close()
        later = (await fleet_status(frontier, lease_ms=30_000)).as_dict()
        await frontier.aclose()
        return [seen, later, idle.id]  # type: ignore[list-item]

    seen, later, consumer_id = run(job())
    (entry,) = [c for c in seen["consumers"] if c["id"] == consumer_id]
    assert entry["alive"] and entry["crawls"] == {} and entry["pid"] == os.getpid()
    assert seen["totals"]["consumers_alive"] >= 1
    assert [c for c in later["consumers"] if c["id"] == consumer_id] == []
