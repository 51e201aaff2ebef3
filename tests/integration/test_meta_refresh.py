"""A page's ``<meta http-equiv="refresh">`` is a redirect, under the page redirect policy:
followed within the site (sphinx-reredirects writes such stubs), not followed to another
port or host (the page is ``offsite``, the reason naming the target). Scrapy's own
MetaRefreshMiddleware followed it anywhere the address policy allowed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import redis

from support.accounting import check_accounting
from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def _refresh_to(page: Path, target: str) -> None:
    html = page.read_text(encoding="utf-8")
    tag = f'<meta http-equiv="refresh" content="0; url={target}">'
    page.write_text(html.replace("<head>", "<head>" + tag, 1), encoding="utf-8")


def test_meta_refresh_follows_the_site_redirect_policy(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    site = build_site(tmp_path / "site", pages=4, extras=False)
    api = site.root / "api"
    (api / "moved").mkdir()
    shutil.copy(api / "mod0001.html", api / "moved" / "mod0001.html")
    _refresh_to(api / "mod0001.html", "moved/mod0001.html")
    with serve(site.root, host="127.0.0.2") as other_host:
        _refresh_to(api / "mod0002.html", f"{other_host.url}api/mod0002.html")
        _refresh_to(api / "mod0003.html", "http://169.254.169.254/latest/meta-data/")
        with serve(site.root) as http:
            out = tmp_path / "items.jsonl"
            args = [
                "crawl",
                http.url,
                "--redis",
                redis_url,
                "--crawl-id",
                "refresh",
                "-o",
                str(out),
            ]
            result = invcrawl(*args, "--consumers", "1", cwd=tmp_path)
            requested = list(http.requests)
        assert other_host.requests == []
    assert result.code == 0, result.stderr[-2000:]
    assert "/api/moved/mod0001.html" in requested
    items = {i["name"]: i for i in map(json.loads, out.read_text().splitlines())}
    assert items["demo.mod0001.func0"]["status"] == "ok"
    assert items["demo.mod0000.func0"]["status"] == "ok"
    for module, target in (("mod0002", other_host.url), ("mod0003", "169.254.169.254")):
        item = items[f"demo.{module}.func0"]
        assert item["status"] == "offsite" and target in item["reason"], item
        assert "meta refresh" in item["reason"]
    check_accounting(sync_redis, "refresh", site.keys).assert_ok()
