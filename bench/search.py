"""Symbol search (issue 38): index memory per item, search latency over >= 1M symbols
on one redis-server, and relevance on the query set of ``bench/search_queries.py``.

    python -m bench.search --items python.jsonl            # ~1.1M symbols, ~10 min
    python -m bench.search --items python.jsonl --quick    # 1 synthesized version each

``--items``: the JSON Lines output of ``invcrawl crawl /usr/share/doc/python3.11/html``
(real items, real first sentences). Against a private ``redis-server``:

1. the real crawl is written through ``commit.lua`` (open, enqueue, claim, commit: the
   consumers' path), as project ``Python`` 3.11;
2. every inventory of ``../shared/corpus/inventories`` becomes a project of
   ``--versions`` versions (each drops a seeded 2% of the entries and adds its own
   ones), its items given the first sentence of a real CPython item with the same last
   component, else of a seeded one; written the same way;
3. memory: ``MEMORY USAGE`` of every search key (``srec:<r>``, ``slog:<h>``, the vector
   log ``svec``, the link log ``slnk``) of each crawl, per indexed item; ``OBJECT ENCODING`` of each record hash (listpack or not);
4. latency: each query of the set run against every project's latest version (the
   default scope) and against ``--project Python``, timed around
   ``invcrawl.frontier.search.search_symbols`` (client and server on this host), p50/p95/max;
5. relevance: target first (names), MRR at 10 (phrases).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import redis

from bench.search_queries import BenchQuery, query_set
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.items import PageOutcome, bucket_count, prepare
from invcrawl.common.search.postings import term_logs_for
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.search.terms import last_component
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier import search as search_engine
from invcrawl.frontier.connection import connect
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.search import search_symbols
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import RedisServer, find_redis_server

# Debian's redis-server (jemalloc, 7.x), not the older build a wheel may put on PATH
SYSTEM_REDIS = ("/usr/bin/redis-server", "/usr/local/bin/redis-server")

INVENTORIES = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "inventories"
PER_PAGE = 40
MISSES: set[str] = set()  # name queries whose target was not first
NO_SCRIPTS = "--no-scripts" in sys.argv
CONCURRENT_CRAWLS = 3


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def load_crawl(
    frontier: Frontier, crawl_id: str, project: str, version: str, items: Sequence[dict[str, Any]]
) -> None:
    """Write ``items`` as one finished crawl through open, enqueue, claim and commit."""
    session = frontier.crawl(crawl_id)
    buckets = bucket_count(len(items))
    pages = [items[i : i + PER_PAGE] for i in range(0, len(items), PER_PAGE)]
    tasks = []
    for n, page in enumerate(pages):
        digest = hashlib.sha1(f"{crawl_id}/{n}".encode()).hexdigest()
        entries = tuple(
            TaskEntry(i["name"], i["domain"], i["role"], 1, i["name"], "-") for i in page
        )
        tasks.append(Task(id=digest[:16], url=f"http://bench.test/{crawl_id}/{n}", entries=entries))
    fields = {"site": f"http://bench.test/{crawl_id}/", "project": project, "version": version}
    layout = (await session.open({**fields, "max_tries": 3}, 1, buckets)).items
    await session.enqueue(tasks)
    await session.produced({"entries": len(items), "pages": len(tasks)}, len(tasks))
    by_task = {t.id: page for t, page in zip(tasks, pages, strict=True)}
    while True:
        claims = await session.claim("bench", [0], 64, False, 600_000)
        if not claims:
            break
        for claim in claims:
            prepared = [prepare(item, layout) for item in by_task[claim.task.id]]
            result = await session.commit(claim, prepared, PageOutcome.FETCHED)
            assert result.committed, crawl_id
    await session.completion(True)


def real_items(path: Path) -> list[dict[str, Any]]:
    items = []
    with path.open("rb") as lines:
        for line in lines:
            item = orjson.loads(line)
            if item.get("status") != "removed":
                items.append(item)
    return items


def synthesized(
    stem: str,
    entries: Sequence[Any],
    version: int,
    summaries: dict[str, list[str]],
    pool: list[str],
) -> list[dict[str, Any]]:
    """One version of an inventory's project: 2% of its entries dropped and 1% added per
    version (seeded), each with a real first sentence."""
    rng = random.Random(f"{stem}/{version}")
    out = []
    for entry in entries:
        if rng.random() < 0.02:
            continue
        out.append((entry.name, entry.domain, entry.role))
    out += [(f"{stem}.v{version}_added_{n}", "py", "function") for n in range(len(entries) // 100)]
    items = []
    seen = set()
    for name, domain, role in out:
        key = f"{domain}:{role}:{name}"
        if key in seen:
            continue
        seen.add(key)
        same = summaries.get(last_component(name).lower())
        pick = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16)
        doc = same[pick % len(same)] if same else pool[pick % len(pool)]
        items.append({
            "key": key, "name": name, "domain": domain, "role": role, "status": "ok",
            "url": f"http://bench.test/{stem}/{version}#{name}", "doc": doc,
            "checksum": hashlib.sha1(f"{key}/{doc}".encode()).hexdigest()[:16],
        })  # fmt: skip
    return items


def index_memory(client: redis.Redis, crawl_id: str, buckets: int) -> dict[str, Any]:
    keys = CrawlKeys(crawl_id)
    names = [keys.search_record(b) for b in range(buckets)]
    names += [keys.search_log(h) for h in range(term_logs_for(buckets))]
    names += [keys.svec, keys.slnk]
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.memory_usage(name, samples=0)
        pipe.object("encoding", name)
    replies = pipe.execute()
    sizes = [r or 0 for r in replies[0::2]]
    encodings = [
        (e or b"").decode() if isinstance(e, bytes) else str(e or "") for e in replies[1::2]
    ]
    records = sum(client.hlen(keys.search_record(b)) for b in range(buckets))
    return {
        "bytes": sum(sizes),
        "records": sum(sizes[:buckets]),
        "terms": sum(sizes[buckets:-2]),
        "vectors": sizes[-2],
        "links": sizes[-1],
        "items": records,
        "keys": len(names),
        "not_listpack": sum(
            1 for e in encodings[:buckets] if e and e not in ("listpack", "ziplist")
        ),
    }


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def server_usec(client: redis.Redis) -> int:
    """Microseconds Redis spent in commands so far (INFO commandstats), INFO's own left
    out."""
    stats = client.info("commandstats")
    return sum(int(v["usec"]) for k, v in stats.items() if k != "cmdstat_info")


async def timed_queries(
    url: str, queries: Sequence[BenchQuery], project: str | None, repeat: int
) -> tuple[dict[str, list[float]], dict[str, list[int | None]]]:
    """Per query: its latency (ms, around search_symbols), the client's CPU time in it
    and the server's time in its commands (ms); and the target's rank (1-based, None:
    not in the top 10) per query kind."""
    client = connect(url)
    if NO_SCRIPTS:  # as deploy's reader user, which may not run scripts: plain HGETs
        search_engine._no_scripts[client] = True
    plain = redis.Redis.from_url(url)
    times: dict[str, list[float]] = {"wall": [], "client_cpu": [], "server": []}
    ranks: dict[str, list[int | None]] = {}
    try:
        for _ in range(repeat):
            ranks = {}
            for q in queries:
                before = server_usec(plain)
                cpu = time.process_time()
                start = time.perf_counter()
                hits = await search_symbols(Frontier(client), q.query, project=project, limit=10)
                times["wall"].append((time.perf_counter() - start) * 1000)
                times["client_cpu"].append((time.process_time() - cpu) * 1000)
                times["server"].append((server_usec(plain) - before) / 1000)
                keys = [h.key for h in hits if project or h.project == "Python"]
                if not project:
                    keys = [h.key for h in hits]
                found = keys.index(q.target) + 1 if q.target in keys else None
                ranks.setdefault(q.kind, []).append(found)
                if found != 1 and q.kind != "phrase":
                    MISSES.add(f"{project or '*'} {q.query!r} -> {keys[:1]} (want {q.target})")
    finally:
        await client.aclose()
        plain.close()
    return times, ranks


def relevance(ranks: dict[str, list[int | None]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, found in sorted(ranks.items()):
        first = sum(1 for r in found if r == 1)
        mrr = sum(1 / r for r in found if r) / len(found)
        out[kind] = {"queries": len(found), "first": first, "first_pct": round(100 * first / len(found), 1), "mrr": round(mrr, 3)}  # fmt: skip
    names = [r for k, v in ranks.items() if k != "phrase" for r in v]
    out["names"] = {"queries": len(names), "first_pct": round(100 * sum(1 for r in names if r == 1) / len(names), 1)}  # fmt: skip
    return out


async def load_all(url: str, items: list[dict[str, Any]], versions: int) -> dict[str, Any]:
    client = connect(url)
    frontier = Frontier(client)
    summaries: dict[str, list[str]] = {}
    pool = []
    for item in items:
        summary = first_sentence(item.get("doc"))
        if summary:
            pool.append(summary)
            summaries.setdefault(last_component(item["name"]).lower(), []).append(summary)
    started = time.perf_counter()
    await load_crawl(frontier, "python-3.11", "Python", "3.11", items)
    loaded = {"python-3.11": len(items)}
    say(f"real crawl: {len(items)} items in {time.perf_counter() - started:.1f}s")
    jobs = []
    for path in sorted(INVENTORIES.glob("*.inv")):
        try:
            inventory = parse_inventory(path.read_bytes())
        except ValueError:
            continue
        stem = path.stem.removeprefix("objects_")
        for v in range(1, versions + 1):
            jobs.append((stem, inventory.entries, v))
    gate = asyncio.Semaphore(CONCURRENT_CRAWLS)

    async def one(stem: str, entries: Sequence[Any], v: int) -> None:
        async with gate:
            made = synthesized(stem, entries, v, summaries, pool)
            await load_crawl(frontier, f"{stem}-{v}", stem, f"{v}.0", made)
            loaded[f"{stem}-{v}"] = len(made)

    done = 0
    for batch in range(0, len(jobs), 12):
        await asyncio.gather(*(one(*job) for job in jobs[batch : batch + 12]))
        done += len(jobs[batch : batch + 12])
        say(f"  {done}/{len(jobs)} crawls, {sum(loaded.values()):,} symbols, {time.perf_counter() - started:.0f}s")  # fmt: skip
    await client.aclose()
    return loaded


async def loaded_counts(url: str) -> dict[str, int]:
    """Crawl id -> items, of the crawls a previous run loaded (``--skip-load``)."""
    client = connect(url)
    try:
        frontier = Frontier(client)
        crawls = await frontier.registry.known()
        return {
            c: int(await client.hget(CrawlKeys(c).meta, "entries") or 0) for c in sorted(crawls)
        }
    finally:
        await client.aclose()


def measure(
    url: str, items: list[dict[str, Any]], queries: list[BenchQuery], args: argparse.Namespace
) -> dict[str, Any]:
    plain = redis.Redis.from_url(url)
    if args.skip_load:
        loaded = asyncio.run(loaded_counts(url))
    else:
        loaded = asyncio.run(load_all(url, items, 1 if args.quick else args.versions))
    total = sum(loaded.values())
    memory = {"bytes": 0, "items": 0, "not_listpack": 0, "keys": 0, "vectors": 0, "links": 0}
    real: dict[str, Any] = {}
    for crawl_id, count in loaded.items():
        found = index_memory(plain, crawl_id, bucket_count(count))
        if crawl_id == "python-3.11":
            real = found
        for name in memory:
            memory[name] += found[name]
    figures: dict[str, Any] = {"symbols": total, "crawls": len(loaded)}
    figures["used_memory"] = plain.info("memory")["used_memory"]
    figures["redis"] = plain.info("server")["redis_version"]
    figures["index_bytes_per_item"] = round(memory["bytes"] / memory["items"], 1)
    figures["vector_bytes_per_item"] = round(memory["vectors"] / memory["items"], 1)
    figures["link_bytes_per_item"] = round(memory["links"] / memory["items"], 1)
    figures["index_real_bytes_per_item"] = round(real["bytes"] / real["items"], 1)
    figures["index_real"] = real
    figures["index_keys"] = memory["keys"]
    figures["index_keys_not_listpack"] = memory["not_listpack"]
    for scope in (None, "Python"):
        times, ranks = asyncio.run(timed_queries(url, queries, scope, args.repeat))
        label = scope or "latest of every project"
        figures[f"latency_ms[{label}]"] = {
            what: {
                "runs": len(values),
                "p50": round(statistics.median(values), 2),
                "p95": round(percentile(values, 95), 2),
                "max": round(max(values), 2),
            }
            for what, values in times.items()
        }
        figures[f"relevance[{label}]"] = relevance(ranks)
    figures["name_misses"] = sorted(MISSES)
    figures["load_average"] = os.getloadavg()
    figures["lookups"] = "HGET" if NO_SCRIPTS else "search_lookup.lua"
    plain.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=Path, required=True)
    parser.add_argument("--versions", type=int, default=14)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one version per inventory")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--redis", help="use this Redis instead of a private redis-server")
    parser.add_argument("--skip-load", action="store_true", help="--redis holds them already")
    parser.add_argument("--no-scripts", action="store_true", help="look terms up as the reader")
    args = parser.parse_args()
    items = real_items(args.items)
    queries = query_set(items)
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        server = None
        url = args.redis
        if url is None:
            binary = next((b for b in SYSTEM_REDIS if Path(b).exists()), None)
            server = RedisServer(Path(tmp) / "redis", binary=binary or find_redis_server())
            server.start()
            url = server.url
        try:
            figures = measure(url, items, queries, args)
        finally:
            if server is not None:
                server.stop()
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
