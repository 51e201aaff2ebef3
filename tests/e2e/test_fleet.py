"""Many sites on one frontier, with politeness as a property of the fleet.

Three generated sites on two loopback hosts (a large and a small one on 127.0.0.1, a
medium one on 127.0.0.2), produced by one command and crawled by three consumers with
``--host-concurrency 2 --host-delay 0.05``. The servers log every request's start and
end as they saw them: a host never had more than 2 requests in flight there (a request
starts after its permit is granted and ends before it is released). What the frontier
decided, and when, is read from the test's own Redis's AOF (``appendfsync always``: the
effects of every script, with the server time it read): permits on a host granted at
least 50 ms apart, and none while a 429 with ``Retry-After: 2`` blocked it, while the
other host's kept being granted; the small site finished before the large one. The
HTTP servers' clocks are not used for gaps: a loaded machine may delay a request
granted in time until just before the next one. A second run SIGKILLs a consumer that
holds host permits: nothing is lost and its permits stop counting within one lease.
"""

from __future__ import annotations

import itertools
import json
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from invcrawl.common.site import crawl_id_for
from invcrawl.frontier.keys import HostKeys
from invcrawl.localredis.server import RedisServer
from support.aof import hset_values
from support.crawl import Harness, Site, build_site, check_accounting, consumer_pid, wait_for
from support.httpserver import Request, StaticServer

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

LEASE = 2.0
DELAY = 0.05
LIMIT = 2
PAGE_MS = 60  # every page is served after this pause: requests overlap


class HostFaults:
    """Pages served after PAGE_MS; the Nth page request answers 429 with Retry-After."""

    def __init__(self, fail_at: int | None = None, retry_after: int = 2) -> None:
        self.fail_at = fail_at
        self.retry_after = retry_after
        self.pages = 0
        self.lock = threading.Lock()

    def __call__(self, path: str) -> str | None:
        if not path.endswith(".html"):
            return None
        with self.lock:
            self.pages += 1
            if self.pages == self.fail_at:
                return f"429:{self.retry_after}"
        return f"delay:{PAGE_MS}"


@dataclass
class Fleet:
    harness: Harness
    redis: RedisServer
    a: StaticServer
    b: StaticServer
    sites: dict[str, Site]  # name -> site
    urls: dict[str, str]  # name -> URL

    @property
    def ids(self) -> dict[str, str]:
        """name -> the crawl id invcrawl derives from the site's URL."""
        return {name: crawl_id_for(url) for name, url in self.urls.items()}


