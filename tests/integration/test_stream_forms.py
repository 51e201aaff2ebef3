"""Every reader of the item stream against every form its ``data`` field takes, on a real
redis-server: a binary zstd frame (what a commit writes now, which a client decoding
replies as UTF-8 cannot even read), plain JSON (a short item), a tombstone, and the text
forms of earlier versions (``B`` + base64, ``Z`` + base85), which a stream written before
an upgrade still holds."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import orjson
import zstandard
from conftest import run

from common.codec import MAGIC, stored_item
from frontier.changes import read_changes
from frontier.connection import connect
from frontier.export import GroupReader
from frontier.session import CrawlSession, Frontier
from frontier.versions import latest_item, latest_items
from invcrawl.exporting import IncrementalExport, export_to

DOC = "Serialize obj to a JSON formatted str using this conversion table. " * 20


def item(key: str, version: int) -> bytes:
    return orjson.dumps({"key": key, "v": version, "doc": DOC})


def forms() -> list[tuple[str, str, bytes]]:
    """(key, kind, data) in stream order: every form once, then an update of the binary
    item written in an old form, then the removal of the short one."""
    frame = zstandard.ZstdCompressor(level=3).compress(item("b64", 1))
    short = b'{"key":"short","v":1}'
    return [
        ("frame", "new", stored_item(item("frame", 1))),
        ("short", "new", stored_item(short)),
        ("b64", "new", b"B" + base64.b64encode(frame)),
        ("b85", "new", b"Z" + base64.b85encode(zstandard.compress(item("b85", 1)))),
        ("frame", "update", b"B" + base64.b64encode(zstandard.compress(item("frame", 2)))),
        ("short", "removed", b'{"key": "short", "status": "removed"}'),
    ]


async def fill(client: Any, session: CrawlSession) -> None:
    """The stream, and what the scripts that write it also record: the crawl's meta and
    its update and removal counters (readers look for the latest versions only then)."""
    await client.hset(session.keys.meta, "state", "finished")
    await client.hset(session.keys.stats, mapping={"items_updated": 1, "items_removed": 1})
    for key, kind, data in forms():
        fields = {"key": key, "sum": "", "kind": kind, "task": "t", "data": data}
        await client.xadd(session.keys.items, fields)


def test_every_reader_reads_every_form(redis_url: str, tmp_path: Path) -> None:
    assert forms()[0][2].startswith(MAGIC)  # the binary form is what a commit writes

    async def job() -> dict[str, Any]:
        client = connect(redis_url)
        session = Frontier(client).crawl("forms")
        await fill(client, session)
        export = IncrementalExport(session, tmp_path / "tail.jsonl")
        await export.pull()
        out = {
            "exported": await export_to(session, tmp_path / "full.jsonl"),
            "tail": await export.finish(),
            "latest": await latest_items(session),
            "frame": await latest_item(session, "frame"),
            "short": await latest_item(session, "short"),
        }
        events: list[dict[str, Any]] = []
        out["changes"] = (await read_changes(session, None, events.append), events)
        reader = GroupReader(session, "g", block_ms=10)
        await reader.start()
        out["group"] = await reader.read()
        await reader.ack(out["group"])
        await client.delete(session.keys.items, session.keys.meta, session.keys.stats)
        await client.aclose()
        return out

    out = run(job())
    latest = {"frame": 2, "b64": 1, "b85": 1}  # short was removed
    full = [json.loads(line) for line in (tmp_path / "full.jsonl").read_text().splitlines()]
    assert out["exported"] == 3 and {i["key"]: i["v"] for i in full} == latest
    assert out["tail"] == 3  # the update and the removal: the tail fell back to the full export
    assert (tmp_path / "tail.jsonl").read_text() == (tmp_path / "full.jsonl").read_text()
    assert {key: i["v"] for key, i in out["latest"].items()} == latest
    assert out["frame"]["v"] == 2 and out["frame"]["doc"] == DOC and out["short"] is None
    (count, _), events = out["changes"]
    assert count == 6
    assert [(e["event"], e["key"]) for e in events] == [
        ("added", "frame"),
        ("added", "short"),
        ("added", "b64"),
        ("added", "b85"),
        ("changed", "frame"),
        ("removed", "short"),
    ]
    assert [e["item"].get("v") for e in events] == [1, 1, 1, 1, 2, None]
    group = out["group"]
    assert [(e.key, e.kind) for e in group] == [(k, kind) for k, kind, _ in forms()]
    assert [e.item() for e in group][:4] == [
        orjson.loads(item("frame", 1)),
        {"key": "short", "v": 1},
        orjson.loads(item("b64", 1)),
        orjson.loads(item("b85", 1)),
    ]
