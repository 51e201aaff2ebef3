"""Claims of several crawls in one round trip (frontier/claims.py) against a real
redis-server: each crawl's claim is what a claim of its own would give, the scripts are
loaded when the server does not have them yet, and a stale layout is still raised."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run
from test_store import make_task

from invcrawl.frontier.claims import claim_many
from invcrawl.frontier.connection import connect
from invcrawl.frontier.scripts import StaleLayout
from invcrawl.frontier.session import Frontier


def test_claims_of_several_crawls_together(redis_url: str, sync_redis: Any) -> None:
    async def job() -> Any:
        client = connect(redis_url)
        frontier = Frontier(client)
        crawls = [frontier.crawl(f"many-{i}") for i in range(3)]
        for i, crawl in enumerate(crawls):
            await crawl.open({"site": "x"}, 2, 1)
            await crawl.enqueue([make_task(10 * i + j) for j in range(i + 1)])
        await client.script_flush()  # the server lost its scripts (a restart)
        asks = [(crawl, [0, 1], 2) for crawl in crawls] + [(crawls[0], [], 5)]
        got = await claim_many(asks, "c1", False, 30_000)
        again = await claim_many(asks, "c1", False, 30_000)  # loaded now: what is left
        for crawl in crawls:
            await client.delete(*sync_redis.keys(f"invcrawl:{{{crawl.crawl_id}}}:*"))
        await client.aclose()
        return got, again

    got, again = run(job())
    assert [len(claims) for claims in got] == [1, 2, 2, 0]
    assert all(c.crawl_id == f"many-{i}" for i, claims in enumerate(got[:3]) for c in claims)
    assert [len(claims) for claims in again] == [0, 0, 1, 0]
    assert len({c.task.id for claims in got + again for c in claims}) == 6


def test_a_stale_layout_is_raised(redis_url: str, sync_redis: Any) -> None:
    async def job() -> None:
        client = connect(redis_url)
        frontier = Frontier(client)
        crawls = [frontier.crawl(f"stale-{i}") for i in range(2)]
        for crawl in crawls:
            await crawl.open({"site": "x"}, 2, 1)
        try:
            replies = await frontier._scripts.run_many(
                [
                    ("complete", crawls[0].keys.bind("meta"), [2, "0"], []),
                    ("complete", crawls[1].keys.bind("meta"), [7, "0"], []),  # stale
                ]
            )
        finally:
            for crawl in crawls:
                await client.delete(*sync_redis.keys(f"invcrawl:{{{crawl.crawl_id}}}:*"))
            await client.aclose()
        raise AssertionError(replies)

    with pytest.raises(StaleLayout):
        run(job())
