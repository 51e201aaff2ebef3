"""`invcrawl forget CRAWL_ID`: every key of the crawl and its registry entries go, the
other crawls stay as they were; refused while a consumer serves the crawl, unless
--force (the consumer then stops serving it and takes its own entries back out); on a
real 3-master Redis Cluster too, with crawls on two shards."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from invcrawl.frontier.forget import crawl_key_names
from invcrawl.frontier.keys import ACTIVE, CRAWLS, CrawlKeys
from support.cli import clean_env, invcrawl
from support.cluster import running_cluster
from support.crawl import build_site, wait_for
from support.httpserver import serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def keys_of(r: redis.Redis, crawl_id: str) -> list[str]:  # type: ignore[type-arg]
    return sorted(r.scan_iter(CrawlKeys(crawl_id).pattern()))


def test_forget_deletes_one_crawl_and_nothing_else(redis_url: str, tmp_path: Path) -> None:
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    for name in ("a", "b"):
        site = build_site(tmp_path / name, pages=3)
        result = invcrawl(
            "crawl", str(site.root), "--crawl-id", name, "--redis", redis_url, cwd=tmp_path
        )
        assert result.code == 0, result.stderr
    a_keys, b_keys = keys_of(r, "a"), keys_of(r, "b")
    assert len(a_keys) >= 8
    # every key the crawl has is one forget lists (a key added to the schema and not to
    # frontier/forget.py fails here)
    slots, buckets, term_logs = r.hmget("invcrawl:{a}:meta", ["slots", "buckets", "term_logs"])
    listed = set(crawl_key_names(CrawlKeys("a"), int(slots), int(buckets), term_logs)[0])
    listed |= {CrawlKeys("a").meta, CrawlKeys("a").consumers, CrawlKeys("a").cinfo}
    assert set(a_keys) <= listed
    result = invcrawl("forget", "a", "--yes", "--redis", redis_url, cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert f"crawl a forgotten ({len(a_keys)} keys deleted)" in result.stderr
    assert keys_of(r, "a") == []
    assert not r.sismember(CRAWLS, "a") and r.zscore(ACTIVE, "a") is None
    assert keys_of(r, "b") == b_keys and r.sismember(CRAWLS, "b")
    status = invcrawl("status", "--redis", redis_url, cwd=tmp_path)
    assert "\na " not in status.stdout and "\nb " in status.stdout
    again = invcrawl("forget", "a", "--yes", "--redis", redis_url, cwd=tmp_path)
    assert again.code == 2 and "no crawl a" in again.stderr
    # a crawl whose producer failed stays in status until forgotten: now it can be
    (tmp_path / "empty").mkdir()
    failed = invcrawl(
        "produce", str(tmp_path / "empty"), "--crawl-id", "f", "--redis", redis_url, cwd=tmp_path
    )
    assert failed.code != 0 and r.sismember(CRAWLS, "f")
    assert invcrawl("forget", "f", "--yes", "--redis", redis_url, cwd=tmp_path).code == 0
    assert keys_of(r, "f") == [] and not r.sismember(CRAWLS, "f")
    r.close()


def test_forget_refuses_a_crawl_in_use_unless_forced(redis_url: str, tmp_path: Path) -> None:
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    site = build_site(tmp_path / "site", pages=40)

    def slow(path: str) -> str | None:  # pages take a while: the consumer holds some
        return "delay:2000" if path.startswith("/api/") else None

    with serve(site.root, slow) as http:
        result = invcrawl(
            "produce", http.url, "--crawl-id", "busy", "--redis", redis_url, cwd=tmp_path
        )
        assert result.code == 0, result.stderr
        log = open(tmp_path / "consumer.log", "wb")  # noqa: SIM115
        consumer = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "consume", "--redis", redis_url, "--lease", "3"],
            cwd=tmp_path, env=clean_env(), stdout=log, stderr=log,
        )  # fmt: skip
        log.close()
        try:
            wait_for(lambda: r.hlen("invcrawl:{busy}:lease") > 0, 60, "pages held")
            refused = invcrawl("forget", "busy", "--yes", "--redis", redis_url, cwd=tmp_path)
            assert refused.code == 1, refused.stderr
            assert "crawl busy is in use" in refused.stderr and "--force" in refused.stderr
            assert r.exists("invcrawl:{busy}:meta")
            forced = invcrawl(
                "forget", "busy", "--yes", "--force", "--redis", redis_url, cwd=tmp_path
            )
            assert forced.code == 0, forced.stderr
            # The consumer notices, stops serving the crawl and takes its entries back
            # out; its slot owner keys expire within a lease: nothing of the crawl is left.
            wait_for(lambda: keys_of(r, "busy") == [], 60, "every key of the crawl gone",
                     interval=0.2, diagnose=lambda: str(keys_of(r, "busy")))  # fmt: skip
            assert consumer.poll() is None, (tmp_path / "consumer.log").read_text()
            assert not r.sismember(CRAWLS, "busy")
        finally:
            consumer.send_signal(signal.SIGTERM)
            code = consumer.wait(60)
    assert code == 143, (tmp_path / "consumer.log").read_text()[-2000:]
    assert "was forgotten" in (tmp_path / "consumer.log").read_text()
    assert keys_of(r, "busy") == []
    r.close()


def test_forget_and_every_crawl_readers_on_a_cluster(tmp_path: Path) -> None:
    """Crawls on two shards: `changes` and `export` without --crawl-id read both, and
    `forget` deletes one crawl's keys on its shard and its registry entries on theirs."""
    with running_cluster(tmp_path / "cluster") as cluster:
        names: list[str] = []
        n = 0
        while len({cluster.port_of_key(CrawlKeys(c).meta) for c in names}) < 2:
            names = [f"c{n}", f"c{n + 1}"]
            n += 1
        for name in names:
            site = build_site(tmp_path / name, pages=2)
            produced = invcrawl(
                "produce", str(site.root), "--crawl-id", name, "--redis", cluster.url,
                "--redis-cluster", cwd=tmp_path,
            )  # fmt: skip
            assert produced.code == 0, produced.stderr
        consumed = invcrawl(
            "consume", "--burst", "--redis", cluster.url, "--redis-cluster", cwd=tmp_path
        )
        assert consumed.code == 0, consumed.stderr
        common = ("--redis", cluster.url, "--redis-cluster")
        changes = invcrawl("changes", *common, cwd=tmp_path)
        assert changes.code == 0, changes.stderr
        assert all(f"{name}=" in changes.stderr for name in names)
        exported = invcrawl("export", *common, "-o", "all.jsonl", cwd=tmp_path)
        assert exported.code == 0, exported.stderr
        client = redis.RedisCluster.from_url(cluster.url, decode_responses=True)
        try:
            kept = sorted(client.scan_iter(CrawlKeys(names[1]).pattern(), target_nodes="all"))
            result = invcrawl("forget", names[0], "--yes", *common, cwd=tmp_path)
            assert result.code == 0, result.stderr
            assert list(client.scan_iter(CrawlKeys(names[0]).pattern(), target_nodes="all")) == []
            assert not client.sismember(CRAWLS, names[0])
            again = sorted(client.scan_iter(CrawlKeys(names[1]).pattern(), target_nodes="all"))
            assert again == kept and client.sismember(CRAWLS, names[1])
        finally:
            client.close()
