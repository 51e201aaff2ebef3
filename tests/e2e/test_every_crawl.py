"""Without --crawl-id, `export`, `changes`, `report` and `dlq` cover every crawl of the
Redis, each line naming its crawl; `changes` resumes every crawl at once from the
composite cursor it prints (frontier/every_crawl.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.cli import invcrawl
from support.crawl import Site, build_site
from support.httpserver import serve

pytestmark = pytest.mark.e2e


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line]


def cursor_of(stderr: str) -> str:
    match = re.search(r"resume with --since (\S+)", stderr)
    assert match, stderr
    return match[1]


def test_export_changes_report_and_dlq_of_every_crawl(redis_url: str, tmp_path: Path) -> None:
    a = build_site(tmp_path / "sites" / "a", pages=4)
    b = build_site(tmp_path / "sites" / "b", pages=3, project="Other")
    broken = Site.url_path(1)  # one page of b answers 500: dead after one try

    def fault(path: str) -> str | None:
        return "500" if path == "/b" + broken else None

    def cli(*args: str) -> object:
        return invcrawl(*args, "--redis", redis_url, cwd=tmp_path)

    with serve(tmp_path / "sites", fault) as http:
        result = invcrawl(
            "crawl", f"{http.url}a/", f"{http.url}b/", "--redis", redis_url,
            "--max-tries", "1", "--out-dir", "out", cwd=tmp_path,
        )  # fmt: skip
        assert result.code == 3, result.stderr  # b has a dead page
        crawls = sorted(p.stem for p in (tmp_path / "out").glob("*.jsonl"))
        crawl_a, crawl_b = crawls
        assert crawl_a.endswith("-a") and crawl_b.endswith("-b")

        # export: every live item of both crawls, each naming its crawl
        result = cli("export", "-o", "all.jsonl")
        assert result.code == 0, result.stderr  # type: ignore[attr-defined]
        items = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
        assert len(items) == a.entries + b.entries
        assert {i["crawl"] for i in items} == {crawl_a, crawl_b}
        assert sum(i["crawl"] == crawl_a for i in items) == a.entries

        # changes: both crawls' events, each naming its crawl; a composite cursor
        result = cli("changes")
        first = events(result.stdout)  # type: ignore[attr-defined]
        assert len(first) == a.entries + b.entries
        assert {e["crawl"] for e in first} == {crawl_a, crawl_b}
        cursor = cursor_of(result.stderr)  # type: ignore[attr-defined]
        last = {e["crawl"]: e["cursor"] for e in first}
        assert cursor == f"{crawl_a}={last[crawl_a]},{crawl_b}={last[crawl_b]}"
        assert cli("changes", "--since", cursor).stdout == ""  # type: ignore[attr-defined]

        # one page of a changes; a refresh of a alone: the cursor gives just that
        page = a.root / "api" / "mod0002.html"
        page.write_text(page.read_text().replace("returns <em>x</em> plus", "now gives"))
        refreshed = invcrawl(
            "crawl", f"{http.url}a/", "--crawl-id", crawl_a, "--refresh", "--redis", redis_url,
            "-o", "a.jsonl", cwd=tmp_path,
        )  # fmt: skip
        assert refreshed.code == 0, refreshed.stderr
        result = cli("changes", "--since", cursor)
        changed = events(result.stdout)  # type: ignore[attr-defined]
        assert changed and {e["crawl"] for e in changed} == {crawl_a}
        assert {e["event"] for e in changed} == {"changed"}
        assert all("mod0002" in str(e["key"]) for e in changed), [e["key"] for e in changed]
        newer = cursor_of(result.stderr)  # type: ignore[attr-defined]
        assert newer.startswith(f"{crawl_a}={changed[-1]['cursor']},")
        assert newer.endswith(f",{crawl_b}={last[crawl_b]}")
        # a plain entry id: that position in every crawl
        # (the newest event of the first listing: the two crawls ran at once, so the
        # listing's last event, crawl b's, need not be the newest of both)
        newest = max((e["cursor"] for e in first), key=lambda c: tuple(map(int, c.split("-"))))
        result = cli("changes", "--since", newest)
        assert [e["cursor"] for e in events(result.stdout)] == [  # type: ignore[attr-defined]
            e["cursor"] for e in changed
        ]
        # the composite cursor belongs to no single crawl
        result = cli("changes", "--crawl-id", crawl_a, "--since", cursor)
        assert result.code == 2, result.stderr  # type: ignore[attr-defined]

        # report: one coverage per crawl
        reports = json.loads(cli("report", "--json").stdout)  # type: ignore[attr-defined]
        assert [r["crawl_id"] for r in reports] == [crawl_a, crawl_b]
        assert reports[0]["totals"]["total"] == a.entries
        text = cli("report").stdout  # type: ignore[attr-defined]
        assert f"coverage of crawl {crawl_a}" in text and f"coverage of crawl {crawl_b}" in text

        # dlq: every crawl's dead letters, named; a redrive finds the crawl by the id
        rows = json.loads(cli("dlq", "list", "--json").stdout)  # type: ignore[attr-defined]
        assert [(r["crawl_id"], r["url"]) for r in rows] == [(crawl_b, f"{http.url}b{broken}")]
        listed = cli("dlq", "list").stdout  # type: ignore[attr-defined]
        assert crawl_b in listed and rows[0]["url"] in listed
        result = cli("dlq", "redrive", rows[0]["id"])
        assert result.code == 0 and f"crawl {crawl_b}: 1" in result.stderr  # type: ignore[attr-defined]
        assert json.loads(cli("dlq", "list", "--json").stdout) == []  # type: ignore[attr-defined]
