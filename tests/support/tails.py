"""Several crawls' stream tails pulled together (``frontier/export.pull_tails``), on one
Redis or a Redis Cluster (tests/integration/test_export.py, test_cluster.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from invcrawl.frontier.connection import connect
from invcrawl.frontier.export import CHUNK, StreamTail, pull_tails
from invcrawl.frontier.session import CrawlSession, Frontier


async def fill(client: Any, store: CrawlSession, first: int, last: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(first, last):
        data = json.dumps({"key": f"{store.crawl_id}-{i}"})
        pipe.xadd(store.keys.items, {"key": f"k{i}", "sum": "1", "data": data})
    await pipe.execute()


def pulled_together(url: str, crawl_ids: list[str], cluster: bool = False) -> list[list[int]]:
    """Pull four crawls' tails together (one of them past a chunk, one stale, one empty
    at first), three times; the lines must be those each tail pulls alone. Returns the
    count of lines each pull gave, per crawl."""

    async def job() -> list[list[int]]:
        client = connect(url, cluster)
        stores = [Frontier(client).crawl(c) for c in crawl_ids]
        tails = [StreamTail(store) for store in stores]
        got: list[list[bytes]] = [[] for _ in stores]
        counts: list[list[int]] = [[] for _ in stores]
        await fill(client, stores[0], 0, CHUNK + 5)  # more than one chunk
        await fill(client, stores[1], 0, 3)
        await fill(client, stores[2], 0, 3)
        await fill(client, stores[2], 1, 2)  # a key again: stale
        for round_ in range(3):
            for lines, count, pulled in zip(got, counts, await pull_tails(tails), strict=True):
                assert isinstance(pulled, list)
                lines.extend(pulled)
                count.append(len(pulled))
            more = CHUNK + 5 + 2 * round_
            await fill(client, stores[0], more, more + 2)
            await fill(client, stores[3], round_, round_ + 1)
        alone = [await StreamTail(store).pull() for store in stores]
        # every line once, in stream order, as a tail of its own pulls them
        assert got[:3] == [alone[0][: CHUNK + 9], alone[1], alone[2]]
        assert got[3] == alone[3][:2]
        await client.delete(*[store.keys.items for store in stores])
        await client.aclose()
        return counts

    return asyncio.run(job())
