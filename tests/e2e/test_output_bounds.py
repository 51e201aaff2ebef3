"""Output is bounded by the input, end to end over HTTP: 300 inventory entries pointing at
missing anchors of one 1.5 MB page write their page's introduction each (1.19 GB
before); 300 entries pointing at its top section share the page's budget, 16 times the
page; 22 levels of nested tables in a docstring make a small item (296 MB before); and
``--max-doc-chars`` caps every doc with the marker docs/items.md names."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.common.bounds import CLIPPED, HEADER_FIELD_CHARS, PAGE_FACTOR, marker
from support.accounting import check_accounting
from support.cli import invcrawl
from support.crawl import build_site
from support.hostile_pages import big_page, nested, page_with
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

HEADER = (
    b"# Sphinx inventory version 2\n# Project: Demo\n# Version: 1.0\n"
    b"# The remainder of this file is compressed using zlib.\n"
)
BIG = 1_500_000


def _items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _size(item: dict[str, Any]) -> int:
    return len(json.dumps(item, ensure_ascii=False).encode())


def test_hostile_pages_write_output_bounded_by_their_input(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    root = tmp_path / "site"
    (root / "api").mkdir(parents=True)
    (root / "api" / "big.html").write_bytes(big_page(BIG))
    (root / "api" / "nested.html").write_bytes(page_with(nested(["table"] * 22, "deep")))
    rows = [f"gone{i} py:function 1 api/big.html#gone-{i} -" for i in range(300)]
    rows += [f"top{i} std:label -1 api/big.html#top Top" for i in range(300)]
    rows += ["demo.big.f0 py:function 1 api/big.html#$ -", "big std:doc -1 api/big.html Big"]
    rows += ["demo.hostile.f py:function 1 api/nested.html#$ -"]
    (root / "objects.inv").write_bytes(HEADER + zlib.compress(("\n".join(rows) + "\n").encode()))
    out = tmp_path / "items.jsonl"
    with serve(root) as http:
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "amp", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", cwd=tmp_path, timeout=300)
    assert result.code == 0, result.stderr[-2000:]
    items = {i["name"]: i for i in _items(out)}
    assert len(items) == len(rows)
    missing = [items[f"gone{i}"] for i in range(300)]
    assert {i["status"] for i in missing} == {"anchor_missing"}
    assert all(i["doc"].startswith("The introduction of demo.big") for i in missing)
    assert sum(_size(i) for i in missing) < 2_000_000  # the bound: well under 20 MB
    big_page_items = [i for i in items.values() if i["page_url"].endswith("/api/big.html")]
    assert sum(_size(i) for i in big_page_items) <= PAGE_FACTOR * BIG * 1.01
    labels = [items[f"top{i}"] for i in range(300)]
    assert {i["status"] for i in labels} == {"ok"}
    assert all("truncated by invcrawl" in i["doc"] and "cut to fit" in i["reason"] for i in labels)
    assert items["demo.big.f0"]["doc"] == "Function demo.big.f0."  # small items stay whole
    table = items["demo.hostile.f"]
    assert table["status"] == "ok" and _size(table) < 1_000_000
    assert out.stat().st_size < PAGE_FACTOR * BIG * 1.1
    keys = {f"{r.split()[1]}:{r.split()[0]}" for r in rows}
    check_accounting(sync_redis, "amp", keys).assert_ok()


def test_max_doc_chars_caps_every_doc_with_the_marker(tmp_path: Path, redis_url: str) -> None:
    site = build_site(tmp_path / "site", pages=3, extras=False)
    out = tmp_path / "items.jsonl"
    with serve(site.root) as http:
        args = ["crawl", http.url, "--redis", redis_url, "-o", str(out), "--consumers", "1"]
        result = invcrawl(*args, "--max-doc-chars", "120", cwd=tmp_path)
    assert result.code == 0, result.stderr[-2000:]
    items = _items(out)
    assert all(len(i["doc"]) <= 120 and len(i["doc_markdown"]) <= 120 for i in items)
    pages = [i for i in items if i["role"] == "doc"]
    assert pages and all(i["doc"].endswith("characters in all]") for i in pages)
    assert all(marker(0).split(":")[0].strip() in i["doc_markdown"] for i in pages)
    assert all("doc cut to 120 characters" in i["reason"] for i in pages)


def test_a_2mb_inventory_header_gives_small_items_and_outputs(
    tmp_path: Path, redis_url: str
) -> None:
    """``# Project:`` and ``# Version:`` of 2 MB (issue 36: 100 entries wrote 200 MB, and
    the same text reached every row of ``versions`` and ``status``): cut where they are
    read, to the bound of docs/items.md, so every output that carries them stays small."""
    root = tmp_path / "site"
    (root / "api").mkdir(parents=True)
    (root / "api" / "page.html").write_bytes(page_with("<p>Small.</p>"))
    project, version = "Demo " + "P" * 2_000_000, "1." + "0" * 2_000_000
    header = (
        f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    rows = [f"demo.f{i} py:function 1 api/page.html#demo.f{i} -" for i in range(100)]
    (root / "objects.inv").write_bytes(header + zlib.compress(("\n".join(rows) + "\n").encode()))
    out = tmp_path / "items.jsonl"
    with serve(root) as http:
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "hdr", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", cwd=tmp_path, timeout=300)
    assert result.code == 0, result.stderr[-2000:]
    items = _items(out)
    assert len(items) == 100
    assert {len(i["project"]) for i in items} == {HEADER_FIELD_CHARS}
    assert {len(i["version"]) for i in items} == {HEADER_FIELD_CHARS}
    assert items[0]["project"].startswith("Demo PPP") and items[0]["project"].endswith(CLIPPED)
    assert out.stat().st_size < 200_000  # 200 MB before
    for command in (["versions"], ["versions", "--json"], ["status", "--json"], ["status"]):
        shown = invcrawl(*command, "--redis", redis_url, cwd=tmp_path)
        assert shown.code == 0, shown.stderr[-2000:]
        assert len(shown.stdout) < 20_000, (command, len(shown.stdout))
