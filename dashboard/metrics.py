"""The fleet's gauges for Prometheus, at the dashboard's ``GET /metrics`` (text exposition
format, ``prometheus_client``).

They are read from the dashboard's latest snapshot, the fleet view of ``invcrawl status
--json`` (``frontier/status.fleet_status``, the one code path) that the sampler reads
once a second whoever looks: a scrape sends nothing to Redis. Per crawl they say where it
stands; the counters of what each consumer did are the consumers' own endpoints
(``consume --metrics-port``, ``consumer/metrics.py``).

=================================================  ===============  ========================
gauge                                              labels           value
=================================================  ===============  ========================
``invcrawl_fleet_up``                                               1 if the last read of
                                                                    Redis worked, else 0
``invcrawl_crawl_info``                            crawl, state,    1 per crawl
                                                   project, version
``invcrawl_crawl_pages``                           crawl            page tasks of the crawl
``invcrawl_crawl_pages_done``                      crawl            pages committed
``invcrawl_crawl_queue_depth``                     crawl            pages not settled yet
                                                                    (queued, delayed or in
                                                                    flight)
``invcrawl_crawl_dead_letters``                    crawl            dead-lettered pages
``invcrawl_crawl_items``                           crawl, status    items by status
``invcrawl_crawl_rate_pages_per_second``           crawl            pages/s of an open crawl
``invcrawl_crawl_consumers``                       crawl            live consumers serving it
``invcrawl_crawl_refresh_interval_seconds``        crawl            its refresh interval
``invcrawl_crawl_next_refresh_timestamp_seconds``  crawl            when its next round is due
``invcrawl_crawls``                                state            crawls per state
``invcrawl_host_in_flight``                        host             requests in flight
``invcrawl_host_limit``                            host             its concurrency limit
``invcrawl_host_blocked``                          host             1 while a 429/503 blocks it
``invcrawl_hosts_blocked``                                          hosts blocked now
``invcrawl_consumers_alive``                                        live consumers
``invcrawl_dead_letters``                                           dead letters of the fleet
=================================================  ===============  ========================

Label values are bounded: each is cut to ``common/bounds.METRIC_LABEL_CHARS``
characters (projects and versions come from sites), and the host gauges have a series
for the :data:`HOST_SERIES` busiest hosts at most, the others summed under
``host="other"`` (the hosts are those the fleet fetched from in the last minute, so a
site cannot add any by naming them). One series per crawl: crawls are the operator's
(``invcrawl forget`` removes one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from invcrawl.common.bounds import METRIC_LABEL_CHARS, clip

Snapshot = Callable[[], Mapping[str, Any] | None]  # the latest fleet view (None: none yet)

__all__ = ["CONTENT_TYPE_LATEST", "FleetCollector", "exposition"]
HOST_SERIES = 100  # hosts with series of their own
OTHER = "other"  # the host label of the others


def _label(value: Any) -> str:
    return clip(str(value), METRIC_LABEL_CHARS)


class FleetCollector(Collector):
    """Gauges from the latest fleet view, computed when Prometheus scrapes."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        fleet = self.snapshot()
        up = GaugeMetricFamily(
            "invcrawl_fleet_up", "1 if the dashboard's last read of Redis worked, else 0"
        )
        up.add_metric([], 0.0 if not fleet or fleet.get("error") else 1.0)
        yield up
        if not fleet or fleet.get("error"):
            return
        yield from crawl_gauges(fleet.get("crawls") or [])
        yield from host_gauges(fleet.get("hosts") or [], int(fleet.get("server_time") or 0))
        consumers = GaugeMetricFamily("invcrawl_consumers_alive", "Live consumer processes")
        consumers.add_metric([], sum(1 for c in fleet.get("consumers") or [] if c.get("alive")))
        yield consumers
        dead = GaugeMetricFamily("invcrawl_dead_letters", "Dead-lettered pages of the fleet")
        dead.add_metric([], sum(c.get("pages_dead", 0) for c in fleet.get("crawls") or []))
        yield dead


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=labels)


