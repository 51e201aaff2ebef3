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

from invcrawl.common.codec import MAGIC, stored_item
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.connection import connect
from invcrawl.frontier.follow import GroupReader
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.stream import read_group, read_new
from invcrawl.frontier.versions import latest_item, latest_items
from invcrawl.output.export import IncrementalExport, export_to
from support.cluster import running_cluster

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
    check(run(read_every_way(redis_url, False, tmp_path)), tmp_path)


def test_every_reader_reads_every_form_on_a_cluster(tmp_path: Path) -> None:
    """The same on a 3-master Redis Cluster: the cluster client reads the undecoded
    replies (XRANGE, XREAD, XREADGROUP, XAUTOCLAIM) from the crawl's shard."""
    with running_cluster(tmp_path / "cluster") as cluster:
        out = run(read_every_way(cluster.url, True, tmp_path))
    check(out, tmp_path)


async def read_every_way(url: str, cluster: bool, tmp_path: Path) -> dict[str, Any]:
    """What each reader makes of the stream: export, the crawl's incremental export,
    the latest items, the change feed (XRANGE, then XREAD as ``--follow`` waits), and a
    consumer group whose entries another follower received and never acknowledged (a
    new follower adopts them: XAUTOCLAIM, then XREADGROUP)."""
    client = connect(url, cluster)
    session = Frontier(client).crawl("forms")
    await fill(client, session)
    export = IncrementalExport(session, tmp_path / "tail.jsonl")
    await export.pull()
    out: dict[str, Any] = {
        "exported": await export_to(session, tmp_path / "full.jsonl"),
        "tail": await export.finish(),
        "latest": await latest_items(session),
        "frame": await latest_item(session, "frame"),
        "short": await latest_item(session, "short"),
    }
    events: list[dict[str, Any]] = []
    out["changes"] = (await read_changes(session, None, events.append), events)
    out["followed"] = await read_new(session, "0-0", 100, 10)
    await client.xgroup_create(session.keys.items, "g", id="0")
    await read_group(session, "g", "died", ">", count=100, block_ms=None)
    reader = GroupReader(session, "g", block_ms=10)
    await reader.start()
    out["group"] = await reader.read()
    await reader.ack(out["group"])
    await client.delete(session.keys.items, session.keys.meta, session.keys.stats)
    await client.aclose()
    return out


def check(out: dict[str, Any], tmp_path: Path) -> None:
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
    assert out["followed"] == group
    assert [e.item() for e in group][:4] == [
        orjson.loads(item("frame", 1)),
        {"key": "short", "v": 1},
        orjson.loads(item("b64", 1)),
        orjson.loads(item("b85", 1)),
    ]
