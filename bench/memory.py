"""Redis memory per queued page task and per deduplicated item, on a real crawl.

    python -m bench.memory http://127.0.0.1:8000/      # a site served over HTTP

Against a private ``redis-server`` (``invcrawl.localredis.server.RedisServer``, AOF with the
default fsync), one crawl is driven step by step so that the queue can be measured
before anyone consumes it:

1. empty server: ``INFO memory`` ``used_memory`` (minus the Lua script cache and the
   client and AOF buffers, which are not crawl state);
2. ``invcrawl produce``: every task queued, nothing claimed. ``used_memory`` delta per
   task, and ``MEMORY USAGE <key> SAMPLES 0`` of every key of the crawl, grouped by kind
   (task payload hash, ``seen`` set, slot queues, metadata);
3. ``invcrawl consume --burst`` (one consumer) runs the crawl to completion;
4. ``MEMORY USAGE`` of the dedup state (``isum:<b>`` buckets) and of the items stream,
   then ``used_memory`` deltas measured by deleting the stream, then the buckets
   (``DEL`` frees synchronously, so the delta is exactly what the structure held).

"Per item" divides by the deduplicated items (the fields of all ``isum`` buckets).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import redis

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer

CRAWL_ID = "bench-memory"


def used_memory(client: redis.Redis) -> int:
    """``used_memory`` without what is not crawl state: the Lua script cache (11 scripts,
    ~20 KB, loaded by the first client) and client and AOF buffers (transient)."""
    info = client.info("memory")
    overheads = (
        "used_memory_scripts",
        "mem_clients_normal",
        "mem_clients_slaves",
        "mem_aof_buffer",
    )
    return int(info["used_memory"]) - sum(int(info.get(k, 0)) for k in overheads)


def key_kind(key: str, base: str) -> str:
    rest = key[len(base) + 1 :]
    for prefix, kind in (
        ("q:", "queues"),
        ("isum:", "isum"),
        ("inflight:", "inflight"),
        ("delayed:", "delayed"),
        ("owner:", "owner"),
    ):
        if rest.startswith(prefix):
            return kind
    return rest


def key_usage(client: redis.Redis, crawl_id: str) -> dict[str, dict[str, int]]:
    """MEMORY USAGE (exact: SAMPLES 0) of every key of the crawl, by kind."""
    keys = CrawlKeys(crawl_id)
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"keys": 0, "bytes": 0, "listpack": 0})
    for key in client.scan_iter(match=keys.pattern(), count=1000):
        name = key.decode()
        kind = key_kind(name, keys.base)
        usage = client.memory_usage(key, samples=0) or 0
        out[kind]["keys"] += 1
        out[kind]["bytes"] += int(usage)
        if kind == "isum" and client.object("encoding", key) in (b"listpack", b"ziplist"):
            out[kind]["listpack"] += 1
    return dict(out)


def invcrawl(*args: str, env: dict[str, str] | None = None, log: Path | None = None) -> int:
    argv = [sys.executable, "-m", "invcrawl", *args]
    with open(log or os.devnull, "ab") as err:
        return subprocess.run(
            argv, check=False, stdout=subprocess.DEVNULL, stderr=err, env=env
        ).returncode


def export_all(url: str, workdir: Path, client: redis.Redis, env: dict[str, str] | None) -> None:
    """``export --follow`` until the crawl's stream is empty (every entry acknowledged by
    the one export group, then trimmed: ``--retain-items exported``)."""
    follower = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "export", "--redis", url, "--crawl-id", CRAWL_ID,
         "--follow", "-o", str(workdir / "exported.jsonl")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while client.xlen(CrawlKeys(CRAWL_ID).items) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        follower.terminate()
        follower.wait(timeout=60)


def measure(
    site: str,
    workdir: Path,
    env: dict[str, str] | None = None,
    binary: str | None = None,
    retain: str = "all",
) -> dict[str, Any]:
    server = RedisServer(workdir / "redis-memory", binary=binary)  # fsync: the default
    server.start()
    log = workdir / "memory.log"
    try:
        client = redis.Redis.from_url(server.url)
        keys = CrawlKeys(CRAWL_ID)
        empty = used_memory(client)
        code = invcrawl(
            "produce", site, "--redis", server.url, "--crawl-id", CRAWL_ID,
            "--retain-items", retain, env=env, log=log,
        )  # fmt: skip
        if code != 0:
            raise RuntimeError(f"invcrawl produce failed ({code}): see {log}")
        produced = used_memory(client)
        tasks = int(client.hlen(keys.task))
        entries = int(client.hget(keys.meta, "entries") or 0)
        queued = key_usage(client, CRAWL_ID)

        code = invcrawl(
            "consume", "--redis", server.url, "--crawl-id", CRAWL_ID, "--burst", env=env, log=log
        )
        if code != 0:
            raise RuntimeError(f"invcrawl consume failed ({code}): see {log}")
        done = used_memory(client)
        if retain == "exported":
            export_all(server.url, workdir, client, env)
        exported = used_memory(client)
        final = key_usage(client, CRAWL_ID)
        buckets = [keys.isum(b) for b in range(int(client.hget(keys.meta, "buckets") or 0))]
        items = sum(int(client.hlen(b)) for b in buckets)
        stream_len = int(client.xlen(keys.items))
        client.delete(keys.items)
        without_stream = used_memory(client)
        for start in range(0, len(buckets), 500):
            client.delete(*buckets[start : start + 500])
        without_isum = used_memory(client)
        aof = sum(f.stat().st_size for f in (workdir / "redis-memory").rglob("*.aof*"))
        client.close()
    finally:
        server.stop()
    isum = final.get("isum", {"keys": 0, "bytes": 0, "listpack": 0})
    stream = final.get("items", {"bytes": 0})
    queued_total = sum(v["bytes"] for v in queued.values())
    return {
        "tasks": tasks,
        "entries": entries,
        "items": items,
        "stream_entries": stream_len,
        "used_memory_empty": empty,
        "used_memory_produced": produced,
        "used_memory_done": done,
        "per_task_used_memory": (produced - empty) / max(tasks, 1),
        "per_task_keys": queued_total / max(tasks, 1),
        "per_entry_queued": (produced - empty) / max(entries, 1),
        "queued_by_kind": queued,
        "final_by_kind": final,
        "isum_buckets": isum["keys"],
        "isum_listpack": isum["listpack"],
        "per_item_isum": isum["bytes"] / max(items, 1),
        "per_item_isum_used_memory": (without_stream - without_isum) / max(items, 1),
        "per_item_stream": stream["bytes"] / max(items, 1),
        "per_item_stream_used_memory": (done - without_stream) / max(items, 1),
        "per_item_done_used_memory": (done - empty) / max(items, 1),
        "retain": retain,
        "per_item_after_export_used_memory": (exported - empty) / max(items, 1),
        "aof_bytes": aof,
    }


def render(m: dict[str, Any]) -> str:
    q = m["queued_by_kind"]

    def per_task(kind: str) -> str:
        return f"{q.get(kind, {}).get('bytes', 0) / max(m['tasks'], 1):.0f}"

    return "\n".join(
        [
            f"Redis memory (one real crawl, 1 consumer): {m['tasks']} tasks, "
            f"{m['entries']} entries, {m['items']} deduplicated items",
            f"  queued page task, used_memory delta   {m['per_task_used_memory']:9.0f} B/task "
            f"({m['per_entry_queued']:.0f} B/entry)",
            f"  queued page task, MEMORY USAGE keys   {m['per_task_keys']:9.0f} B/task "
            f"(task payloads {per_task('task')}, seen {per_task('seen')}, "
            f"queues {per_task('queues')}, meta {per_task('meta')})",
            f"  dedup state per item, MEMORY USAGE    {m['per_item_isum']:9.1f} B/item "
            f"({m['isum_buckets']} isum buckets, {m['isum_listpack']} listpack) (target <= 40)",
            f"  dedup state per item, used_memory     {m['per_item_isum_used_memory']:9.1f} B/item "
            "(delta on DEL of the buckets)",
            f"  items stream per item, MEMORY USAGE   {m['per_item_stream']:9.0f} B/item "
            f"(used_memory delta {m['per_item_stream_used_memory']:.0f})",
            f"  whole crawl state after the crawl     {m['per_item_done_used_memory']:9.0f} B/item "
            f"(AOF on disk {m['aof_bytes'] / max(m['items'], 1):.0f} B/item)",
            f"  whole crawl state after export        "
            f"{m['per_item_after_export_used_memory']:9.0f} B/item "
            f"(--retain-items {m['retain']}; targets: all <= 2048, exported <= 100)",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Redis memory per task and per item")
    parser.add_argument("site", help="docs base URL (or a local directory)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--retain",
        choices=("all", "exported"),
        default="all",
        help="--retain-items of the crawl; exported: `export --follow` runs until the "
        "stream is trimmed, then the memory left is measured",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="invcrawl-bench-memory-") as tmp:
        result = measure(args.site, Path(tmp), retain=args.retain)
    print(json.dumps(result) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
