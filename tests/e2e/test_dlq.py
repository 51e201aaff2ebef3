"""Dead letters from the user's side: a page that fails permanently is dead-lettered
with its reason, the crawl exits 3 and says what to do; after the fix, `dlq redrive`
and a second `crawl` complete it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invcrawl.localredis.server import RedisServer
from support.cli import invcrawl
from support.httpserver import serve
from support.synthsite import generate, module_name

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_dead_page_listed_redriven_and_completed(tmp_path: Path) -> None:
    root = tmp_path / "site"
    entries = generate(root, pages=12, per_page=3)
    broken = f"/{module_name(5)}.html"
    failing = {"on": True}

    def fault(path: str) -> str | None:
        return "403" if failing["on"] and path == broken else None

    with RedisServer(tmp_path / "redis") as server, serve(root, fault) as http:
        crawl = (
            "crawl",
            http.url,
            "--redis",
            server.url,
            "--crawl-id",
            "d",
            "--consumers",
            "1",
            "--progress",
            "none",
            "-o",
            str(tmp_path / "o.jsonl"),
        )
        first = invcrawl(*crawl, cwd=tmp_path)
        assert first.code == 3, first.stderr
        assert "dead-lettered" in first.stderr and "dlq redrive" in first.stderr

        listed = invcrawl(
            "dlq", "list", "--redis", server.url, "--crawl-id", "d", "--json", cwd=tmp_path
        )
        assert listed.code == 0, listed.stderr
        (dead,) = json.loads(listed.stdout)
        assert dead["url"] == http.url + broken.lstrip("/")
        assert dead["reason"] == "HTTP 403" and dead["tries"] == 1 and dead["entries"] == 6
        text = invcrawl("dlq", "list", "--redis", server.url, "--crawl-id", "d", cwd=tmp_path)
        assert dead["id"] in text.stdout and "HTTP 403" in text.stdout

        status = json.loads(
            invcrawl(
                "status", "--redis", server.url, "--crawl-id", "d", "--json", cwd=tmp_path
            ).stdout
        )
        assert status["pages_dead"] == 1
        # Every entry has an item: the dead page's 6 as `failed`, with the dead letter's reason.
        assert status["items"] == entries
        assert status["items_by_status"]["failed"] == 6
        out = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
        failed = [i for i in out if i["status"] == "failed"]
        assert len(out) == entries and len(failed) == 6
        assert {i["url"].split("#")[0] for i in failed} == {http.url + broken.lstrip("/")}
        assert all(i["reason"] == "HTTP 403 (dead-lettered after 1 deliveries)" for i in failed)
        assert all(i["doc"] in (None, "") and not i["signature"] for i in failed)

        failing["on"] = False
        redriven = invcrawl(
            "dlq", "redrive", "--all", "--redis", server.url, "--crawl-id", "d", cwd=tmp_path
        )
        assert redriven.code == 0 and "1 task(s) redriven" in redriven.stderr
        again = invcrawl(*crawl, cwd=tmp_path)
        assert again.code == 0, again.stderr

    items = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert len(items) == len({i["key"] for i in items}) == entries
    assert all(i["status"] in ("ok", "skipped") for i in items)  # the failed ones replaced


def test_redrive_needs_ids_or_all(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "redis") as server:
        root = tmp_path / "site"
        generate(root, pages=2, per_page=1)
        assert (
            invcrawl(
                "produce", str(root), "--redis", server.url, "--crawl-id", "x", cwd=tmp_path
            ).code
            == 0
        )
        result = invcrawl("dlq", "redrive", "--redis", server.url, "--crawl-id", "x", cwd=tmp_path)
    assert result.code == 2 and "TASK_ID... or --all" in result.stderr  # a usage error
    assert "Traceback" not in result.stderr
