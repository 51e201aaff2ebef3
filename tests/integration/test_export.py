"""IncrementalExport (the crawl's export while it runs) against a real redis-server:
the same file as the two-pass export_items, updated items included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run

from invcrawl.frontier.connection import connect
from invcrawl.frontier.export import CHUNK
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.output.export import IncrementalExport, export_to
from support.tails import pulled_together


def add(client: Any, store: CrawlSession, key: str, version: int) -> Any:
    data = json.dumps({"key": key, "v": version})
    return client.xadd(store.keys.items, {"key": key, "sum": str(version), "data": data})


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pulls_during_the_crawl_write_what_the_full_export_writes(
    redis_url: str, tmp_path: Path
) -> None:
    async def job() -> tuple[list[int], int, int]:
        client = connect(redis_url)
        store = Frontier(client).crawl("inc")
        export = IncrementalExport(store, tmp_path / "inc.jsonl")
        pulled = [await export.pull()]  # nothing committed yet
        for i in range(2500):  # more than one XRANGE chunk between two pulls
            await add(client, store, f"k{i}", 1)
        pulled.append(await export.pull())
        pulled.append(await export.pull())  # nothing new
        for i in range(2500, 2600):
            await add(client, store, f"k{i}", 1)
        written = await export.finish()  # the tail
        full = await export_to(store, tmp_path / "full.jsonl")
        await client.delete(store.keys.items)
        await client.aclose()
        return pulled, written, full

    pulled, written, full = run(job())
    assert pulled == [0, 2500, 0]
    assert written == full == 2600
    assert (tmp_path / "inc.jsonl").read_text() == (tmp_path / "full.jsonl").read_text()
    assert not (tmp_path / "inc.jsonl.part").exists()


def test_an_updated_item_falls_back_to_the_latest_versions(redis_url: str, tmp_path: Path) -> None:
    async def job() -> int:
        client = connect(redis_url)
        store = Frontier(client).crawl("upd")
        await client.hset(store.keys.stats, "items_updated", 1)
        export = IncrementalExport(store, tmp_path / "upd.jsonl")
        for key in ("a", "b", "c"):
            await add(client, store, key, 1)
        await export.pull()
        await add(client, store, "b", 2)  # a re-crawl changed b
        written = await export.finish()
        await client.delete(store.keys.items, store.keys.stats)
        await client.aclose()
        return written

    assert run(job()) == 3
    assert lines(tmp_path / "upd.jsonl") == [
        {"key": "a", "v": 1},
        {"key": "c", "v": 1},
        {"key": "b", "v": 2},
    ]


def test_abandon_leaves_no_partial_file(redis_url: str, tmp_path: Path) -> None:
    async def job() -> None:
        client = connect(redis_url)
        export = IncrementalExport(Frontier(client).crawl("gone"), tmp_path / "gone.jsonl")
        await export.pull()
        export.abandon()
        await client.aclose()

    run(job())
    assert list(tmp_path.iterdir()) == []


def test_tails_pulled_together_take_what_each_pulled_alone_takes(redis_url: str) -> None:
    counts = pulled_together(redis_url, ["t0", "t1", "t2", "t3"])
    # all of the first crawl, then what came since; the stale one stopped at the repeat
    assert counts == [[CHUNK + 5, 2, 2], [3, 0, 0], [3, 0, 0], [0, 1, 1]]
