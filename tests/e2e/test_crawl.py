"""The crawl, end to end: a Sphinx site built from our own sources, served over loopback
HTTP, crawled by `invcrawl crawl` with 2 consumer processes against a real redis-server.
Checks the accounting invariant, the absence of duplicates, resumption, and the content
of known symbols against the ground truth in tests/sites/expected.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis
from sites.build import BuiltSite
from sites.expected import EXPECTED, norm_sig, norm_ws
from sites.fixtures import built_sites_or_skip

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.accounting import stream_range
from support.cli import clean_env, invcrawl
from support.crawl import wait_for
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

COMBO = "s7-rtd"


@pytest.fixture(scope="module")
def site() -> BuiltSite:
    return built_sites_or_skip()[COMBO] if COMBO in built_sites_or_skip() else pytest.skip()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def stream_pairs(url: str, crawl: str) -> Counter[tuple[str, str]]:
    client = redis.Redis.from_url(url, decode_responses=True)
    pairs: Counter[tuple[str, str]] = Counter()
    for _, fields in stream_range(client, f"invcrawl:{{{crawl}}}:items", count=1_000_000):
        pairs[(fields["key"], fields["sum"])] += 1
    client.close()
    return pairs


def test_crawl_with_two_consumers(site: BuiltSite, tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    with RedisServer(tmp_path / "redis") as server, serve(site.html) as http:
        args = (
            "crawl",
            http.url,
            "--redis",
            server.url,
            "--crawl-id",
            "fx",
            "--consumers",
            "2",
            "--slots",
            "4",
            "-o",
            str(out),
            "--progress",
            "lines",
        )
        first = invcrawl(*args, cwd=tmp_path)
        assert first.code == 0, first.stderr
        fetched_first = [p for p in http.requests if p.endswith(".html")]
        pairs = stream_pairs(server.url, "fx")

        # Run again: resumes, fetches nothing that was committed, adds nothing.
        http.requests.clear()
        again = invcrawl(*args, cwd=tmp_path)
        assert again.code == 0, again.stderr
        assert [p for p in http.requests if p.endswith(".html")] == []
        assert stream_pairs(server.url, "fx") == pairs

    inventory = parse_inventory(site.inventory.read_bytes())
    plan = plan_crawl(inventory, http.url + "objects.inv")
    items = read_jsonl(out)
    keys = [i["key"] for i in items]

    # Accounting invariant: one item per unique inventory entry, none twice.
    assert len(keys) == len(set(keys)) == plan.entries
    assert set(keys) == {t.key for p in plan.pages for t in p.targets}
    assert all(n == 1 for n in pairs.values()), "a (key, checksum) pair twice in the stream"
    # Each content page was fetched exactly once.
    assert Counter(fetched_first) == Counter(
        "/" + p.page_url.removeprefix(http.url) for p in plan.pages if p.status == "fetch"
    )

    by_key = {i["key"]: i for i in items}
    statuses = Counter(i["status"] for i in items)
    assert statuses["skipped"] == plan.skipped_entries
    assert statuses["ok"] == plan.entries - plan.skipped_entries, statuses
    assert f"{len(items)} items written" in first.stderr

    checked = 0
    for key, expected in EXPECTED.items():
        item = by_key[key]
        assert item["url"].startswith(http.url) and item["crawl"] == "fx"
        if "signature" in expected:
            assert norm_sig(item["signature"]) == norm_sig(expected["signature"]), key
            checked += 1
        if "doc" in expected:
            assert expected["doc"] in norm_ws(item["doc"]), key
            checked += 1
    assert checked >= 40


def test_produce_then_consume_in_one_process(site: BuiltSite, tmp_path: Path) -> None:
    """`produce --consume` (the first process of `invcrawl crawl`): one command produces
    (in a forked child) and consumes; it exits 0 once the crawl is complete, with the
    crawl's own settings (here 3 slots) applied by the producer."""
    with RedisServer(tmp_path / "redis") as server, serve(site.html) as http:
        args = ("--redis", server.url, "--crawl-id", "pc")
        run = invcrawl("produce", http.url, "--consume", "--slots", "3", *args, cwd=tmp_path)
        assert run.code == 0, run.stderr
        client = redis.Redis.from_url(server.url, decode_responses=True)
        meta = client.hgetall(CrawlKeys("pc").meta)
        client.close()
        exported = invcrawl("export", *args, "-o", str(tmp_path / "pc.jsonl"), cwd=tmp_path)
        assert exported.code == 0, exported.stderr
    assert meta["state"] == "finished" and meta["producer"] == "done" and meta["slots"] == "3"
    plan = plan_crawl(parse_inventory(site.inventory.read_bytes()), http.url + "objects.inv")
    keys = [i["key"] for i in read_jsonl(tmp_path / "pc.jsonl")]
    assert len(keys) == len(set(keys)) == plan.entries


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _wait_gone(pids: set[int], timeout: float, what: str) -> None:
    """Wait until none of ``pids`` exists any more (exited and reaped)."""
    wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in pids), timeout, what)


