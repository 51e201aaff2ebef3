"""`invcrawl crawl` over several sites at once: one crawl and one output file per site,
a site whose inventory fails reported in one line while the others complete, and the
options that only make sense for one site refused before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer
from support.cli import invcrawl
from support.crawl import build_site, check_accounting
from support.datahome import user_data_dir
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_three_sites_one_of_them_broken(tmp_path: Path) -> None:
    root = tmp_path / "www"
    sites = {
        "alpha": build_site(root / "alpha", pages=12, functions=2),
        "beta": build_site(root / "beta", pages=3, functions=2),
    }
    (root / "broken").mkdir()  # no objects.inv: HTTP 404
    out = tmp_path / "out"
    listing = tmp_path / "sites.txt"
    with RedisServer(tmp_path / "redis") as server, serve(root) as http:
        urls = {name: f"{http.url}{name}/" for name in (*sites, "broken")}
        listing.write_text(f"# a list of sites\n{urls['beta']}   # the small one\n\n")
        result = invcrawl(
            "crawl",
            urls["alpha"],
            urls["broken"],
            "--sites",
            str(listing),
            "--redis",
            server.url,
            "--out-dir",
            str(out),
            "--consumers",
            "2",
            "--progress",
            "lines",
            cwd=tmp_path,
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        for name, site in sites.items():
            crawl = crawl_id_for(urls[name])
            check_accounting(client, crawl, site.keys).assert_ok()
            lines = (out / f"{crawl}.jsonl").read_text().splitlines()
            assert {json.loads(line)["key"] for line in lines} == set(site.keys)
        broken = crawl_id_for(urls["broken"])
        meta = client.hgetall(f"invcrawl:{{{broken}}}:meta")
        client.close()
    assert result.code == 1, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("invcrawl: error:")]
    assert len(errors) == 1 and broken in errors[0] and "HTTP 404" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert "2 of 3 crawls finished" in result.stderr
    assert meta["state"] == "failed" and not (out / f"{broken}.jsonl").exists()


def test_one_output_file_for_several_sites_is_a_usage_error(tmp_path: Path) -> None:
    # every SITE is checked first: a typo is a usage error before anything starts
    result = invcrawl("crawl", str(tmp_path), str(tmp_path / "x"), "-o", "a.jsonl", cwd=tmp_path)
    assert result.code == 2 and "no such file or directory" in result.stderr
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    result = invcrawl(
        "crawl", str(tmp_path / "a"), str(tmp_path / "b"), "-o", "a.jsonl", cwd=tmp_path
    )
    assert result.code == 2 and "-o names one output file" in result.stderr  # usage (README)
    assert not user_data_dir().exists()  # refused before any Redis was started


def test_an_unreadable_sites_file_is_one_line(tmp_path: Path) -> None:
    result = invcrawl("produce", "--sites", str(tmp_path / "none.txt"), cwd=tmp_path)
    assert result.code == 2 and "cannot read --sites" in result.stderr  # usage (README)
    assert len(result.stderr.strip().splitlines()) == 1
