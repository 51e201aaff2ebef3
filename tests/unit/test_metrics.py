"""Prometheus exposition, without a Prometheus: the consumer's counters as the Worker's
settle points feed them (each claim settled once, in-flight gauges back to zero), and
the dashboard's fleet gauges from a snapshot (its page data, which keeps the refresh
schedule). tests/e2e/test_prometheus.py scrapes both with a real Prometheus."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from invcrawl.common.tasks import Task
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.metrics import (
    HOST_SERIES,
    LABEL_CHARS,
    LOCAL,
    OTHER,
    PrometheusMetrics,
    host_of,
)
from invcrawl.dashboard.metrics import HOST_SERIES as DASHBOARD_HOSTS
from invcrawl.dashboard.metrics import exposition
from invcrawl.dashboard.snapshot import Throughput, page_data
from invcrawl.frontier.summary import FleetStatus
from invcrawl.frontier.values import Claim, CommitResult


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_consumer_counters_and_in_flight_gauge() -> None:
    m = PrometheusMetrics()
    page = "https://docs.test/a.html"
    m.claimed("c", page)
    m.claimed("c", page)
    m.claimed("c", "file:///docs/b.html")
    m.page_settled("c", page, "fetched")
    m.page_settled("c", page, "lease_lost")
    m.items_committed(
        "c", [{"status": "ok"}, {"status": "ok"}, {"status": "skipped"}], CommitResult(True, 2, 1)
    )
    m.fenced("c")
    m.redis_error()
    m.fetched(0.02)
    m.extracted(0.003)
    m.committed(0.001)
    got = samples(generate_latest(m.registry))
    assert got[("invcrawl_claims_total", (("crawl", "c"),))] == 3
    assert got[("invcrawl_pages_total", (("crawl", "c"), ("outcome", "fetched")))] == 1
    assert got[("invcrawl_leases_lost_total", (("crawl", "c"),))] == 1
    assert got[("invcrawl_items_total", (("crawl", "c"), ("status", "ok")))] == 2
    assert got[("invcrawl_item_changes_total", (("change", "new"), ("crawl", "c")))] == 2
    assert got[("invcrawl_fenced_commits_total", (("crawl", "c"),))] == 1
    assert got[("invcrawl_redis_errors_total", ())] == 1
    # nothing in flight there any more: no series (issue 36), rather than a 0 kept forever
    assert ("invcrawl_pages_in_flight", (("host", "https://docs.test:443"),)) not in got
    assert got[("invcrawl_pages_in_flight", (("host", LOCAL),))] == 1
    assert got[("invcrawl_fetch_seconds_count", ())] == 1
    assert ("invcrawl_claims_created", (("crawl", "c"),)) not in got  # no *_created noise
    assert any(name == "process_cpu_seconds_total" for name, _ in got)
    assert host_of("http://h.test/x") == "http://h.test:80"


def in_flight(m: PrometheusMetrics) -> dict[str, float]:
    got = samples(generate_latest(m.registry))
    return {
        dict(labels)["host"]: v
        for (name, labels), v in got.items()
        if name == "invcrawl_pages_in_flight"
    }


def test_in_flight_series_bounded_whatever_hosts_an_inventory_names() -> None:
    """20,001 offsite hosts in an inventory made 20,001 series (2.2 MB of /metrics) that
    never went away: pages never fetched get none, a host with nothing in flight loses
    its series, and past HOST_SERIES hosts at once the rest share host="other"."""
    m = PrometheusMetrics()
    offsite = [f"https://h{i}.offsite.test/p.html" for i in range(20_001)]
    for url in offsite:
        m.claimed("c", url, fetched=False)
    assert in_flight(m) == {}
    assert len(generate_latest(m.registry)) < 20_000
    fetched = [f"https://h{i}{'x' * 300}.test/p.html" for i in range(20_001)]
    for url in fetched:
        m.claimed("c", url)
    held = in_flight(m)
    assert len(held) == HOST_SERIES + 1 and held[OTHER] == 20_001 - HOST_SERIES
    assert all(len(host) <= LABEL_CHARS for host in held)
    assert sum(held.values()) == 20_001
    for url in fetched[: HOST_SERIES // 2]:
        m.page_settled("c", url, "fetched")
    for url in offsite:
        m.page_settled("c", url, "offsite", fetched=False)
    m.claimed("c", "https://late.test/p.html")  # room again: a series of its own
    assert in_flight(m)["https://late.test:443"] == 1
    for url in [*fetched[HOST_SERIES // 2 :], "https://late.test/p.html"]:
        m.page_settled("c", url, "fetched")
    assert in_flight(m) == {}
    got = samples(generate_latest(m.registry))
    assert got[("invcrawl_pages_total", (("crawl", "c"), ("outcome", "offsite")))] == 20_001
    assert len(generate_latest(m.registry)) < 20_000


def test_the_consumer_counts_in_flight_only_pages_it_fetches() -> None:
    """The holdings tell the metrics which claims are pages to download: an offsite
    task's host (a claimed task names it, nothing requests it) gets no series."""
    m = PrometheusMetrics()
    holdings = Holdings(m, lambda name, n: None, lambda claim: None)

    def claim(task_id: str, url: str, status: str) -> Claim:
        return Claim("c", Task(task_id, url, (), status=status), "tok", 1, 0, False)

    claims = [claim(f"o{i}", f"https://h{i}.offsite.test/x.html", "offsite") for i in range(50)]
    claims.append(claim("f", "https://docs.test/a.html", "fetch"))
    holdings.add(claims)
    assert in_flight(m) == {"https://docs.test:443": 1}
    for c in claims:
        holdings.settled(c, "offsite" if c.task.status == "offsite" else "fetched")
    assert in_flight(m) == {}


