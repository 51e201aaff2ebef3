"""The filters of crawl's and export's files, end to end (issue 47): one local site
crawled into a real embedded Redis, its file written with --role and --omit-page-text,
then exported again with --domain, --status, --fields and --project/--version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.cli import invcrawl
from support.crawl import build_site

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_crawl_and_export_write_what_the_filters_keep(tmp_path: Path) -> None:
    site = build_site(tmp_path / "site", pages=3, functions=2, project="Demo", version="1.0")
    data = ["--data-dir", str(tmp_path / "data")]
    out = tmp_path / "demo.jsonl"
    crawl = invcrawl(
        "crawl", str(site.root), *data, "-o", str(out), "--progress", "none",
        "--role", "function,std:doc", "--omit-page-text",
        cwd=tmp_path,
    )  # fmt: skip
    assert crawl.code == 0, crawl.stderr
    written = lines(out.read_text())
    assert written and {(i["domain"], i["role"]) for i in written} == {
        ("py", "function"),
        ("std", "doc"),
    }
    pages = [i for i in written if i["role"] == "doc"]
    assert pages and all(i["doc"] == "" and i["doc_markdown"] == "" for i in pages)
    assert all(i["doc"] for i in written if i["role"] == "function" and i["status"] == "ok")

    whole = lines(invcrawl("export", *data, "-q", cwd=tmp_path).stdout)
    assert len(whole) > len(written)  # the crawl itself kept every item
    picked = invcrawl(
        "export", *data, "-q", "--project", "demo", "--version", "1.0",
        "--domain", "std", "--status", "skipped", "--fields", "key,status",
        cwd=tmp_path,
    )  # fmt: skip
    assert picked.code == 0, picked.stderr
    expected = [
        {"key": i["key"], "status": i["status"]}
        for i in whole
        if i["domain"] == "std" and i["status"] == "skipped"
    ]
    assert expected and lines(picked.stdout) == expected
    # the raw export's bytes are the unfiltered one's
    assert invcrawl("export", *data, "-q", cwd=tmp_path).stdout.splitlines()[0] == (
        json.dumps(whole[0], ensure_ascii=False, separators=(",", ":"))
    )
    other = invcrawl("export", *data, "--version", "9.9", cwd=tmp_path)
    assert other.code != 0 and "no crawl of *@9.9" in other.stderr
