from __future__ import annotations

import json

import pytest

from invcrawl.common.items import (
    CrawlInfo,
    ItemLayout,
    bucket_count,
    build_item,
    checksum,
    key_digest,
    prepare,
    status_items,
)
from invcrawl.common.tasks import Task, TaskEntry, TaskFormatError, decode_task, encode_task

TASK = Task(
    id="0123456789abcdef",
    url="http://h/a.html",
    entries=(
        TaskEntry("json.dumps", "py", "function", 1, "json.dumps", "json.dumps"),
        TaskEntry("intro", "std", "doc", -1, "", "Introduction"),
    ),
)
CRAWL = CrawlInfo("c", "P", "1")


def test_task_round_trips_as_json() -> None:
    payload = encode_task(TASK)
    assert json.loads(payload)["entries"][0] == [
        "json.dumps",
        "py",
        "function",
        1,
        "json.dumps",
        "json.dumps",
    ]
    assert decode_task(payload) == TASK
    skipped = Task(
        "f" * 16, "file:///d/", TASK.entries, "skipped", "generated page", "file:///d/index.html"
    )
    assert decode_task(encode_task(skipped)) == skipped


@pytest.mark.parametrize("payload", ["{", '{"v": 9}', '{"v": 1, "id": "x"}', "[]"])
def test_bad_payloads_raise_task_format_error(payload: str) -> None:
    with pytest.raises(TaskFormatError):
        decode_task(payload)


def test_item_identity_urls_and_schema() -> None:
    item = build_item(CRAWL, TASK, TASK.entries[0], {"status": "ok", "doc": "Serialize."})
    assert item["key"] == "py:function:json.dumps"
    assert item["url"] == "http://h/a.html#json.dumps" and item["page_url"] == "http://h/a.html"
    doc = build_item(CRAWL, TASK, TASK.entries[1], {"status": "ok"})
    assert doc["url"] == "http://h/a.html" and doc["params"] == [] and doc["doc"] == ""
    assert set(item) >= {
        "key",
        "crawl",
        "project",
        "version",
        "name",
        "domain",
        "role",
        "priority",
        "dispname",
        "url",
        "page_url",
        "anchor",
        "status",
        "signature",
        "parent",
        "doc",
        "doc_markdown",
        "params",
        "returns",
        "raises",
        "versions",
        "checksum",
    }


def test_checksum_follows_content_not_crawl_identity() -> None:
    a = build_item(CRAWL, TASK, TASK.entries[0], {"status": "ok", "doc": "x"})
    b = build_item(
        CrawlInfo("other", "P2", "2"), TASK, TASK.entries[0], {"status": "ok", "doc": "x"}
    )
    c = build_item(CRAWL, TASK, TASK.entries[0], {"status": "ok", "doc": "y"})
    assert a["checksum"] == b["checksum"] != c["checksum"]
    assert checksum(a) == a["checksum"]


def test_status_items_cover_every_entry() -> None:
    items = status_items(CRAWL, TASK, "page_not_found", "HTTP 404")
    assert [i["status"] for i in items] == ["page_not_found"] * 2
    assert items[0]["reason"] == "HTTP 404"


def test_dedup_digest_is_compact_and_stable() -> None:
    assert bucket_count(1) == 1 and bucket_count(65) == 2 and bucket_count(15_600) == 244
    bucket, field = key_digest("py:function:json.dumps", 244)
    assert 0 <= bucket < 244 and len(field) == 12
    assert key_digest("py:function:json.dumps", 244) == (bucket, field)
    item = build_item(CRAWL, TASK, TASK.entries[0], {"status": "ok"})
    prepared = prepare(item, ItemLayout(244, 61))
    assert prepared.value.endswith("o") and len(prepared.value) == 13
    assert (prepared.bucket, prepared.field) == (bucket, field)
