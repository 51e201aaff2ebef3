"""invcrawl on a real 3-master Redis Cluster (`--redis-cluster`): three sites whose crawls
land on at least two shards, produced and consumed by three consumer processes; every
crawl's accounting holds; then a crawl whose shard's master is SIGKILLed mid-crawl and
restarted from its AOF: nothing lost, nothing duplicated."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from invcrawl.frontier.export import CHUNK
from invcrawl.frontier.keys import CrawlKeys
from support.accounting import check_accounting
from support.cli import clean_env, invcrawl
from support.cluster import Cluster, running_cluster
from support.httpserver import serve
from support.synthsite import generate
from support.tails import pulled_together

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def crawl_ids_on_two_shards(cluster: Cluster, count: int) -> list[str]:
    chosen: list[str] = []
    ports: set[int] = set()
    n = 0
    while len(chosen) < count or len(ports) < 2:
        crawl_id = f"site-{n}"
        n += 1
        port = cluster.port_of_key(CrawlKeys(crawl_id).meta)
        if len(chosen) < count - 1 or port not in ports or len(ports) >= 2:
            chosen.append(crawl_id)
            ports.add(port)
        if len(chosen) > count:
            chosen.pop(0)
            ports = {cluster.port_of_key(CrawlKeys(c).meta) for c in chosen}
    return chosen


def consumers(cluster: Cluster, tmp: Path, n: int, *extra: str) -> list[subprocess.Popen[str]]:
    argv = [sys.executable, "-m", "invcrawl", "consume", "--redis", cluster.url, "--redis-cluster"]
    return [
        subprocess.Popen(
            [*argv, "--burst", *extra], cwd=tmp, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        for _ in range(n)
    ]


def test_three_sites_on_two_shards_with_three_consumers(tmp_path: Path) -> None:
    roots = []
    entries = {}
    for name in ("a", "b", "c"):
        entries[name] = generate(tmp_path / "sites" / name, pages=25, per_page=4)
        roots.append(name)
    with running_cluster(tmp_path / "cluster") as cluster, serve(tmp_path / "sites") as http:
        crawl_ids = crawl_ids_on_two_shards(cluster, 3)
        shards = {cluster.port_of_key(CrawlKeys(c).meta) for c in crawl_ids}
        assert len(shards) >= 2
        for name, crawl_id in zip(roots, crawl_ids, strict=True):
            produced = invcrawl(
                "produce", f"{http.url}{name}/", "--crawl-id", crawl_id,
                "--redis", cluster.url, "--redis-cluster", cwd=tmp_path,
            )  # fmt: skip
            assert produced.code == 0, produced.stderr
        procs = consumers(cluster, tmp_path, 3)
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err[-2000:]
        client = redis.RedisCluster.from_url(cluster.url, decode_responses=True)
        try:
            for crawl_id in crawl_ids:
                assert client.hget(CrawlKeys(crawl_id).meta, "state") == "finished"
                check_accounting(client, crawl_id).assert_ok()  # type: ignore[arg-type]
        finally:
            client.close()
        status = invcrawl(
            "status", "--json", "--redis", cluster.url, "--redis-cluster", cwd=tmp_path
        )
        assert status.code == 0, status.stderr
        exported = invcrawl(
            "export", "--crawl-id", crawl_ids[0], "--redis", cluster.url, "--redis-cluster",
            "-o", str(tmp_path / "a.jsonl"), cwd=tmp_path,
        )  # fmt: skip
        assert exported.code == 0, exported.stderr
        assert len((tmp_path / "a.jsonl").read_text().splitlines()) == entries["a"]


def test_master_killed_and_restarted_mid_crawl_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    generate(tmp_path / "site", pages=60, per_page=4)
    with (
        running_cluster(tmp_path / "cluster") as cluster,
        serve(tmp_path / "site", lambda p: "delay:60" if p.endswith(".html") else None) as http,
    ):
        crawl_id = "restarted"
        produced = invcrawl(
            "produce", http.url, "--crawl-id", crawl_id, "--redis", cluster.url,
            "--redis-cluster", cwd=tmp_path,
        )  # fmt: skip
        assert produced.code == 0, produced.stderr
        victim = cluster.port_of_key(CrawlKeys(crawl_id).meta)
        procs = consumers(cluster, tmp_path, 3, "--lease", "3")
        client = redis.RedisCluster.from_url(cluster.url, decode_responses=True)
        stats = CrawlKeys(crawl_id).stats
        deadline = time.monotonic() + 60
        while int(client.hget(stats, "pages_done") or 0) < 15 and time.monotonic() < deadline:
            time.sleep(0.05)
        client.close()
        cluster.kill(victim)
        time.sleep(3)
        cluster.start_node(victim)  # from its AOF and nodes.conf
        cluster.wait_ok(60)
        errors = []
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err[-2000:]
            errors.append(err)
        # the outage hit the consumers, who rode it out
        assert any("Redis unavailable" in err for err in errors), errors[0][-2000:]
        client = redis.RedisCluster.from_url(cluster.url, decode_responses=True)
        try:
            assert client.hget(CrawlKeys(crawl_id).meta, "state") == "finished"
            acc = check_accounting(client, crawl_id)  # type: ignore[arg-type]
            acc.assert_ok()
            assert acc.duplicate_entries == 0 and not acc.missing
        finally:
            client.close()


def test_tails_of_crawls_on_two_shards_pulled_together(tmp_path: Path) -> None:
    with running_cluster(tmp_path / "cluster") as cluster:
        crawl_ids = crawl_ids_on_two_shards(cluster, 4)
        assert len({cluster.port_of_key(CrawlKeys(c).items) for c in crawl_ids}) >= 2
        counts = pulled_together(cluster.url, crawl_ids, cluster=True)
    assert counts == [[CHUNK + 5, 2, 2], [3, 0, 0], [3, 0, 0], [0, 1, 1]]