def test_produce_consume_producer_is_a_child_stopped_with_its_consumer(
    site: BuiltSite, tmp_path: Path
) -> None:
    """The producer of `produce --consume` runs in a forked child (its inventory memory
    never reaches the consumer's): while the inventory is slow to come, that child exists,
    and a SIGTERM to the command stops both; no process is left behind."""

    def fault(path: str) -> str | None:
        return "delay:20000" if path.endswith("objects.inv") else None

    with RedisServer(tmp_path / "redis") as server, serve(site.html, fault) as http:
        argv = [sys.executable, "-m", "invcrawl", "produce", http.url, "--consume"]
        argv += ["--redis", server.url, "--crawl-id", "child"]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        try:
            kids = wait_for(lambda: _children(proc.pid), 30, "the forked producer")  # mid-fetch
            time.sleep(1.0)  # both past their start-up: Scrapy handles the signal
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        _wait_gone(kids, 15, "the producer child to exit")
    assert proc.returncode == 143, err[-2000:]  # stopped by SIGTERM before it was produced
    assert "invcrawl: error: stopped before the inventory" in err


def test_crawl_restarts_a_producing_consumer_killed_with_sigkill(
    site: BuiltSite, tmp_path: Path
) -> None:
    """`invcrawl crawl`: the first consumer, killed with SIGKILL while its forked producer
    waits for a slow objects.inv, is restarted; the crawl completes with every entry
    exactly once, exits 0, and leaves no process behind (the orphaned producer finishes
    on its own)."""

    def fault(path: str) -> str | None:
        return "delay:1500" if path.endswith("objects.inv") else None

    def cmdline(pid: int) -> bytes:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return b""

    out = tmp_path / "out.jsonl"
    with serve(site.html, fault) as http:
        argv = [sys.executable, "-m", "invcrawl", "crawl", http.url, "--consumers", "2"]
        argv += ["-o", str(out), "--progress", "lines", "--data-dir", str(tmp_path / "data")]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        try:
            (victim,) = wait_for(
                lambda: [p for p in _children(proc.pid) if b"--consume" in cmdline(p)],
                30,
                "the producing consumer",
            )
            orphans = wait_for(lambda: _children(victim), 30, "its producer")  # mid-fetch
            os.kill(victim, signal.SIGKILL)
            _, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
        _wait_gone(orphans, 20, "the orphaned producer to finish")
    assert proc.returncode == 0, err[-3000:]
    # (the consumer's last error line, if it logged one, between the code and the restart)
    assert re.search(r"consumer 0 exited with -9 \(.*\); restarting it", err), err[-3000:]
    plan = plan_crawl(parse_inventory(site.inventory.read_bytes()), http.url + "objects.inv")
    keys = [i["key"] for i in read_jsonl(out)]
    assert len(keys) == len(set(keys)) == plan.entries


def test_rerun_with_a_grown_inventory_consumes_the_new_pages(
    site: BuiltSite, tmp_path: Path
) -> None:
    """A finished crawl re-run after the site gained pages: `produce --consume` must not
    take the earlier run's finished state for completion before its producer is done."""
    root = tmp_path / "site"
    shutil.copytree(site.html, root)
    full = site.inventory.read_bytes()
    header, _, body = full.partition(b"zlib.\n")
    lines = zlib.decompress(body).decode().splitlines()
    first_page = lines[0].split()[3].split("#")[0].replace("$", "")
    small = [ln for ln in lines if ln.split()[3].split("#")[0].replace("$", "") == first_page]
    assert 0 < len(small) < len(lines)
    (root / "objects.inv").write_bytes(
        header + b"zlib.\n" + zlib.compress("\n".join(small).encode() + b"\n")
    )
    slow_inventory: list[bool] = []  # the re-run's consumer is ready long before it

    def fault(path: str) -> str | None:
        return "delay:1500" if slow_inventory and path.endswith("objects.inv") else None

    with RedisServer(tmp_path / "redis") as server, serve(root, fault) as http:
        args = ("--redis", server.url, "--crawl-id", "grow")
        assert invcrawl("produce", http.url, "--consume", *args, cwd=tmp_path).code == 0
        (root / "objects.inv").write_bytes(full)
        slow_inventory.append(True)
        rerun = invcrawl("produce", http.url, "--consume", *args, cwd=tmp_path)
        assert rerun.code == 0, rerun.stderr
        exported = invcrawl("export", *args, "-o", str(tmp_path / "grow.jsonl"), cwd=tmp_path)
        assert exported.code == 0, exported.stderr
    plan = plan_crawl(parse_inventory(full), http.url + "objects.inv")
    items = read_jsonl(tmp_path / "grow.jsonl")
    assert len(items) == plan.entries
    assert sum(i["status"] == "ok" for i in items) == plan.entries - plan.skipped_entries
