"""robots.txt is input like any other, end to end over real HTTP: its Crawl-delay is
capped (``--max-crawl-delay``, default 60 s; NaN, infinities and negatives ignored) and
the cap is recorded for status; the host's state in Redis expires; a redirect of
robots.txt follows the site's page redirect policy (another port of the same host is
another site: not followed); only its first 500 KiB are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.frontier.hosts import STATE_TTL_MS, origin_of
from invcrawl.frontier.keys import HostKeys
from support.accounting import check_accounting
from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def _site(tmp: Path, robots: str, pages: int = 2) -> Any:
    site = build_site(tmp / "site", pages=pages, extras=False)
    (site.root / "robots.txt").write_text(robots, encoding="utf-8")
    return site


def _items(path: Path) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {i["name"]: i for i in (json.loads(line) for line in lines if line)}


def _state(client: redis.Redis, url: str) -> tuple[dict[str, str], int]:
    key = HostKeys(origin_of(url) or "").state
    return client.hgetall(key), client.pttl(key)  # type: ignore[return-value]


def test_a_huge_crawl_delay_is_capped_and_the_crawl_ends(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    """``Crawl-delay: 1e20`` left the crawl at "producing..." for good, its host state
    (next_at 1e23) kept in Redis with no TTL."""
    site = _site(tmp_path, "User-agent: *\nCrawl-delay: 1e20\n")
    out = tmp_path / "items.jsonl"
    with serve(site.root) as http:
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "slow", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", "--max-crawl-delay", "1", cwd=tmp_path)
        starts = sorted(r.start for r in http.log if r.path.startswith("/api/"))
        status = invcrawl("status", "--redis", redis_url, cwd=tmp_path)
        fleet = invcrawl("status", "--redis", redis_url, "--json", cwd=tmp_path)
        state, ttl = _state(sync_redis, http.url)
    assert result.code == 0, result.stderr[-2000:]
    assert {i["status"] for i in _items(out).values()} == {"ok"}
    check_accounting(sync_redis, "slow", site.keys).assert_ok()
    assert state["robots_delay_ms"] == "1000" and float(state["robots_delay_asked"]) == 1e20
    assert int(state["next_at"]) < int(state["last_at"]) + 2000  # not 1e23
    assert 0 < ttl <= STATE_TTL_MS
    assert starts[1] - starts[0] >= 0.9  # the capped delay still spaces the pages
    (host,) = json.loads(fleet.stdout)["hosts"]
    assert host["robots_delay_capped_from"] == 1e20 and host["robots_delay_s"] == 1
    assert "Crawl-delay 1e+20s capped to 1s" in status.stdout, status.stdout


@pytest.mark.parametrize(
    ("asked", "applied_ms"),
    [("1e20", 60_000), ("7", 7_000), ("nan", 0), ("inf", 0), ("-5", 0), ("1e400", 0)],
)
def test_the_crawl_delay_recorded_for_the_fleet(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis, asked: str, applied_ms: int
) -> None:
    site = _site(tmp_path, f"User-agent: *\nCrawl-delay: {asked}\n")
    with serve(site.root) as http:
        produced = invcrawl("produce", http.url, "--redis", redis_url, cwd=tmp_path)
        assert produced.code == 0, produced.stderr[-2000:]
        state, ttl = _state(sync_redis, http.url)
        assert int(state["robots_delay_ms"]) == applied_ms
        assert 0 < ttl <= STATE_TTL_MS
        if asked != "7":
            return
        # robots.txt fixed: the next parse lifts the delay (here the shared copy is gone
        # at once; in a fleet it expires after fetch/robots.ROBOTS_TTL). The host's
        # next start is still 7 s after the inventory's: this produce waits for it.
        (site.root / "robots.txt").write_text("User-agent: *\nDisallow:\n")
        sync_redis.delete(HostKeys(origin_of(http.url) or "").robots)
        again = invcrawl("produce", http.url, "--redis", redis_url, cwd=tmp_path)
        assert again.code == 0, again.stderr[-2000:]
        assert _state(sync_redis, http.url)[0]["robots_delay_ms"] == "0"


def test_robots_redirects_follow_the_page_redirect_policy(tmp_path: Path, redis_url: str) -> None:
    """A robots.txt redirecting to another port of the site's host was followed and
    obeyed; one redirecting within the site is followed as before."""
    site = _site(tmp_path, "User-agent: *\nDisallow: /\n", pages=3)
    moved = site.root / "moved-robots.txt"
    moved.write_text("User-agent: *\nDisallow: /api/mod0001.html\n")
    with serve(site.root) as other_port:
        elsewhere = {"/robots.txt": f"redirect:302:{other_port.url}robots.txt"}
        with serve(site.root, fault=elsewhere.get) as http:
            out = tmp_path / "elsewhere.jsonl"
            args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "away", "-o", str(out)]
            result = invcrawl(*args, "--consumers", "1", cwd=tmp_path)
        assert other_port.requests == []
    assert result.code == 0, result.stderr[-2000:]
    assert {i["status"] for i in _items(out).values()} == {"ok"}
    within = {"/robots.txt": "redirect:301:/moved-robots.txt"}
    with serve(site.root, fault=within.get) as http:
        out = tmp_path / "within.jsonl"
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "home", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", cwd=tmp_path)
        assert "/moved-robots.txt" in http.requests
    assert result.code == 0, result.stderr[-2000:]
    statuses = {n: i["status"] for n, i in _items(out).items()}
    assert statuses["demo.mod0001.func0"] == "skipped" and statuses["demo.mod0000.func0"] == "ok"


def test_only_the_first_500_kib_of_robots_txt_count(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    rules = "".join(f"Disallow: /nowhere/*x{i}*y*z.html$\n" for i in range(20_000))
    robots = "User-agent: *\nDisallow: /api/mod0001.html\n" + rules
    assert len(robots) > 500 * 1024
    site = _site(tmp_path, robots + "Disallow: /api/mod0000.html\n", pages=3)
    with serve(site.root) as http:
        out = tmp_path / "items.jsonl"
        args = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "big", "-o", str(out)]
        result = invcrawl(*args, "--consumers", "1", cwd=tmp_path)
        stored = json.loads(sync_redis.get(HostKeys(origin_of(http.url) or "").robots) or "{}")
    assert result.code == 0, result.stderr[-2000:]
    statuses = {n: i["status"] for n, i in _items(out).items()}
    assert statuses["demo.mod0001.func0"] == "skipped"  # in the first 500 KiB
    assert statuses["demo.mod0000.func0"] == "ok"  # after them: ignored, as Google does
    assert len(stored["body"].encode()) <= 500 * 1024 and stored["body"].endswith("\n")
