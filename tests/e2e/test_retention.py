"""``--retain-items exported``, end to end: a Sphinx site built here, crawled over
loopback HTTP against a real redis-server. Stream entries leave Redis only once every
export group (the crawl's output file, ``export --follow`` groups) holds them; the
output file stays the latest version of every live item across refreshes; readers that
need the trimmed history say so in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from test_refresh import FUNCS, build, build_site, write_sources

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.cli import clean_env, invcrawl
from support.httpserver import StaticServer, serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CRAWL = "kept"


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    return build_site(tmp_path)


KEYS = CrawlKeys(CRAWL)


def crawl(server: RedisServer, http: StaticServer, tmp: Path, *extra: str) -> Any:
    args = ["crawl", http.url, "--redis", server.url, "--crawl-id", CRAWL, "--consumers", "2"]
    result = invcrawl(*args, "-o", str(tmp / "out.jsonl"), "--progress", "none", *extra, cwd=tmp)
    assert result.code == 0, result.stderr[-3000:]
    return result


def items_of(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    assert len(rows) == len({r["key"] for r in rows}), "a key twice in an export"
    return {r["key"]: r for r in rows}


def test_exported_items_leave_redis_and_the_output_stays_complete(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    src, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html) as http:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        crawl(server, http, tmp_path, "--retain-items", "exported")
        first = items_of(tmp_path / "out.jsonl")
        assert "py:function:beta.close" in first and len(first) > 10
        # Every entry is in the output file: none is left in the stream.
        assert client.xlen(KEYS.items) == 0
        assert client.hget(KEYS.meta, "retain_items") == "exported"
        status = json.loads(
            invcrawl(
                "status", "--redis", server.url, "--crawl-id", CRAWL, "--json", cwd=tmp_path
            ).stdout
        )
        assert status["retain_items"] == "exported" and status["stream_entries"] == 0
        assert status["items_trimmed"] == len(first)

        # Readers of the trimmed history: one line each, or the export to merge with.
        plain = invcrawl("export", "--redis", server.url, "--crawl-id", CRAWL, cwd=tmp_path)
        assert plain.code == 1 and len(plain.error_lines) == 1 and "--base" in plain.stderr
        typo = invcrawl(
            "export", "--redis", server.url, "--crawl-id", CRAWL,
            "--base", str(tmp_path / "no-such.jsonl"), cwd=tmp_path,
        )  # fmt: skip
        assert typo.code == 2 and typo.error_lines == [
            f"invcrawl: error: --base {tmp_path / 'no-such.jsonl'}: no such file"
        ]
        merged = tmp_path / "merged.jsonl"
        result = invcrawl(
            "export", "--redis", server.url, "--crawl-id", CRAWL,
            "--base", str(tmp_path / "out.jsonl"), "-o", str(merged), cwd=tmp_path,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        assert items_of(merged) == first
        feed = invcrawl("changes", "--redis", server.url, "--crawl-id", CRAWL, cwd=tmp_path)
        assert feed.code == 1 and "trimmed" in feed.stderr and len(feed.error_lines) == 1

        # A refresh (without the flag: the crawl keeps its setting) after an edit and a
        # removal: the output file is the old one merged with what changed.
        edited = {
            **FUNCS,
            "beta": {**FUNCS["beta"], "close": "Close a connection for good."},
            "gamma": {"scale": FUNCS["gamma"]["scale"]},
        }
        write_sources(src, edited)
        build(src, html)
        crawl(server, http, tmp_path, "--refresh")
        after = items_of(tmp_path / "out.jsonl")
        assert after["py:function:beta.close"]["doc"] == "Close a connection for good."
        assert "py:function:gamma.clamp" not in after
        assert set(after) == set(first) - {"py:function:gamma.clamp"}
        unchanged = [k for k in after if k.startswith("py:function:alpha.")]
        assert unchanged and all(after[k] == first[k] for k in unchanged)
        assert client.xlen(KEYS.items) == 0
        assert client.hget(KEYS.meta, "retain_items") == "exported"
        client.close()


def test_a_lagging_export_group_holds_the_trim(site: tuple[Path, Path], tmp_path: Path) -> None:
    _, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html) as http:
        client = redis.Redis.from_url(server.url, decode_responses=True)
        client.xgroup_create(KEYS.items, "slow", id="0", mkstream=True)
        crawl(server, http, tmp_path, "--retain-items", "exported")
        written = items_of(tmp_path / "out.jsonl")
        # The output file has every item, but group "slow" has read none: all kept.
        assert client.xlen(KEYS.items) == len(written)
        follow = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "export", "--redis", server.url,
             "--crawl-id", CRAWL, "--follow", "--group", "slow",
             "-o", str(tmp_path / "slow.jsonl")],
            cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while client.xlen(KEYS.items) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.xlen(KEYS.items) == 0, "trimmed once the follower acknowledged"
        finally:
            follow.terminate()
            follow.wait(timeout=30)
        assert items_of(tmp_path / "slow.jsonl") == written
        client.close()


def test_retaining_all_keeps_every_entry(site: tuple[Path, Path], tmp_path: Path) -> None:
    """The default (a control for the tests above): nothing is trimmed."""
    _, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html) as http:
        crawl(server, http, tmp_path)
        client = redis.Redis.from_url(server.url, decode_responses=True)
        assert client.xlen(KEYS.items) == len(items_of(tmp_path / "out.jsonl"))
        status = invcrawl(
            "status", "--redis", server.url, "--crawl-id", CRAWL, "--json", cwd=tmp_path
        )
        assert json.loads(status.stdout)["items_trimmed"] == 0
        client.close()
