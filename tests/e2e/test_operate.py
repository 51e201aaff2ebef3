"""Operating a crawl: status (JSON keys, exact per-slot figures, 80 columns, --watch),
export and export --follow (killed and restarted mid-crawl), resharding mid-crawl, and
the redis-cli cookbook of docs/redis-keys.md run against a real crawl."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.client import NEVER_DECODE

from invcrawl.common.sharding import slot_for
from invcrawl.frontier.keys import CRAWLS, REGISTRY_KEYS, CrawlKeys, HostKeys
from invcrawl.frontier.summary import CrawlStatus, FleetStatus
from invcrawl.localredis.server import RedisServer
from invcrawl.render_status import render_fleet, render_status
from support.crawl import (
    REPO,
    Harness,
    Site,
    Throttle,
    build_site,
    check_accounting,
    dedupe_jsonl,
    read_items,
    wait_for,
)
from support.httpserver import StaticServer, serve

pytestmark = pytest.mark.e2e

WIDTH = 80
STATUS_KEYS = {
    "state",
    "entries_total",
    "pages_total",
    "pages_done",
    "pages_dead",
    "items",
    "items_by_status",
    "per_slot",
    "consumers_alive",
    "rate_pages_s",
    "eta_s",
}
SLOT_KEYS = {"slot", "queued", "inflight", "delayed", "dead", "owner"}
# Pages of the paused crawl that fail: one for good (403: dead at once), one that keeps
# answering 503 (retried after a backoff: delayed).
DEAD_PAGE, RETRY_PAGE = Site.url_path(1), Site.url_path(2)


def assert_fits(text: str) -> None:
    long = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not long, "lines wider than 80 columns:\n" + "\n".join(long)


# -- a crawl frozen mid-way ------------------------------------------------------------------


@dataclass
class Paused:
    harness: Harness
    server: RedisServer
    http: StaticServer
    site: Site

    @property
    def crawl(self) -> str:
        return self.harness.crawl_id


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Paused]:
    """A crawl stopped (SIGSTOP) mid-way with every kind of state present: queued,
    in-flight and delayed tasks, a dead page, items, two consumers and a consumer group
    with pending entries. Nothing changes while it is frozen, so figures are exact."""
    tmp = tmp_path_factory.mktemp("paused")
    site = build_site(tmp / "site", pages=60)
    throttle = Throttle(delay=0.25, actions={DEAD_PAGE: "403", RETRY_PAGE: "503"})
    server = RedisServer(tmp / "redis", fsync="everysec")
    server.start()
    with serve(site.root, throttle) as http:
        h = Harness(
            server.url,
            "paused",
            tmp / "work",
            robots=False,
            lease=30,
            concurrency=2,
            max_tries=3,
            backoff_base=60,
            backoff_max=120,
        )
        try:
            h.produce(http.url, slots=4)
            consumers = [h.start_consumer(), h.start_consumer()]
            for proc in consumers:
                h.wait_joined(proc)

            def ready() -> bool:
                s = h.status()
                slots = s["per_slot"]
                return bool(
                    s["pages_dead"] >= 1
                    and sum(r["delayed"] for r in slots) >= 1
                    and sum(r["inflight"] for r in slots) >= 1
                    and sum(r["queued"] for r in slots) >= 1
                    and s["pages_done"] >= 5
                )

            wait_for(
                ready,
                60,
                "queued, in-flight, delayed and dead tasks",
                diagnose=lambda: json.dumps(h.status())[:2000],
            )
            for proc in consumers:
                proc.pause()
            time.sleep(0.3)  # let a commit already on the wire land
            h.redis.xgroup_create(h.keys.items, "export", id="0")
            # (read undecoded: the items are binary, common/codec.py)
            h.redis.execute_command(
                "XREADGROUP", "GROUP", "export", "ops-export", "COUNT", 3,
                "STREAMS", h.keys.items, ">", **{NEVER_DECODE: True},
            )  # fmt: skip
            yield Paused(h, server, http, site)
        finally:
            h.close()
            server.stop()


def test_status_json_of_a_paused_crawl(paused: Paused) -> None:
    h = paused.harness
    result = h.cli("status", "--json")
    assert result.code == 0, result.stderr
    s = json.loads(result.stdout)
    assert set(s) >= STATUS_KEYS, STATUS_KEYS - set(s)
    assert s["crawl_id"] == paused.crawl
    assert s["state"] == "running"
    assert s["entries_total"] == paused.site.entries
    assert s["pages_total"] == paused.site.tasks
    assert s["pages_dead"] == 1
    assert set(s["items_by_status"]) == {
        "ok",
        "anchor_missing",
        "page_not_found",
        "skipped",
        "offsite",
        "failed",
    }
    assert (
        s["items"]
        == sum(s["items_by_status"].values())
        == len({i.key for i in read_items(h.redis, paused.crawl)})
    )
    rows = s["per_slot"]
    assert [r["slot"] for r in rows] == [0, 1, 2, 3]
    assert all(set(r) == SLOT_KEYS for r in rows)
    # Exact while frozen: every page is queued, in flight, delayed, done or dead.
    accounted = sum(r["queued"] + r["inflight"] + r["delayed"] + r["dead"] for r in rows)
    assert accounted + s["pages_done"] == s["pages_total"], s
    for r in rows:
        k = h.keys
        assert r["queued"] == h.redis.llen(k.queue(r["slot"]))
        assert r["inflight"] == h.redis.zcard(k.inflight(r["slot"]))
        assert r["delayed"] == h.redis.zcard(k.delayed(r["slot"]))
        assert r["owner"] == h.redis.get(k.owner(r["slot"]))
    (dead_id,) = h.redis.zrange(h.keys.dlq, 0, -1)
    assert rows[slot_for(dead_id, 4)]["dead"] == 1
    assert len(s["consumers_alive"]) == 2
    assert {r["owner"] for r in rows} <= set(s["consumers_alive"])


def test_status_text_of_a_paused_crawl(paused: Paused) -> None:
    h = paused.harness
    result = h.cli("status")
    assert result.code == 0, result.stderr
    text = result.stdout
    print(text)
    assert_fits(text)
    assert text.startswith(f"crawl {paused.crawl}  [running]  Demo 1.0")
    s = h.status()
    settled = s["pages_done"] + s["pages_dead"]
    assert f"{s['pages_done']} done, 1 dead / {s['pages_total']}" in text
    assert re.search(r"\[#*\.*\]\s+\d+\.\d%", text), "a progress bar"
    assert f"{settled / s['pages_total'] * 100:5.1f}%" in text
    for name, count in s["items_by_status"].items():
        assert f"{name} {count}" in text
    assert "pages/s" in text and "ETA" in text
    table = [ln.split() for ln in text.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+", ln)]
    assert [int(row[0]) for row in table] == [0, 1, 2, 3]
    for row, figures in zip(table, s["per_slot"], strict=True):
        assert [int(x) for x in row[1:5]] == [
            figures["queued"],
            figures["inflight"],
            figures["delayed"],
            figures["dead"],
        ]
        assert row[5] == (figures["owner"] or "-")[: len(row[5])]
    assert "consumers " in text


def test_status_lists_known_crawls(paused: Paused, tmp_path: Path) -> None:
    """Without --crawl-id: one line per crawl (and per busy host), the same in JSON."""
    h = paused.harness
    other = Harness(
        paused.server.url, "another-crawl-with-a-rather-long-identifier-x", tmp_path, robots=False
    )
    try:
        other.produce(paused.http.url, slots=2)
        result = h.cli("status", crawl_id=False)
        assert result.code == 0, result.stderr
        print(result.stdout)
        lines = result.stdout.splitlines()
        # piped: nothing is cut, the long crawl id included (a terminal gets its width:
        # tests/e2e/test_exit_codes.py)
        assert any(ln.startswith(other.crawl_id + " ") for ln in lines)
        assert lines[0].startswith("2 crawls (2 open)")
        assert lines[2].split() == ["crawl", "state", "pages", "items", "dead", "rate/s"]
        assert any(ln.startswith("paused ") and " running " in ln for ln in lines)
        assert any(ln.startswith("another-crawl-") for ln in lines)
        as_json = json.loads(h.cli("status", "--json", crawl_id=False).stdout)
        assert {d["crawl_id"] for d in as_json["crawls"]} == {"paused", other.crawl_id}
        assert as_json["totals"]["crawls"] == 2 and as_json["totals"]["open"] == 2
    finally:
        other.redis.srem(CRAWLS, other.crawl_id)
        for key in other.redis.scan_iter(other.keys.pattern()):
            other.redis.delete(key)
        other.close()


def test_status_fits_80_columns_whatever_the_figures() -> None:
    """Large counts, long ids and many consumers still render in an 80-column terminal;
    piped (no width), nothing is cut."""
    slots = [
        {
            "slot": s,
            "queued": 123456,
            "inflight": 12345,
            "delayed": 123456,
            "dead": 12345,
            "owner": f"worker-{s}.cluster.example.org-4194303-beef",
        }
        for s in range(4)
    ]
    status: dict[str, Any] = {
        "crawl_id": "docs.python.org-3-with-a-long-crawl-id-" + "x" * 60,
        "state": "running",
        "producer": "done",
        "site": "https://docs.python.org/3/" + "a" * 100,
        "project": "Python",
        "version": "3.11.4",
        "entries_total": 12345678,
        "pages_total": 1234567,
        "pages_done": 1234000,
        "pages_dead": 567,
        "pages_open": 0,
        "items": 12345678,
        "items_by_status": {
            "ok": 12345678,
            "anchor_missing": 123456,
            "page_not_found": 123456,
            "skipped": 123456,
            "offsite": 12345,
        },
        "stream_entries": 23456789,
        "slots": 4,
        "per_slot": slots,
        "consumers_alive": [f"consumer-{i}.cluster.example.org-4194303-beef" for i in range(12)],
        "elapsed_s": 123456.7,
        "rate_pages_s": 12345.67,
        "eta_s": 1234567.0,
        "counters": {
            "claims": 12345678,
            "retries": 1234567,
            "reaped": 123456,
            "fenced": 12345,
            "redriven": 12345,
        },
        "created_at": 0,
        "finished_at": None,
        "error": "x" * 300,
    }
    text = render_status(CrawlStatus.from_dict(status), WIDTH)
    print(text)
    assert_fits(text)
    assert status["error"] in render_status(CrawlStatus.from_dict(status))
    hosts = [
        {
            "host": "https://docs.example.org.with.a.very.long.name.example:44312",
            "in_flight": 1234,
            "limit": 12345,
            "delay_s": 1234.5,
            "blocked_until": 1_800_000_000_000,
            "block_reason": "HTTP 429 " + "y" * 50,
        }
    ]
    fleet = {
        "crawls": [
            {**status, "consumers_alive": 12},
            {**status, "crawl_id": "short", "consumers_alive": 0},
        ],
        "hosts": hosts,
        "totals": {
            "crawls": 123456,
            "open": 12345,
            "pages_total": 123456789,
            "pages_done": 12345678,
            "pages_dead": 1234567,
            "items": 1234567890,
            "rate_pages_s": 12345.6,
        },
    }
    text = render_fleet(FleetStatus.from_dict(fleet), WIDTH)
    print(text)
    assert_fits(text)
    assert status["crawl_id"] in render_fleet(FleetStatus.from_dict(fleet))


# -- the redis-cli cookbook and the key table --------------------------------------------------


def cookbook_blocks() -> list[str]:
    text = (REPO / "docs" / "redis-keys.md").read_text()
    cookbook = text[text.index("## Cookbook") :]
    return re.findall(r"^```sh\n(.*?)^```", cookbook, re.S | re.M)


def documented_keys() -> dict[str, str]:
    """pattern -> type, from the key table of docs/redis-keys.md."""
    text = (REPO / "docs" / "redis-keys.md").read_text()
    rows = re.findall(r"^\| `(invcrawl:[^`]+)` \| (\w+) \|", text, re.M)
    return {pattern: kind.lower() for pattern, kind in rows}


# the placeholder of each bucketed key's number in the key table (<slot> for the others)
_PLACEHOLDERS = {
    "isum": "<b>",
    "search_record": "<r>",
    "search_log": "<h>",
    "old_search_postings": "<h>",
}


def schema_keys() -> set[str]:
    """Every key frontier/keys.py can build, with <slot>/<b>/{H} placeholders."""
    k = CrawlKeys("C")
    host = HostKeys("H")
    out = set(REGISTRY_KEYS) | {
        getattr(host, name)
        for name in dir(HostKeys)
        if isinstance(getattr(HostKeys, name), property) and name != "base"
    }
    for name in dir(CrawlKeys):
        attr = getattr(CrawlKeys, name)
        if name.startswith("_") or name in ("base", "crawl_id", "pattern", "bind"):
            continue
        if isinstance(attr, property):
            out.add(getattr(k, name))
        elif callable(attr):
            out.add(getattr(k, name)(_PLACEHOLDERS.get(name, "<slot>")))
    return out


def test_key_table_matches_the_schema() -> None:
    assert set(documented_keys()) == schema_keys()


def test_every_live_key_is_documented(paused: Paused) -> None:
    """Each key of a real crawl matches a documented pattern, with the documented type."""
    h = paused.harness
    patterns = {
        re.compile(
            re.escape(p)
            .replace(re.escape("{C}"), re.escape("{" + paused.crawl + "}"))
            .replace(re.escape("<slot>"), r"\d+")
            .replace(re.escape("<b>"), r"\d+")
            .replace(re.escape("<r>"), r"\d+")
            .replace(re.escape("<h>"), r"\d+")
            .replace(re.escape("{H}"), r"\{[^}]+\}")
            + r"\Z"
        ): kind
        for p, kind in documented_keys().items()
    }
    hosts = list(h.redis.scan_iter("invcrawl:host:*"))
    assert hosts, "a crawl over HTTP leaves its host's politeness keys"
    keys = [*h.redis.scan_iter(h.keys.pattern()), *REGISTRY_KEYS, *hosts]
    assert len(keys) > 15
    for key in keys:
        kinds = [kind for regex, kind in patterns.items() if regex.match(key)]
        assert kinds, f"undocumented key {key}"
        assert h.redis.type(key) == kinds[0], key


ERROR_REPLY = re.compile(r"^(\(error\) )?(ERR|WRONGTYPE|NOGROUP|NOSCRIPT|NOPERM)\b", re.M)


def test_cookbook_runs_against_a_real_crawl(paused: Paused, tmp_path: Path) -> None:
    """Every sh block of the cookbook, in POSIX sh, with `redis-cli` pointed at the
    crawl's server: exit 0, output, and no error reply."""
    # (the block pointing redis-cli at the embedded Redis: tests/e2e/test_local_service.py)
    blocks = [block for block in cookbook_blocks() if not block.startswith('D="${D:-')]
    assert len(blocks) >= 10
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "redis-cli"
    wrapper.write_text(f'#!/bin/sh\nexec /usr/bin/redis-cli -p {paused.server.port} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "C": paused.crawl, "LC_ALL": "C"}
    setup, *recipes = blocks
    for block in recipes:
        proc = subprocess.run(
            ["sh", "-eu", "-c", setup + block],
            env=env,
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # XRANGE prints the items' binary zstd frames
            timeout=30,
            check=False,
        )
        out = proc.stdout
        assert proc.returncode == 0, f"{block}\n--- exit {proc.returncode}:\n{proc.stderr}"
        assert not ERROR_REPLY.search(out), f"{block}\n--- error reply:\n{out}"
        assert out.strip().removeprefix(f"crawl {paused.crawl}").strip(), f"{block}: no output"
        if "zstd -dcf" in block:  # one item's JSON by hand: the item itself
            item = json.loads(out.strip().removeprefix(f"crawl {paused.crawl}"))
            assert item["crawl"] == paused.crawl and item["key"], out
    # The setup block finds the crawl by itself when C is not set.
    found = subprocess.run(
        ["sh", "-c", setup],
        env={**env, "C": ""},
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert found.stdout.strip() == f"crawl {paused.crawl}"


# -- export and export --follow ---------------------------------------------------------------


def follow(h: Harness, output: Path) -> Any:
    return h.spawn("follow", h.argv("export", "-o", str(output), "--follow"))


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_follow_survives_sigkill_and_export(redis_url: str, tmp_path: Path) -> None:
    """A follower reads items while the crawl runs, is SIGKILLed mid-way and restarted:
    deduplicated by key + checksum its output is exactly the crawl's items. Meanwhile
    `status --watch` refreshes in 80 columns and exits when the crawl finishes; a plain
    export writes the latest version of every item once."""
    site = build_site(tmp_path / "site", pages=90)
    throttle = Throttle(delay=0.05)
    crawl = "follow"
    out = tmp_path / "follow.jsonl"
    with (
        serve(site.root, throttle) as http,
        Harness(redis_url, crawl, tmp_path / "work", robots=False) as h,
    ):
        h.produce(http.url, slots=4)
        watcher = h.spawn("watch", h.argv("status", "--watch"))
        follower = follow(h, out)
        consumers = [h.start_consumer(), h.start_consumer()]
        wait_for(lambda: line_count(out) >= 40, 60, "the follower to write items", diagnose=h.logs)
        assert not h.finished(), "the crawl ended before the follower could be killed"
        follower.kill()
        assert follower.wait(10) == -signal.SIGKILL
        killed_at = line_count(out)
        time.sleep(0.5)  # the crawl goes on without the follower
        follower = follow(h, out)
        h.wait_finished(60)
        assert h.wait_exited(consumers) == [0, 0]
        items = read_items(h.redis, crawl)
        want = {(i.key, i.sum) for i in items}

        def caught_up() -> bool:
            return {(k, s[:12]) for k, s in dedupe_jsonl(out)[1]} == want

        wait_for(caught_up, 30, "the restarted follower to catch up", diagnose=follower.tail)
        follower.signal(signal.SIGINT)
        assert follower.wait(10) == 130, follower.tail()
        lines, unique = dedupe_jsonl(out)
        assert killed_at < len(want) <= lines
        assert {(k, s[:12]) for k, s in unique} == want
        assert {k for k, _ in unique} == site.keys
        # Nothing is left pending in the group: every delivered entry was acknowledged.
        (group,) = h.redis.xinfo_groups(h.keys.items)
        assert group["pending"] == 0

        assert watcher.wait(15) == 0, watcher.tail()
        watched = watcher.output()
        assert watched.count(f"crawl {crawl}  [") >= 2, "--watch refreshed"
        assert f"crawl {crawl}  [finished]" in watched
        assert_fits(watched)

        exported = h.cli("export", "-o", str(tmp_path / "export.jsonl"))
        assert exported.code == 0, exported.stderr
        assert f"{site.entries} items written" in exported.stderr
        lines, unique = dedupe_jsonl(tmp_path / "export.jsonl")
        assert lines == len(unique) == site.entries
        acc = check_accounting(h.redis, crawl, site.keys).assert_ok()
        assert {k: v for k, v in unique} == {k: acc.latest[k]["checksum"] for k in acc.latest}


AS_HOST = (
    "import socket, sys; host = sys.argv.pop(1); socket.gethostname = lambda: host; "
    "from invcrawl.cli import main; sys.exit(main())"
)


def test_follow_resumes_under_another_hostname(redis_url: str, tmp_path: Path) -> None:
    """A follower that received entries and died on one host (a pod, a `run --rm`
    container) is replaced by one with another hostname: the entries the dead one never
    acknowledged still reach the output."""
    h = Harness(redis_url, "hosts", tmp_path)
    try:
        h.redis.hset(h.keys.meta, mapping={"slots": 1, "state": "finished"})
        h.redis.sadd(CRAWLS, "hosts")
        for n in range(20):
            item = {"key": f"py:function:f{n}", "checksum": f"{n:012d}"}
            h.redis.xadd(
                h.keys.items,
                {
                    "key": item["key"],
                    "sum": item["checksum"],
                    "kind": "new",
                    "task": "t",
                    "data": json.dumps(item),
                },
            )
        h.redis.xgroup_create(h.keys.items, "export", id="0")
        # The follower on pod-a received 5 entries and was killed before writing them.
        h.redis.xreadgroup("export", "pod-a-export", {h.keys.items: ">"}, count=5)
        out = tmp_path / "out.jsonl"
        argv = [
            sys.executable,
            "-c",
            AS_HOST,
            "pod-b",
            *h.argv("export", "-o", str(out), "--follow")[3:],
        ]
        follower = h.spawn("follow", argv)
        wait_for(lambda: line_count(out) >= 15, 30, "the follower to write", diagnose=follower.tail)
        time.sleep(1.0)
        follower.signal(signal.SIGINT)
        assert follower.wait(10) == 130, follower.tail()
        assert {k for k, _ in dedupe_jsonl(out)[1]} == {f"py:function:f{n}" for n in range(20)}
    finally:
        h.close()


# -- resharding -----------------------------------------------------------------------------


def queued_and_delayed(
    client: redis.Redis, keys: CrawlKeys, slots: int
) -> tuple[dict[str, int], dict[str, tuple[int, float]]]:
    queued = {}
    delayed = {}
    for slot in range(slots):
        for task_id in client.lrange(keys.queue(slot), 0, -1):
            queued[task_id] = slot
        for task_id, score in client.zrange(keys.delayed(slot), 0, -1, withscores=True):
            delayed[task_id] = (slot, score)
    return queued, delayed


def test_reshard_mid_crawl(redis_url: str, tmp_path: Path) -> None:
    """Reshard 8 -> 3 while consumers are frozen (queued and delayed tasks move, exactly,
    in-flight ones stay), then 3 -> 12 while they run: the crawl completes and the
    accounting invariant holds."""
    site = build_site(tmp_path / "site", pages=120, functions=2)
    # Three pages fail once (503): they wait in delayed sets for their retry.
    once = {Site.url_path(i): "503" for i in (3, 50, 97)}
    throttle = Throttle(delay=0.08, once=once)
    crawl = "reshard"
    with (
        serve(site.root, throttle) as http,
        Harness(
            redis_url,
            crawl,
            tmp_path / "work",
            robots=False,
            lease=5,
            backoff_base=2,
            backoff_max=4,
        ) as h,
    ):
        h.produce(http.url, slots=8)
        consumers = [h.start_consumer(), h.start_consumer()]
        wait_for(  # a retry still waiting in a delayed set (backoff >= 2 s), and progress
            lambda: (
                h.stats().get("retries", 0) >= 1
                and h.pages_done() >= 15
                and bool(queued_and_delayed(h.redis, h.keys, 8)[1])
            ),
            60,
            "a retry and some progress",
            diagnose=h.logs,
        )
        for proc in consumers:
            proc.pause()
        time.sleep(0.3)
        queued, delayed = queued_and_delayed(h.redis, h.keys, 8)
        inflight = {s: set(h.redis.zrange(h.keys.inflight(s), 0, -1)) for s in range(8)}
        assert queued and delayed
        result = h.cli("reshard", "--slots", "3")
        assert result.code == 0, result.stderr
        assert f"moved {len(queued)} queued and {len(delayed)} delayed" in result.stderr
        after_q, after_d = queued_and_delayed(h.redis, h.keys, 8)
        assert after_q == {t: slot_for(t, 3) for t in queued}
        assert after_d == {t: (slot_for(t, 3), score) for t, (_, score) in delayed.items()}
        assert {s: set(h.redis.zrange(h.keys.inflight(s), 0, -1)) for s in range(8)} == inflight
        meta = h.meta()
        assert (meta["slots"], meta["max_slots"]) == ("3", "8")
        status = json.loads(h.cli("status", "--json").stdout)
        assert [r["slot"] for r in status["per_slot"]][:3] == [0, 1, 2]
        for proc in consumers:
            proc.resume()

        wait_for(lambda: h.pages_done() >= 40, 60, "progress after the reshard")
        grown = h.cli("reshard", "--slots", "12")
        assert grown.code == 0, grown.stderr
        throttle.delay = 0
        h.wait_finished(60)
        assert h.wait_exited(consumers) == [0, 0], h.logs()
        assert (h.meta()["slots"], h.meta()["max_slots"]) == ("12", "12")
        for slot in range(12):
            assert not h.redis.llen(h.keys.queue(slot))
            assert not h.redis.zcard(h.keys.delayed(slot))
            assert not h.redis.zcard(h.keys.inflight(slot))
        assert h.stats()["retries"] >= 3
        check_accounting(h.redis, crawl, site.keys).assert_ok()