def crawl_gauges(crawls: list[Mapping[str, Any]]) -> Iterator[Metric]:
    info = _gauge("invcrawl_crawl_info", "One per crawl", ["crawl", "state", "project", "version"])
    pages = _gauge("invcrawl_crawl_pages", "Page tasks of the crawl", ["crawl"])
    done = _gauge("invcrawl_crawl_pages_done", "Pages committed", ["crawl"])
    depth = _gauge(
        "invcrawl_crawl_queue_depth",
        "Pages not settled yet (queued, delayed or in flight)",
        ["crawl"],
    )
    dead = _gauge("invcrawl_crawl_dead_letters", "Dead-lettered pages", ["crawl"])
    items = _gauge("invcrawl_crawl_items", "Items by status", ["crawl", "status"])
    rate = _gauge(
        "invcrawl_crawl_rate_pages_per_second", "Pages per second of an open crawl", ["crawl"]
    )
    consumers = _gauge("invcrawl_crawl_consumers", "Live consumers serving the crawl", ["crawl"])
    interval = _gauge(
        "invcrawl_crawl_refresh_interval_seconds", "The crawl's refresh interval", ["crawl"]
    )
    next_at = _gauge(
        "invcrawl_crawl_next_refresh_timestamp_seconds",
        "When the crawl's next refresh round is due (Unix time)",
        ["crawl"],
    )
    states: Counter[str] = Counter()
    for c in crawls:
        crawl, state = _label(c["crawl_id"]), _label(c.get("state") or "unknown")
        states[state] += 1
        info.add_metric(
            [crawl, state, _label(c.get("project") or ""), _label(c.get("version") or "")], 1
        )
        total, finished, dead_pages = c["pages_total"], c["pages_done"], c["pages_dead"]
        pages.add_metric([crawl], total)
        done.add_metric([crawl], finished)
        depth.add_metric([crawl], max(0, total - finished - dead_pages))
        dead.add_metric([crawl], dead_pages)
        for status, n in (c.get("items_by_status") or {}).items():
            items.add_metric([crawl, _label(status)], n)
        open_ = state in ("producing", "running")
        rate.add_metric([crawl], c.get("rate_pages_s", 0.0) if open_ else 0.0)
        consumers.add_metric([crawl], c.get("consumers_alive") or 0)
        if c.get("refresh_interval_s"):
            interval.add_metric([crawl], c["refresh_interval_s"])
        if c.get("next_refresh_at"):
            next_at.add_metric([crawl], c["next_refresh_at"] / 1000)
    per_state = _gauge("invcrawl_crawls", "Crawls per state", ["state"])
    for state, n in sorted(states.items()):
        per_state.add_metric([state], n)
    yield from (info, pages, done, depth, dead, items, rate, consumers, interval, next_at)
    yield per_state


def host_gauges(hosts: list[Mapping[str, Any]], now_ms: int) -> Iterator[Metric]:
    in_flight = _gauge("invcrawl_host_in_flight", "Requests in flight on the host", ["host"])
    limit = _gauge("invcrawl_host_limit", "Requests the host may have in flight", ["host"])
    blocked = _gauge("invcrawl_host_blocked", "1 while a 429/503 blocks the host", ["host"])

    def is_blocked(h: Mapping[str, Any]) -> bool:
        return bool(h.get("blocked_until")) and h["blocked_until"] > now_ms

    ranked = sorted(hosts, key=lambda h: (-(h.get("in_flight") or 0), not is_blocked(h)))
    for h in ranked[:HOST_SERIES]:
        host = _label(h["host"])
        in_flight.add_metric([host], h.get("in_flight") or 0)
        if h.get("limit"):
            limit.add_metric([host], h["limit"])
        blocked.add_metric([host], int(is_blocked(h)))
    if rest := ranked[HOST_SERIES:]:
        in_flight.add_metric([OTHER], sum(h.get("in_flight") or 0 for h in rest))
        blocked.add_metric([OTHER], sum(is_blocked(h) for h in rest))
    total = GaugeMetricFamily("invcrawl_hosts_blocked", "Hosts blocked now by a 429/503")
    total.add_metric([], sum(is_blocked(h) for h in hosts))
    yield from (in_flight, limit, blocked, total)


def exposition(snapshot: Snapshot) -> bytes:
    """The text exposition of the fleet's gauges from ``snapshot``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(snapshot))
    return generate_latest(registry)
