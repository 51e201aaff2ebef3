"""Which pages a crawl fetches, end to end: every inventory entry gets exactly one item
whatever the spelling of its page URL (two requests are two tasks, two spellings of one
request are one task); an inventory cut short is an error that neither starts a crawl
nor changes a finished one; a local folder or an HTTP site never serves a file outside
the inventory's folder, however the URI hides its ``..``."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import redis

from support.accounting import check_accounting, read_items
from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

HEADER = (
    b"# Sphinx inventory version 2\n# Project: Demo\n# Version: 1.0\n"
    b"# The remainder of this file is compressed using zlib.\n"
)
SECRET = "TOP-SECRET-5d41402abc4b2a76"


def _page(anchors: list[str], text: str) -> str:
    spans = "".join(f'<section id="{a}"><h2>{a}</h2><p>{text} {a}.</p></section>' for a in anchors)
    return f'<html><body><div role="main"><h1>{text}</h1>{spans}</div></body></html>'


def _inventory(root: Path, rows: list[str]) -> None:
    (root / "objects.inv").write_bytes(HEADER + zlib.compress(("\n".join(rows) + "\n").encode()))


def _items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _crawl(tmp: Path, site: str, redis_url: str, crawl_id: str, *extra: str) -> Any:
    out = tmp / f"{crawl_id}.jsonl"
    args = ["crawl", site, "--redis", redis_url, "--crawl-id", crawl_id, "-o", str(out)]
    return invcrawl(*args, "--consumers", "1", "--progress", "none", *extra, cwd=tmp), out


def test_pages_whose_urls_canonicalise_alike_each_get_their_items(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    """Scrapy's canonical fingerprint gave q.html?a=1&b=2 and q.html?b=2&a=1 one task id:
    the second page's entries got no item and the crawl said finished."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "q.html").write_text(_page(["x", "y"], "Query page"), encoding="utf-8")
    (root / "café.html").write_text(_page(["z", "w"], "Café page"), encoding="utf-8")
    (root / "a%2Fb.html").write_text(_page(["v"], "Escaped slash"), encoding="utf-8")
    (root / "a%2fb.html").write_text(_page(["u"], "Escaped slash"), encoding="utf-8")
    rows = [
        "x std:label -1 q.html?a=1&b=2#x X",
        "y std:label -1 q.html?b=2&a=1#y Y",
        "z std:label -1 caf%C3%A9.html#z Z",
        "w std:label -1 café.html#w W",
        "v std:label -1 a%252Fb.html#v V",
        "u std:label -1 a%252fb.html#u U",
    ]
    _inventory(root, rows)
    with serve(root) as http:
        result, out = _crawl(tmp_path, http.url, redis_url, "spellings")
    assert result.code == 0, result.stderr[-2000:]
    items = {i["name"]: i for i in _items(out)}
    assert set(items) == {"x", "y", "z", "w", "v", "u"}
    assert {i["status"] for i in items.values()} == {"ok"}, items
    assert items["x"]["doc"].endswith("x.") and items["y"]["doc"].endswith("y.")
    stream = read_items(sync_redis, "spellings")
    assert len({s.task for s in stream}) == 5  # q.html twice, café once, a%2F and a%2f
    check_accounting(sync_redis, "spellings", {f"std:label:{n}" for n in items}).assert_ok()


