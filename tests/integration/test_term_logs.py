"""How many term logs a crawl's search index has (common/search/postings.py), on a real
redis-server: a crawl gets one log per four dedup buckets when it is created, recorded
in its meta, and every writer and reader uses that count; a crawl created before the
count was recorded keeps its four logs a bucket through a reopen, commits, search,
``--reindex`` and ``forget``; ``status`` counts the index's memory."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run

from invcrawl.common.items import bucket_count
from invcrawl.common.search.postings import FIRST_TERM_LOGS_PER_BUCKET, term_logs_for
from invcrawl.frontier.connection import connect
from invcrawl.frontier.forget import forget
from invcrawl.frontier.search import search_symbols
from invcrawl.frontier.search_index import reindex
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import crawl_status
from support.symbols import build_crawl

pytestmark = pytest.mark.integration

# 640 symbols: 10 dedup buckets, so 2 term logs (40 under the first layout)
SYMBOLS = {
    f"pkg.mod{m}.func{f}": ("function", f"Frobnicate the widget number {m * 32 + f}.")
    for m in range(20)
    for f in range(32)
}
BUCKETS = bucket_count(len(SYMBOLS))
SAMPLE = [f"pkg.mod{m}.func{f}" for m in range(0, 20, 3) for f in (0, 17, 31)]


def crawl_state(url: str, first_term_logs: bool) -> dict[str, Any]:
    crawl_id = "logs-1.0"

    async def main() -> dict[str, Any]:
        client = connect(url)
        try:
            frontier = Frontier(client)
            await build_crawl(
                frontier,
                crawl_id,
                ("Logs", "1.0"),
                SYMBOLS,
                per_page=32,
                first_term_logs=first_term_logs,
            )
            session = frontier.crawl(crawl_id)
            logs = sorted(
                [int(key.rsplit(":", 1)[1]) async for key in client.scan_iter(match="*:slog:*")]
            )
            dump = {n: await client.dump(session.keys.search_log(n)) for n in logs}
            found = [
                [hit.name for hit in await search_symbols(Frontier(client), name, limit=1)]
                for name in SAMPLE
            ]
            memory = (await crawl_status(session)).redis_memory
            index_keys = [
                key
                for family in ("srec", "slog")
                async for key in client.scan_iter(match=f"*:{family}:*")
            ] + [session.keys.svec]
            exact = sum([await client.memory_usage(key, samples=0) or 0 for key in index_keys])
            reindexed = await reindex(session)
            again = {n: await client.dump(session.keys.search_log(n)) for n in logs}
            again_vectors = await client.strlen(session.keys.svec)
            layout = await session.refresh_layout()
            meta = await client.hgetall(session.keys.meta)  # the stored fields, raw
            assert (await forget(session)).deleted
            left = [key async for key in client.scan_iter(match="invcrawl:{logs-1.0}:*")]
            return {
                "meta": meta,
                "layout": layout,
                "logs": logs,
                "found": found,
                "memory": memory,
                "exact": exact,
                "reindexed": reindexed,
                "unchanged": again == dump and again_vectors == len(SYMBOLS) * 134,
                "left": left,
            }
        finally:
            await client.aclose()

    return run(main())


def test_a_new_crawl_has_a_log_per_four_buckets(redis_url: str) -> None:
    got = crawl_state(redis_url, first_term_logs=False)
    assert BUCKETS == 10 and term_logs_for(BUCKETS) == 2
    assert got["meta"]["term_logs"] == "2" and got["layout"].term_logs == 2
    assert got["logs"] == [0, 1]  # 20 pages of 32 items, every posting in one of two logs
    assert got["found"] == [[name] for name in SAMPLE]
    assert got["reindexed"] == len(SYMBOLS) and got["unchanged"]  # nothing added again
    assert got["left"] == []
    # status: the index's memory, estimated from 8 of its 10 records, both its logs and
    # its vector log
    memory = got["memory"]
    assert 0.8 * got["exact"] <= memory["search_index"] <= 1.2 * got["exact"]
    assert memory["total"] == sum(v for k, v in memory.items() if k != "total")


def test_a_crawl_created_before_the_count_keeps_its_first_layout(redis_url: str) -> None:
    got = crawl_state(redis_url, first_term_logs=True)
    first = BUCKETS * FIRST_TERM_LOGS_PER_BUCKET
    assert "term_logs" not in got["meta"] and got["layout"].term_logs == first
    assert len(got["logs"]) > first // 2 and got["logs"][-1] < first  # spread over 40
    assert got["found"] == [[name] for name in SAMPLE]
    assert got["reindexed"] == len(SYMBOLS) and got["unchanged"]
    assert got["left"] == []  # forget knew its 40 logs
