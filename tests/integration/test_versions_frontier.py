"""frontier/versions.py and the change feed's typed events against a real redis-server:
the projects and versions of the crawls, PROJECT@VERSION resolution (exact, then
ignoring case, ambiguous, unknown), the latest item of one key, and a ``changed`` event
compared with the entry it replaces, also when that entry lies before ``--since``."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis
from conftest import run

from invcrawl.common.apidiff.order import history_steps, summary_of
from invcrawl.common.params import param
from invcrawl.common.version_order import version_key
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.connection import connect
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.keys import CRAWLS, CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.values import CrawlNotFound
from invcrawl.frontier.versions import (
    CrawlRefError,
    by_project,
    crawl_versions,
    latest_item,
    latest_items,
    pick_project,
    resolve_ref,
)

pytestmark = pytest.mark.integration


def crawl(client: redis.Redis, crawl_id: str, project: str, version: str) -> None:
    client.sadd(CRAWLS, crawl_id)
    client.hset(
        CrawlKeys(crawl_id).meta,
        mapping={"project": project, "version": version, "state": "finished", "entries": 3,
                 "finished_at": 1_700_000_000_000, "site": f"/docs/{crawl_id}"},
    )  # fmt: skip


def entry(client: redis.Redis, crawl_id: str, kind: str, item: dict[str, Any]) -> str:
    fields = {"key": item["key"], "sum": "x", "kind": kind, "data": json.dumps(item)}
    entry_id = str(client.xadd(CrawlKeys(crawl_id).items, fields))
    if kind == "update":
        client.hincrby(CrawlKeys(crawl_id).stats, "items_updated", 1)
    if kind == "removed":
        client.hincrby(CrawlKeys(crawl_id).stats, "items_removed", 1)
    return entry_id


def item(key: str, *params: dict[str, Any], doc: str = "Doc.") -> dict[str, Any]:
    return {"key": key, "domain": "py", "status": "ok", "signature": "f()", "doc": doc,
            "params": list(params), "returns": [], "raises": [], "versions": []}  # fmt: skip


def test_versions_in_order_and_refs(redis_url: str, sync_redis: redis.Redis) -> None:
    for crawl_id, project, version in [
        ("lib-1.10", "Lib", "1.10"), ("lib-1.9", "Lib", "1.9"), ("lib-2.0rc1", "Lib", "2.0rc1"),
        ("lib-2.0", "Lib", "2.0"), ("other", "lib", "2.0"), ("x-a", "X", "nightly"),
        ("x-b", "X", "nightly"),
    ]:  # fmt: skip
        crawl(sync_redis, crawl_id, project, version)

    async def job() -> Any:
        frontier = Frontier(connect(redis_url))
        try:
            crawls = await crawl_versions(frontier)
            grouped = by_project(crawls)
            refs = [
                await resolve_ref(frontier, r) for r in ("Lib@1.9", "lib@2.0", "LIB@1.10", "id")
            ]
            errors = []
            for bad in ("X@nightly", "Lib@3.0", "Nope@1"):
                try:
                    await resolve_ref(frontier, bad)
                except (CrawlRefError, CrawlNotFound) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
            return crawls, grouped, refs, errors
        finally:
            await frontier.aclose()

    crawls, grouped, refs, errors = run(job())
    assert list(grouped) == ["Lib", "lib", "X"]
    assert [c.version for c in grouped["Lib"]] == ["1.9", "1.10", "2.0rc1", "2.0"]
    assert refs == ["lib-1.9", "other", "lib-1.10", "id"]  # exact name first, then any case
    assert errors == [
        "CrawlRefError: X@nightly is 2 crawls (x-a, x-b): give one crawl id",
        "CrawlNotFound: Lib@3.0",
        "CrawlNotFound: Nope@1",
    ]
    assert pick_project(crawls, "x") == "X"
    with pytest.raises(CrawlRefError, match="3 projects in this Redis"):
        pick_project(crawls, None)
    assert sorted(["b1", "a", "1.0", "1.0.post1"], key=version_key) == [
        "1.0",
        "1.0.post1",
        "a",
        "b1",
    ]


def test_latest_item_and_history(redis_url: str, sync_redis: redis.Redis) -> None:
    crawl(sync_redis, "v1", "P", "1")
    crawl(sync_redis, "v2", "P", "2")
    key = "py:function:m.f"
    entry(sync_redis, "v1", "new", item(key, param("a", "positional-or-keyword")))
    entry(sync_redis, "v2", "new", item(key, param("a", "positional-or-keyword")))
    entry(sync_redis, "v2", "update", item(key, param("a", "keyword-only")))
    entry(sync_redis, "v2", "new", item("py:function:m.g"))
    entry(sync_redis, "v2", "removed", {"key": "py:function:m.g", "status": "removed"})

    async def job() -> Any:
        frontier = Frontier(connect(redis_url))
        try:
            rows = [(v, v, await latest_item(frontier.crawl(v), key)) for v in ("v1", "v2")]
            gone = await latest_item(frontier.crawl("v2"), "py:function:m.g")
            everything = await latest_items(frontier.crawl("v2"))
            return rows, gone, everything
        finally:
            await frontier.aclose()

    rows, gone, everything = run(job())
    assert gone is None and list(everything) == [key]
    steps = history_steps(rows)
    assert [(s.change, s.breaking) for s in steps] == [("added", False), ("changed", True)]
    assert summary_of(steps) == {"exists_in": ["v1", "v2"], "first": "v1", "removed_in": None}

    sync_redis.hset(CrawlKeys("v2").meta, "trimmed_before", "1-0")

    async def trimmed() -> None:
        frontier = Frontier(connect(redis_url))
        try:
            await latest_items(frontier.crawl("v2"))
        finally:
            await frontier.aclose()

    with pytest.raises(HistoryTrimmed, match="retain-items exported"):
        run(trimmed())


def test_changed_events_are_typed_against_the_entry_they_replace(
    redis_url: str, sync_redis: redis.Redis
) -> None:
    crawl(sync_redis, "feed", "P", "1")
    a = "py:function:m.a"
    b = "py:function:m.b"
    entry(sync_redis, "feed", "new", item(a, param("x", "positional-or-keyword")))
    entry(sync_redis, "feed", "new", item(b))
    cursor = entry(sync_redis, "feed", "update", item(b, doc="New doc."))
    entry(sync_redis, "feed", "update", item(a, param("x", "keyword-only")))
    entry(sync_redis, "feed", "update", item(a, param("x", "keyword-only"), param("y", None)))

    async def events(since: str | None) -> list[dict[str, Any]]:
        frontier = Frontier(connect(redis_url))
        got: list[dict[str, Any]] = []
        try:
            await read_changes(frontier.crawl("feed"), since, got.append)
        finally:
            await frontier.aclose()
        return got

    def typed(got: list[dict[str, Any]]) -> list[Any]:
        return [
            (e["event"], e["key"], e.get("breaking"), [c["kind"] for c in e.get("changes", [])])
            for e in got
        ]

    everything = typed(run(events(None)))
    assert everything == [
        ("added", a, None, []),
        ("added", b, None, []),
        ("changed", b, False, ["doc_changed"]),
        ("changed", a, True, ["param_kind_changed"]),
        ("changed", a, False, ["param_added"]),
    ]
    # after the cursor: a's previous entry lies before it, found by one pass
    assert typed(run(events(cursor))) == everything[3:]
