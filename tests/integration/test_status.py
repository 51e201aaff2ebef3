"""crawl_status: liveness is judged by each consumer's own lease."""

from __future__ import annotations

import json
from typing import Any

from conftest import run

from frontier.connection import connect
from frontier.session import Frontier
from frontier.status import crawl_status


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
        return list(status["consumers_alive"])

    assert run(job()) == ["fresh", "slow"]