@pytest.fixture
def fleet(fresh_redis: RedisServer, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    fail_at = getattr(request, "param", None)
    sites = {
        "large": build_site(tmp_path / "a" / "large", pages=70, functions=2, extras=False),
        "small": build_site(tmp_path / "a" / "small", pages=4, functions=2, extras=False),
        "medium": build_site(tmp_path / "b" / "medium", pages=30, functions=2, extras=False),
    }
    a = StaticServer(tmp_path / "a", HostFaults(), host="127.0.0.1").start()
    b = StaticServer(tmp_path / "b", HostFaults(fail_at), host="127.0.0.2").start()
    urls = {"large": a.url + "large/", "small": a.url + "small/", "medium": b.url + "medium/"}
    harness = Harness(
        fresh_redis.url,
        "large",
        tmp_path / "work",
        lease=LEASE,
        concurrency=3,
        host_concurrency=LIMIT,
        host_delay=DELAY,
        backoff_base=0.2,
    )
    try:
        yield Fleet(harness, fresh_redis, a, b, sites, urls)
    finally:
        harness.close()
        a.stop()
        b.stop()


def produce_all(f: Fleet) -> None:
    """One command, three sites: three crawls, each with its own id."""
    result = f.harness.cli("produce", *f.urls.values(), crawl_id=False)
    assert result.code == 0, result.stderr
    for crawl in f.ids.values():
        assert f"crawl {crawl}: " in result.stderr, result.stderr


def max_in_flight(log: list[Request]) -> int:
    events = sorted([(r.start, 1) for r in log] + [(r.end, -1) for r in log])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def grants(f: Fleet, server: StaticServer) -> list[int]:
    """When the frontier granted each permit on the host (server ms), from the AOF."""
    return hset_values(f.redis.data_dir, HostKeys(server.url.rstrip("/")).state, "last_at")


def blocks(f: Fleet, server: StaticServer) -> list[int]:
    """Until when each block of the host ran (server ms), from the AOF."""
    return hset_values(f.redis.data_dir, HostKeys(server.url.rstrip("/")).state, "blocked_until")


def finished_at(f: Fleet, crawl: str) -> int:
    return int(f.harness.redis.hget(f"invcrawl:{{{crawl}}}:meta", "finished_at") or 0)


def run_consumers(f: Fleet, n: int = 3) -> list[Any]:
    return [f.harness.start_consumer("--burst", crawl_id=False) for _ in range(n)]


def wait_all_exited(procs: list[Any], timeout: float = 120) -> None:
    wait_for(lambda: all(not p.alive for p in procs), timeout, "the consumers to exit")


@pytest.mark.parametrize("fleet", [6], indirect=True)  # host B answers its 6th page with 429
def test_three_sites_two_hosts_three_consumers_polite_and_fair(fleet: Fleet) -> None:
    f = fleet
    produce_all(f)
    ids = f.ids
    procs = run_consumers(f)
    wait_all_exited(procs)
    assert all(p.returncode == 0 for p in procs), f.harness.logs()

    for name, crawl in ids.items():
        check_accounting(f.harness.redis, crawl, f.sites[name].keys).assert_ok()
        assert f.harness.redis.hget(f"invcrawl:{{{crawl}}}:meta", "state") == "finished"

    for server in (f.a, f.b):
        assert max_in_flight(server.log) <= LIMIT, f"{server.url}: more than {LIMIT} in flight"
        granted = grants(f, server)
        # every request the server saw went through the fleet's gate ...
        pages = [r for r in server.log if r.path != "/robots.txt"]
        assert len(granted) >= len(pages) > 0, (len(granted), len(pages))
        # ... and the gate spaced the grants by the delay, by Redis's clock
        gaps = [b - a for a, b in itertools.pairwise(granted)]
        assert min(gaps) >= DELAY * 1000, f"{server.url}: permits {min(gaps)} ms apart"

    # The 429 blocked host B for every consumer, for its Retry-After, and not host A.
    assert len([r for r in f.b.log if r.status == 429]) == 1
    (until,) = blocks(f, f.b)
    since = until - 2000  # host_block.lua: blocked_until = now + Retry-After
    assert [t for t in grants(f, f.b) if since <= t < until] == [], "B granted while blocked"
    assert any(since <= t < until for t in grants(f, f.a)), "host A kept being served"
    assert any(t >= until for t in grants(f, f.b)), "host B resumed"

    # Produced together, the small site is not starved by the large one.
    assert finished_at(f, ids["small"]) < finished_at(f, ids["large"])

    # status: one line per crawl and per host, in 80 columns; the same data in JSON
    text = f.harness.cli("status", crawl_id=False).stdout
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert all(crawl in text for crawl in ids.values()), text
    data = json.loads(f.harness.cli("status", "--json", crawl_id=False).stdout)
    assert {c["crawl_id"] for c in data["crawls"]} == set(ids.values())
    hosts = {h["host"]: h for h in data["hosts"]}
    assert set(hosts) == {f.a.url.rstrip("/"), f.b.url.rstrip("/")}
    assert all(h["limit"] == LIMIT and h["blocks"] >= 0 for h in hosts.values())
    assert hosts[f.b.url.rstrip("/")]["blocks"] == 1
    # robots.txt: fetched once per host for the whole fleet, not once per consumer
    for server in (f.a, f.b):
        assert [r.path for r in server.log].count("/robots.txt") == 1


def test_a_consumer_killed_holding_permits_leaks_nothing_past_a_lease(fleet: Fleet) -> None:
    f = fleet
    produce_all(f)
    ids = f.ids
    procs = run_consumers(f)
    host = HostKeys(f.a.url.rstrip("/"))
    redis = f.harness.redis

    def holder() -> tuple[Any, list[str]] | None:
        tokens = redis.zrange(host.permits, 0, -1)
        for proc in procs:
            mine = [t for t in tokens if consumer_pid(t.rsplit(":", 1)[0]) == proc.pid]
            if mine:
                return proc, mine
        return None

    victim, tokens = wait_for(holder, 60, "a consumer holding host permits")
    victim.signal(signal.SIGKILL)
    killed_at = time.monotonic()
    survivors = [p for p in procs if p is not victim]
    # its permits stop counting within one lease (expired, then dropped)
    time.sleep(max(0.0, LEASE + 0.3 - (time.monotonic() - killed_at)))
    seconds, micros = redis.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    live = [t for t in tokens if (redis.zscore(host.permits, t) or 0) >= now]
    assert live == [], "a dead consumer's permits still count after one lease"
    wait_all_exited(survivors)
    for name, crawl in ids.items():
        check_accounting(redis, crawl, f.sites[name].keys).assert_ok()
    assert max_in_flight(f.a.log) <= LIMIT and max_in_flight(f.b.log) <= LIMIT
    for server in (f.a, f.b):
        gaps = [b - a for a, b in itertools.pairwise(grants(f, server))]
        assert min(gaps) >= DELAY * 1000