def test_fleet_gauges_from_the_dashboard_snapshot() -> None:
    crawl = {
        "crawl_id": "c",
        "state": "running",
        "project": "P",
        "version": "1",
        "pages_total": 10,
        "pages_done": 6,
        "pages_dead": 1,
        "items": 20,
        "items_by_status": {"ok": 19, "failed": 1},
        "rate_pages_s": 2.5,
        "consumers_alive": 2,
        "refresh_interval_s": 3600.0,
        "refresh_adaptive": True,
        "next_refresh_at": 1_700_000_000_000,
        "counters": {"claims": 7},
    }
    fleet = {
        "crawls": [
            crawl,
            {**crawl, "crawl_id": "d", "state": "finished", "refresh_interval_s": None},
        ],
        "hosts": [
            {"host": "https://a.test:443", "in_flight": 3, "limit": 4, "blocked_until": 2_000},
            {"host": "https://b.test:443", "in_flight": 0, "limit": 4, "blocked_until": None},
        ],
        "consumers": [{"alive": True}, {"alive": True}, {"alive": False}],
        "server_time": 1_000,
    }
    data = page_data(FleetStatus.from_dict(fleet), "redis://h:6379/0", Throughput())
    assert data["crawls"][0]["refresh_interval_s"] == 3600.0  # the page shows it too
    got = samples(exposition(lambda: data))
    assert got[("invcrawl_fleet_up", ())] == 1
    assert got[("invcrawl_crawl_queue_depth", (("crawl", "c"),))] == 3
    assert got[("invcrawl_crawl_items", (("crawl", "c"), ("status", "ok")))] == 19
    info = (("crawl", "c"), ("project", "P"), ("state", "running"), ("version", "1"))
    assert got[("invcrawl_crawl_info", info)] == 1
    assert got[("invcrawl_crawl_rate_pages_per_second", (("crawl", "d"),))] == 0  # not open
    assert got[("invcrawl_crawl_refresh_interval_seconds", (("crawl", "c"),))] == 3600
    assert ("invcrawl_crawl_refresh_interval_seconds", (("crawl", "d"),)) not in got
    assert got[("invcrawl_crawl_next_refresh_timestamp_seconds", (("crawl", "c"),))] == 1.7e9
    assert got[("invcrawl_crawls", (("state", "running"),))] == 1
    assert got[("invcrawl_host_blocked", (("host", "https://a.test:443"),))] == 1
    assert got[("invcrawl_hosts_blocked", ())] == 1
    assert got[("invcrawl_consumers_alive", ())] == 2
    assert got[("invcrawl_dead_letters", ())] == 2
    # before the first read, or when Redis cannot be read: up is 0 and nothing else
    assert samples(exposition(lambda: None)) == {("invcrawl_fleet_up", ()): 0}
    assert samples(exposition(lambda: {"error": "cannot read Redis"})) == {
        ("invcrawl_fleet_up", ()): 0
    }


def test_fleet_gauges_bounded_in_count_and_size() -> None:
    """A 5 MB project name made a 5 MB label; every host had a series: each label value
    is cut to its bound, the busiest HOST_SERIES hosts get a series, the rest one."""
    crawl = {"crawl_id": "c", "state": "running", "project": "P" * 5_000_000,
             "version": "1" * 5_000, "pages_total": 1, "pages_done": 0, "pages_dead": 0,
             "items_by_status": {"ok": 1}}  # fmt: skip
    hosts = [
        {"host": f"https://h{i}.test:443", "in_flight": i % 3, "limit": 4,
         "blocked_until": 2_000 if i % 2 else None}
        for i in range(20_001)
    ]  # fmt: skip
    text = exposition(lambda: {"crawls": [crawl], "hosts": hosts, "server_time": 1_000})
    assert len(text) < 100_000
    got = samples(text)
    gauge = "invcrawl_host_in_flight"
    per_host = {dict(labels)["host"]: v for (name, labels), v in got.items() if name == gauge}
    assert len(per_host) == DASHBOARD_HOSTS + 1
    assert sum(per_host.values()) == sum(h["in_flight"] for h in hosts)
    assert min(v for h, v in per_host.items() if h != "other") == 2  # the busiest have series
    assert got[("invcrawl_hosts_blocked", ())] == 10_000
    (info,) = [labels for name, labels in got if name == "invcrawl_crawl_info"]
    assert all(len(value) <= LABEL_CHARS for _, value in info)
