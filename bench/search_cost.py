"""What the search index costs a crawl (issue 38): the CPython crawl's items committed
through ``commit.lua`` on a fresh ``redis-server``, by the checkout on ``PYTHONPATH``:

    python -m bench.search_cost --items python.jsonl                      # this branch
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=../main python -m bench.search_cost --items python.jsonl

Prints the consumer's ``prepare`` CPU time and its CPU in the commit calls (the Redis
client: packing, sending, reading; the items' vectors embedded there, per page, whose
CPU is measured alone too: ``delivery.vector_records``), the Redis time of the commit script per item
(``INFO commandstats``: ``evalsha`` usec), the script's ``APPEND`` calls a page and
Redis ``used_memory`` after. Run both
alternately, twice or more: single figures on a shared machine vary by ~30 %.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import redis

from bench.harness import default_redis_server, proc_cpu
from invcrawl.common.items import PageOutcome, bucket_count, prepare
from invcrawl.common.search import semantic
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier.connection import connect
from invcrawl.frontier.delivery import vector_records
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import RedisServer

PER_PAGE = 40  # items a page: the CPython docs' average is 31


async def commit_all(
    url: str,
    items: list[dict[str, Any]],
    per_page: int,
    *,
    index: bool = True,
    vectors: bool = True,
) -> tuple[float, float]:
    """Commit every item as one crawl, ``per_page`` items a page; returns the CPU seconds
    ``prepare`` took and those of the commit calls."""
    client = connect(url)
    session = Frontier(client).crawl("cost")
    buckets = bucket_count(len(items))
    pages = [items[i : i + per_page] for i in range(0, len(items), per_page)]
    tasks = [
        Task(
            id=hashlib.sha1(str(n).encode()).hexdigest()[:16],
            url=f"http://bench.test/{n}",
            entries=tuple(
                TaskEntry(i["name"], i["domain"], i["role"], 1, i["name"], "-") for i in page
            ),
        )
        for n, page in enumerate(pages)
    ]
    meta = {"site": "x", "max_tries": 3} | ({} if index else {"retain_items": "exported"})
    layout = (await session.open(meta, 1, buckets)).items  # (retaining exported: no index)
    if not vectors:  # as a crawl created before the vector log: commit.lua appends none
        await client.hdel(session.keys.meta, "vectors")
    await session.enqueue(tasks)
    await session.produced({"entries": len(items)}, len(tasks))
    cpu = time.process_time()
    prepared = {
        t.id: [prepare(i, layout) for i in page] for t, page in zip(tasks, pages, strict=True)
    }
    spent = time.process_time() - cpu
    semantic.load()  # (once a process, at its first commit: not an item's cost)
    cpu = time.process_time()
    for page in prepared.values():
        vector_records(page)
    embedding = time.process_time() - cpu
    print(f"embedding the vectors: {embedding / len(items) * 1e6:.1f} us of CPU per item")
    claims = await session.claim("bench", [0], len(tasks), False, 600_000)
    cpu = time.process_time()
    for claim in claims:
        await session.commit(claim, prepared[claim.task.id], PageOutcome.FETCHED)
    committing = time.process_time() - cpu
    await client.aclose()
    return spent, committing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=Path, required=True)
    parser.add_argument("--per-page", type=int, default=PER_PAGE, help="items a commit")
    parser.add_argument(
        "--without-index", action="store_true", help="the commit without the search index"
    )
    parser.add_argument(
        "--without-vectors", action="store_true", help="the index without its vector log"
    )
    args = parser.parse_args()
    items = [orjson.loads(line) for line in args.items.read_bytes().splitlines() if line]
    items = [i for i in items if i.get("status") != "removed"]
    binary = default_redis_server()
    with tempfile.TemporaryDirectory(prefix="bench-search-cost-") as tmp:
        server = RedisServer(Path(tmp) / "redis", binary=binary)
        server.start()
        try:
            assert server.process is not None
            redis0 = proc_cpu(server.process.pid)
            spent, committing = asyncio.run(
                commit_all(
                    server.url,
                    items,
                    args.per_page,
                    index=not args.without_index,
                    vectors=not args.without_vectors,
                )
            )
            redis_cpu = proc_cpu(server.process.pid) - redis0
            plain = redis.Redis.from_url(server.url)
            commands = plain.info("commandstats")
            usec = int(commands.get("cmdstat_evalsha", {}).get("usec", 0))
            appends = int(commands.get("cmdstat_append", {}).get("calls", 0))
            memory = plain.info("memory")["used_memory"]
            vectors = int(plain.memory_usage(CrawlKeys("cost").svec, samples=0) or 0)
            plain.close()
        finally:
            server.stop()
    pages = -(-len(items) // args.per_page)
    print(
        f"{len(items)} items: prepare {spent:.2f} CPU-s, commit calls {committing:.2f} CPU-s; "
        f"{appends / pages:.0f} APPENDs a page; commit.lua {usec / len(items):.1f} "
        f"us of Redis time per item; Redis process CPU {redis_cpu:.2f} s "
        f"({redis_cpu / len(items) * 1e6:.1f} us per item: the AOF's writes too); "
        f"used_memory {memory / 1e6:.1f} MB; the vector log {vectors / len(items):.1f} B "
        "per item"
    )


if __name__ == "__main__":
    main()
