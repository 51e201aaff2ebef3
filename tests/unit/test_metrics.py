"""Prometheus exposition, without a Prometheus: the consumer's counters as the Worker's
settle points feed them (each claim settled once, in-flight gauges back to zero), and
the dashboard's fleet gauges from a snapshot (its page data, which keeps the refresh
schedule). tests/e2e/test_prometheus.py scrapes both with a real Prometheus."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from consumer.metrics import LOCAL, PrometheusMetrics, host_of
from dashboard.metrics import exposition
from dashboard.snapshot import Throughput, page_data
from frontier.summary import FleetStatus
from frontier.values import CommitResult


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
    assert got[("invcrawl_pages_in_flight", (("host", "https://docs.test:443"),))] == 0
    assert got[("invcrawl_pages_in_flight", (("host", LOCAL),))] == 1
    assert got[("invcrawl_fetch_seconds_count", ())] == 1
    assert ("invcrawl_claims_created", (("crawl", "c"),)) not in got  # no *_created noise
    assert any(name == "process_cpu_seconds_total" for name, _ in got)
    assert host_of("http://h.test/x") == "http://h.test:80"


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
