"""Redirects are followed within the site only; elsewhere the page is ``offsite``.

A site on 127.0.0.1 whose pages redirect: a moved page and a dirhtml page without its
trailing slash (followed), to another loopback port, to another loopback host
(127.0.0.2) and to the cloud metadata address (not followed: ``offsite``, the reason
naming the target; the other servers never see a request), and a redirect loop (a
dead letter). ``--allow-host`` lets the crawl follow a redirect to another host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import redis

from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = pytest.mark.e2e


def _site(root: Path) -> Path:
    build_site(root, pages=8, extras=False)
    (root / "api" / "moved").mkdir()
    shutil.copy(root / "api" / "mod0001.html", root / "api" / "moved" / "mod0001.html")
    (root / "api" / "dir6").mkdir()
    shutil.copy(root / "api" / "mod0006.html", root / "api" / "dir6" / "index.html")
    return root


def _statuses(items: list[dict]) -> dict[str, set[str]]:  # type: ignore[type-arg]
    by_module: dict[str, set[str]] = {}
    for item in items:
        module = item["name"].split(".")[1] if item["name"].startswith("demo.") else item["name"]
        by_module.setdefault(module, set()).add(item["status"])
    return by_module


def test_redirects_within_the_site_only(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    root = _site(tmp_path / "site")
    with serve(root) as other_port, serve(root, host="127.0.0.2") as other_host:
        rules = {
            "/api/mod0001.html": "redirect:301:/api/moved/mod0001.html",
            "/api/mod0002.html": f"redirect:302:{other_port.url}api/mod0002.html",
            "/api/mod0003.html": f"redirect:307:{other_host.url}api/mod0003.html",
            "/api/mod0004.html": "redirect:302:http://169.254.169.254/latest/meta-data/",
            "/api/mod0005.html": "redirect:302:/api/loop.html",
            "/api/loop.html": "redirect:302:/api/mod0005.html",
            "/api/mod0006.html": "redirect:301:/api/dir6",  # then the server's own 301 to dir6/
        }
        with serve(root, fault=rules.get) as site:
            out = tmp_path / "items.jsonl"
            result = invcrawl(
                "crawl", site.url, "--redis", redis_url, "-o", str(out), "--consumers", "1",
                cwd=tmp_path,
            )  # fmt: skip
        assert other_port.requests == [] and other_host.requests == []
    assert result.code == 3, result.stderr  # the loop is a dead letter
    items = [json.loads(line) for line in out.read_text().splitlines()]
    statuses = _statuses(items)
    for module in ("mod0000", "mod0001", "mod0006", "mod0007"):
        assert statuses[module] == {"ok"}, (module, statuses)
    for module, target in (
        ("mod0002", other_port.url + "api/mod0002.html"),
        ("mod0003", other_host.url + "api/mod0003.html"),
        ("mod0004", "http://169.254.169.254/latest/meta-data/"),
    ):
        assert statuses[module] == {"offsite"}, (module, statuses)
        reasons = {i["reason"] for i in items if module in i["name"]}
        assert all(target in r for r in reasons), reasons
    assert statuses["mod0005"] == {"failed"}  # dead: its entries are `failed` items
    assert all("redirect loop" in i["reason"] for i in items if "mod0005" in i["name"])
    (crawl,) = sync_redis.smembers("invcrawl:crawls")
    (why,) = sync_redis.hvals(f"invcrawl:{{{crawl}}}:dlq:why")
    assert "redirect loop" in json.loads(why)["reason"]
    moved = next(i for i in items if i["name"] == "demo.mod0001.func0")
    assert moved["url"].endswith("/api/mod0001.html#demo.mod0001.func0")  # the canonical URL


def test_allow_host_follows_a_redirect_to_another_host(tmp_path: Path, redis_url: str) -> None:
    root = _site(tmp_path / "site")
    with serve(root, host="127.0.0.2") as cdn:
        rules = {"/api/mod0003.html": f"redirect:302:{cdn.url}api/mod0003.html"}
        with serve(root, fault=rules.get) as site:
            out = tmp_path / "items.jsonl"
            result = invcrawl(
                "crawl", site.url, "--redis", redis_url, "-o", str(out), "--consumers", "1",
                "--allow-host", "127.0.0.2", cwd=tmp_path,
            )  # fmt: skip
        assert sorted(cdn.requests) == ["/api/mod0003.html", "/robots.txt"]
    assert result.code == 0, result.stderr
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert {i["status"] for i in items} == {"ok"}


@pytest.mark.parametrize("target_host", ["127.0.0.2", "localhost"])
def test_redirects_of_inventories_and_robots_never_reach_the_local_network(
    tmp_path: Path, target_host: str
) -> None:
    """The site the user gives is trusted even on loopback. Its objects.inv redirecting
    to another internal host is followed only as far as the address policy allows:
    refused (one line; a redirect within the site is followed, tests/e2e/
    test_cli_errors.py), and its robots.txt redirecting there is not followed (robots.txt
    redirects stay on the site's origin): the internal host sees no request, and the
    inventory is still read."""
    root = _site(tmp_path / "site")
    with serve(root, host="127.0.0.2") as internal:
        base = internal.url.replace("127.0.0.2", target_host)
        rules = {"/objects.inv": f"redirect:302:{base}objects.inv"}
        with serve(root, fault=rules.get) as site:
            moved = invcrawl("inventory", site.url, cwd=tmp_path)
        rules = {"/robots.txt": f"redirect:302:{base}robots.txt"}
        with serve(root, fault=rules.get) as site:
            robots = invcrawl("inventory", site.url, "--log-level", "INFO", cwd=tmp_path)
        assert internal.requests == []
    assert moved.code == 1 and "Traceback" not in moved.stderr, moved.stderr
    (line,) = [ln for ln in moved.stderr.splitlines() if ln.startswith("invcrawl: error:")]
    assert "refused" in line and "loopback" in line, line
    assert robots.code == 0, robots.stderr
    # A robots.txt redirect follows the page redirect policy (fetch/robots.py): another
    # host is off the site, not requested at all, and the site has no robots.txt.
    assert "redirects off the site" in robots.stderr, robots.stderr[-2000:]
