"""Charsets a server declares, over real HTTP: Sphinx writes UTF-8 pages (a raw pilcrow
after every heading and signature, dashes and quotes in the prose), and servers label
them as they please. A label that cannot decode the bytes (``us-ascii``), one that is
not a character set at all (``rot13``, ``zlib``, ``base64``), an unknown one, or a
server's default Latin-1 over a page whose own meta says UTF-8: every entry is extracted
``ok`` with its whole text, never truncated at the first non-ASCII byte, never a dead
letter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from support.accounting import check_accounting
from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LABELS = [
    "us-ascii",
    "ascii",
    "rot13",
    "zlib",
    "base64",
    "hex",
    "x-no-such-charset",
    "iso-8859-1",
    "utf-16",
    "utf-7",
    "utf-8",
]


def test_declared_charsets_that_do_not_fit_the_bytes(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    root = tmp_path / "site"
    site = build_site(root, pages=len(LABELS), extras=False)
    for page in (root / "api").glob("*.html"):
        text = page.read_text(encoding="utf-8")
        text = text.replace("&#182;", "¶").replace("&#8211;", "–")  # raw, as Sphinx writes
        page.write_text(text.replace("returns <em>x</em>", "returns “<em>x</em>”"), "utf-8")
    types = {
        f"/api/mod{i:04d}.html": f"type:text/html; charset={label}"
        for i, label in enumerate(LABELS)
    }
    out = tmp_path / "items.jsonl"
    with serve(root, fault=types.get) as http:
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "charsets", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", "--progress", "none", cwd=tmp_path)
        served = {path for path, _ in http.faults_served}
    assert result.code == 0, result.stderr[-3000:]
    assert served == set(types)
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    bad = {i["name"]: (i["status"], i["reason"]) for i in items if i["status"] != "ok"}
    assert not bad, bad
    for item in items:
        if item["role"] != "function":
            continue
        j = item["name"][-1]
        label = LABELS[int(item["name"].split(".")[1][3:])]
        expected = f"returns “x” plus {j}."
        assert expected in item["doc"], (label, item["doc"])
        assert "x – a number" in item["doc"], (label, item["doc"])
        assert "¶" not in item["signature"], (label, item["signature"])
    check_accounting(sync_redis, "charsets", site.keys).assert_ok()