def test_a_cut_inventory_is_refused_and_a_refresh_against_it_changes_nothing(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    root = tmp_path / "site"
    site = build_site(root, pages=8, extras=False)
    whole = (root / "objects.inv").read_bytes()
    # ETags from the bytes: the cut file is written within the second of the first crawl,
    # where a Last-Modified validator would still match (and the refresh get a 304).
    with serve(root, validators="etag") as http:
        first, out = _crawl(tmp_path, http.url, redis_url, "cut")
        assert first.code == 0, first.stderr[-2000:]
        before = out.read_bytes()
        stream_before = sync_redis.xlen("invcrawl:{cut}:items")
        # The zlib stream cut at 60%: the server's Content-Length matches what it sends.
        head = len(HEADER)
        (root / "objects.inv").write_bytes(whole[: head + int((len(whole) - head) * 0.6)])

        fresh, _ = _crawl(tmp_path, http.url, redis_url, "cut-new")
        assert fresh.code == 1, fresh.stderr[-2000:]
        assert len(fresh.error_lines) == 1 and "truncated" in fresh.error_lines[0], fresh.stderr
        assert "Traceback" not in fresh.stderr
        assert sync_redis.hlen("invcrawl:{cut-new}:task") == 0  # not started
        assert sync_redis.xlen("invcrawl:{cut-new}:items") == 0

        again, _ = _crawl(tmp_path, http.url, redis_url, "cut", "--refresh")
        assert again.code == 1, again.stderr[-2000:]
        assert len(again.error_lines) == 1 and "truncated" in again.error_lines[0], again.stderr
        removed = [s for s in read_items(sync_redis, "cut") if s.kind == "removed"]
        assert removed == []  # the old code tombstoned every entry after the cut
        assert sync_redis.xlen("invcrawl:{cut}:items") == stream_before
        assert out.read_bytes() == before

        (root / "objects.inv").write_bytes(whole)  # fixed: the next refresh is a no-op
        fixed, _ = _crawl(tmp_path, http.url, redis_url, "cut", "--refresh")
        assert fixed.code == 0, fixed.stderr[-2000:]
    assert sync_redis.xlen("invcrawl:{cut}:items") == stream_before
    check_accounting(sync_redis, "cut", site.keys).assert_ok()


ESCAPES = [
    "%2e%2e/%2e%2e/secret.txt",
    "%2E%2e/%2e%2E/secret.txt",
    "..%2f..%2fsecret.txt",
    "%252e%252e/%252e%252e/secret.txt",
    "..%5c..%5csecret.txt",
    "..;/..;/secret.txt",
    "sub/%2e%2e/%2e%2e/%2e%2e/secret.txt",
]


def _escaping_site(tmp: Path) -> tuple[Path, set[str]]:
    """docs/site/ with an inventory whose entries point two folders up at secret.txt in
    every disguise; the secret sits at docs/../secret.txt, i.e. tmp/secret.txt."""
    (tmp / "secret.txt").write_text(SECRET)
    root = tmp / "docs" / "site"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text(_page(["top"], "Index"), encoding="utf-8")
    rows = ["top std:label -1 index.html#top Top"]
    rows += [f"leak{i} std:doc -1 {uri} Leak" for i, uri in enumerate(ESCAPES)]
    _inventory(root, rows)
    return root, {f"std:doc:leak{i}" for i in range(len(ESCAPES))} | {"std:label:top"}


@pytest.mark.parametrize("where", ["local", "http"])
def test_a_site_never_reads_outside_its_folder(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis, where: str
) -> None:
    root, keys = _escaping_site(tmp_path)
    if where == "local":
        result, out = _crawl(tmp_path, str(root), redis_url, "leaky")
        requests: list[str] = []
    else:
        with serve(tmp_path) as http:  # the server's root holds the secret too
            result, out = _crawl(tmp_path, http.url + "docs/site/", redis_url, "leaky")
            requests = list(http.requests)
    assert result.code == 0, result.stderr[-2000:]
    assert SECRET not in out.read_text(encoding="utf-8")
    items = {i["name"]: i for i in _items(out)}
    assert items["top"]["status"] == "ok"
    leaks = {n: i for n, i in items.items() if n.startswith("leak")}
    assert len(leaks) == len(ESCAPES)
    assert all(i["status"] == "offsite" and i["reason"] for i in leaks.values()), leaks
    assert not [r for r in requests if "secret" in r or "%2e" in r.lower() or ".." in r]
    check_accounting(sync_redis, "leaky", keys).assert_ok()
