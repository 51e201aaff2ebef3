"""Every way a page settles gives items of one shape: the same fields, of the same types
(docs/items.md: ``doc`` and ``doc_markdown`` are strings, "" for none), whatever the
status: ok, anchor_missing, an empty or non-HTML page, skipped, offsite, not found,
failed (a dead-lettered page)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.items import (
    CONTENT_DEFAULTS,
    ITEM_FIELDS,
    OPTIONAL_FIELDS,
    CrawlInfo,
    ItemStatus,
    build_item,
    status_items,
)
from invcrawl.common.tasks import Task, TaskEntry
from support.targets import target

ENTRY = TaskEntry("mod.f", "py", "function", 1, "mod.f", "mod.f")
TASK = Task(id="0123456789abcdef", url="https://docs.test/api.html", entries=(ENTRY,))
CRAWL = CrawlInfo("c", "P", "1")
TARGET = target("mod.f", "py", "function", "mod.f", "mod.f")
PAGE = (
    b'<html><body><div role="main"><h1>API</h1><p>Intro.</p>'
    b'<dl class="py function"><dt id="{anchor}">mod.f(x)</dt><dd><p>Does f.</p></dd></dl>'
    b"</div></body></html>"
)
TYPES: dict[str, Any] = {
    "key": str,
    "crawl": str,
    "project": (str, type(None)),
    "version": (str, type(None)),
    "name": str,
    "domain": str,
    "role": str,
    "priority": int,
    "dispname": str,
    "url": str,
    "page_url": str,
    "anchor": str,
    "reason": (str, type(None)),
    "signature": (str, type(None)),
    "labels": list,
    "title": (str, type(None)),
    "parent": (str, type(None)),
    "inherited_from": str,
    "alias_of": str,
    "doc": str,
    "doc_markdown": str,
    "references": list,
    "params": list,
    "doc_only_params": list,
    "returns": list,
    "raises": list,
    "versions": list,
    "generator": (str, type(None)),
    "status": str,
    "checksum": str,
}


def extracted(body: bytes) -> dict[str, Any]:
    [content] = extract_page(body, TASK.url, [TARGET])
    return build_item(CRAWL, TASK, ENTRY, content)


PATHS = {
    "ok": lambda: extracted(PAGE.replace(b"{anchor}", b"mod.f")),
    "anchor_missing": lambda: extracted(PAGE.replace(b"{anchor}", b"other")),
    "empty page": lambda: extracted(b""),
    "blank page": lambda: extracted(b" \n "),
    "skipped": lambda: status_items(CRAWL, TASK, ItemStatus.SKIPPED, "generated page")[0],
    "offsite": lambda: status_items(CRAWL, TASK, ItemStatus.OFFSITE, "offsite")[0],
    "not found": lambda: status_items(CRAWL, TASK, ItemStatus.PAGE_NOT_FOUND, "HTTP 404")[0],
    "failed": lambda: status_items(CRAWL, TASK, ItemStatus.FAILED, "HTTP 500")[0],
}


def test_the_field_table_matches_the_types_checked() -> None:
    assert list(TYPES) == list(ITEM_FIELDS)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_status_path_gives_the_same_fields_and_types(path: str) -> None:
    item = PATHS[path]()
    assert list(item) == [f for f in ITEM_FIELDS if f not in OPTIONAL_FIELDS]
    for name, value in item.items():
        assert isinstance(value, TYPES[name]), (path, name, value)


def test_the_status_paths_and_their_empty_content() -> None:
    assert PATHS["ok"]()["status"] == "ok" and PATHS["ok"]()["doc"] == "Does f."
    assert PATHS["anchor_missing"]()["status"] == "anchor_missing"
    for path in ("empty page", "blank page", "skipped", "failed"):
        item = PATHS[path]()
        assert (item["doc"], item["doc_markdown"], item["params"]) == ("", "", []), path
        assert all(
            item[name] == (list(d) if isinstance(d, tuple) else d)
            for name, d in CONTENT_DEFAULTS.items()
            if name != "reason"
        )
    assert PATHS["empty page"]()["reason"] == "page is empty or not HTML"


def test_the_generator_is_the_page_s_and_none_where_no_page_was_read() -> None:
    assert PATHS["ok"]()["generator"] == "sphinx"
    assert PATHS["anchor_missing"]()["generator"] == "sphinx"
    for path in ("empty page", "blank page", "skipped", "offsite", "not found", "failed"):
        assert PATHS[path]()["generator"] is None, path


def test_the_checksum_ignores_the_generator_and_absent_labels() -> None:
    item = PATHS["ok"]()
    same = build_item(CRAWL, TASK, ENTRY, {**item, "generator": "pydoctor", "labels": []})
    assert same["checksum"] == item["checksum"]
    labelled = build_item(CRAWL, TASK, ENTRY, {**item, "labels": ["classmethod"]})
    assert labelled["checksum"] != item["checksum"]


def test_items_of_one_page_share_no_list() -> None:
    two = Task(id=TASK.id, url=TASK.url, entries=(ENTRY, ENTRY))
    a, b = status_items(CRAWL, two, ItemStatus.SKIPPED, None)
    a["params"].append({})
    assert b["params"] == []


def test_the_optional_fields_are_absent_when_empty_and_keep_the_checksum() -> None:
    """An item without inherited_from, alias_of, doc_only_params or references is byte
    for byte what it was before they existed; with them, each sits after the field it
    follows."""
    item = PATHS["ok"]()
    again = build_item(
        CRAWL,
        TASK,
        ENTRY,
        {
            **item,
            "inherited_from": None,
            "alias_of": "",
            "doc_only_params": [],
            "references": [],
        },
    )
    assert orjson.dumps(again) == orjson.dumps(item)
    full = build_item(
        CRAWL,
        TASK,
        ENTRY,
        {
            **item,
            "inherited_from": "mod.Base",
            "alias_of": "mod.impl.f",
            "doc_only_params": [{"name": "y", "description": "Gone."}],
            "references": [{"name": "str", "url": "https://docs.test/t.html#str"}],
        },
    )
    assert list(full) == list(ITEM_FIELDS)
    for name in OPTIONAL_FIELDS:
        assert isinstance(full[name], TYPES[name])  # type: ignore[literal-required]
    assert full["checksum"] != item["checksum"]
