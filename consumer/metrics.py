"""Prometheus metrics of one consumer process (``invcrawl consume --metrics-port PORT``),
in the text exposition format at ``http://BIND:PORT/metrics``, with the official
``prometheus_client``.

:class:`Metrics` is the interface the delivery loop calls where it claims and settles
things (one object, handed to the :class:`~invcrawl.consumer.worker.Worker`; the spider measures
fetch and extraction and the settle step, ``consumer/settling.py``, records them): it
does nothing, so that a consumer without
``--metrics-port`` pays one method call per event. :class:`PrometheusMetrics` counts:

========================================  ========  ===========================================
metric                                    labels    what
========================================  ========  ===========================================
``invcrawl_claims_total``                 crawl     tasks claimed
``invcrawl_pages_total``                  crawl,    claims settled, by outcome: a committed
                                          outcome   page's (fetched, unchanged, not_found,
                                                    skipped, offsite), or retry, dead,
                                                    postponed, fenced, lease_lost, abandoned,
                                                    released, forgotten
``invcrawl_items_total``                  crawl,    items of committed pages, by item status
                                          status
``invcrawl_item_changes_total``           crawl,    the same items by what the commit did:
                                          change    new, updated, unchanged (dedup)
``invcrawl_leases_lost_total``            crawl     leases found lost by the heartbeat
``invcrawl_fenced_commits_total``         crawl     commits refused by the fencing token
``invcrawl_redis_errors_total``                     transient Redis errors met (and retried)
``invcrawl_fetch_seconds``                          download time of a page (Scrapy's
                                                    ``download_latency``)
``invcrawl_extract_seconds``                        extraction time of a fetched page
``invcrawl_commit_seconds``                         the commit of a page (its Lua call, with
                                                    the retries of an outage)
``invcrawl_pages_in_flight``              host      pages to fetch claimed and not settled,
                                                    per host (``scheme://host:port``; ``local``
                                                    for a directory); no series for a host with
                                                    nothing in flight
========================================  ========  ===========================================

Label values are bounded in size and number, whatever a site names: each is cut to
``LABEL_CHARS`` characters (``common/bounds``); ``invcrawl_pages_in_flight`` has a
series only for hosts of pages this consumer will fetch (an ``offsite`` or ``skipped``
task is never fetched: 20,001 offsite hosts in one inventory made 20,001 series) and
drops it when nothing is in flight there, and beyond ``HOST_SERIES`` hosts at once the
others are counted together under ``host="other"``.

plus the process's CPU, memory and file descriptors (``process_*``) and the Python
collector's (``python_*``). The histograms are per process, not per crawl: their
buckets times every crawl of a fleet would be too many series.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from invcrawl.common.bounds import METRIC_LABEL_CHARS, clip
from invcrawl.consumer import metrics_server
from invcrawl.consumer.pages import Ending
from invcrawl.frontier.hosts import origin_of
from invcrawl.frontier.values import CommitResult

LOCAL = "local"  # the host label of pages that have none (file:// pages)
OTHER = "other"  # the host label of hosts past HOST_SERIES
LABEL_CHARS = METRIC_LABEL_CHARS
HOST_SERIES = 100  # hosts with a series of their own at once (a consumer holds ~32 pages)
# Seconds: a loopback page downloads in ~1 ms and extracts in ~10 ms; a slow site's
# page takes seconds; the download timeout is 30 s by default.
FETCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
EXTRACT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30)


class MetricsError(Exception):
    """The metrics endpoint could not listen (one line for the user)."""


def host_of(url: str) -> str:
    """The ``host`` label of a page URL."""
    return clip(origin_of(url) or LOCAL, LABEL_CHARS)


class Metrics:
    """What the delivery loop reports; this base records nothing."""

    def claimed(self, crawl: str, url: str, fetched: bool = True) -> None:
        """A task of ``crawl`` for page ``url`` was claimed (``fetched``: a page to
        download, not an ``offsite`` or ``skipped`` one)."""

    def page_settled(self, crawl: str, url: str, outcome: str, fetched: bool = True) -> None:
        """A claim held by this consumer was settled (each claim exactly once, with the
        ``fetched`` of its claim)."""

    def items_committed(
        self, crawl: str, items: Sequence[Mapping[str, Any]], result: CommitResult
    ) -> None:
        """A page's ``items`` were committed (``result``: how many were new, updated or
        unchanged)."""

    def fenced(self, crawl: str) -> None:
        """A commit was refused: another delivery owns the task."""

    def redis_error(self) -> None:
        """A transient Redis error (retried with backoff)."""

    def fetched(self, seconds: float) -> None: ...

    def extracted(self, seconds: float) -> None: ...

    def committed(self, seconds: float) -> None: ...


class PrometheusMetrics(Metrics):
    """:class:`Metrics` in a registry of its own, served by :meth:`serve`."""

    def __init__(self) -> None:
        # No `*_created` series beside each counter: Prometheus ignores them in the text
        # format, and they would double what a scrape carries.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        self.claims = Counter("invcrawl_claims", "Tasks claimed", ["crawl"], registry=registry)
        self.pages = Counter(
            "invcrawl_pages",
            "Claims settled, by outcome (a committed page's outcome, or what else ended it)",
            ["crawl", "outcome"],
            registry=registry,
        )
        self.items = Counter(
            "invcrawl_items",
            "Items of committed pages, by item status",
            ["crawl", "status"],
            registry=registry,
        )
        self.changes = Counter(
            "invcrawl_item_changes",
            "Items of committed pages, by what the commit did (new, updated, unchanged)",
            ["crawl", "change"],
            registry=registry,
        )
        self.leases_lost = Counter(
            "invcrawl_leases_lost", "Leases the heartbeat found lost", ["crawl"], registry=registry
        )
        self.fenced_commits = Counter(
            "invcrawl_fenced_commits",
            "Commits refused by the fencing token",
            ["crawl"],
            registry=registry,
        )
        self.redis_errors = Counter(
            "invcrawl_redis_errors", "Transient Redis errors, retried", registry=registry
        )
        self.fetch = Histogram(
            "invcrawl_fetch_seconds",
            "Download time of a page",
            buckets=FETCH_BUCKETS,
            registry=registry,
        )
        self.extract = Histogram(
            "invcrawl_extract_seconds",
            "Extraction time of a fetched page",
            buckets=EXTRACT_BUCKETS,
            registry=registry,
        )
        self.commit = Histogram(
            "invcrawl_commit_seconds",
            "Commit of a page's items and acknowledgement",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "invcrawl_pages_in_flight",
            "Pages to fetch claimed and not yet settled, per host",
            ["host"],
            registry=registry,
        )
        self._held: dict[str, int] = {}  # series label -> pages in flight (no zeros)
        self._in_other: dict[str, int] = {}  # host counted under OTHER -> its pages

    def serve(self, bind: str, port: int, token: str | None = None) -> tuple[str, int]:
        """Serve ``/metrics`` from a thread of this process, asking for ``token`` if any
        (consumer/metrics_server.py); returns (address, port)."""
        try:
            server = metrics_server.serve(self.registry, bind, port, token)
        except OSError as exc:
            raise MetricsError(
                f"cannot serve metrics on {bind}:{port}: {exc.strerror or exc}"
            ) from None
        return str(server.server_address[0]), int(server.server_address[1])

    def claimed(self, crawl: str, url: str, fetched: bool = True) -> None:
        self.claims.labels(_label(crawl)).inc()
        if fetched:
            host = host_of(url)
            if host not in self._held and (
                host in self._in_other or len(self._held) >= HOST_SERIES
            ):
                self._in_other[host] = self._in_other.get(host, 0) + 1
                host = OTHER
            self._count(host, +1)

    def page_settled(self, crawl: str, url: str, outcome: str, fetched: bool = True) -> None:
        self.pages.labels(_label(crawl), outcome).inc()
        if fetched:
            host = host_of(url)
            if host in self._in_other:
                self._in_other[host] -= 1
                if not self._in_other[host]:
                    del self._in_other[host]
                host = OTHER
            self._count(host, -1)
        if outcome == Ending.LEASE_LOST:
            self.leases_lost.labels(_label(crawl)).inc()

    def _count(self, label: str, delta: int) -> None:
        """Pages in flight under ``label``; its series dropped at zero."""
        held = self._held.get(label, 0) + delta
        if held > 0:
            self._held[label] = held
            self.in_flight.labels(label).set(held)
        elif label in self._held:
            del self._held[label]
            self.in_flight.remove(label)

    def items_committed(
        self, crawl: str, items: Sequence[Mapping[str, Any]], result: CommitResult
    ) -> None:
        for status, n in Tally(str(item.get("status")) for item in items).items():
            self.items.labels(_label(crawl), _label(status)).inc(n)
        for change, n in (
            ("new", result.new),
            ("updated", result.updated),
            ("unchanged", result.unchanged),
        ):
            if n:
                self.changes.labels(_label(crawl), change).inc(n)

    def fenced(self, crawl: str) -> None:
        self.fenced_commits.labels(_label(crawl)).inc()

    def redis_error(self) -> None:
        self.redis_errors.inc()

    def fetched(self, seconds: float) -> None:
        self.fetch.observe(seconds)

    def extracted(self, seconds: float) -> None:
        self.extract.observe(seconds)

    def committed(self, seconds: float) -> None:
        self.commit.observe(seconds)


def _label(value: str) -> str:
    """A label value, bounded (crawl ids and statuses are short: this keeps them so)."""
    return clip(value, LABEL_CHARS)
