"""The typed read-side models: one crawl's :class:`CrawlSummary`, one crawl in detail
(:class:`CrawlStatus`) and the fleet (:class:`FleetStatus`). ``frontier/status.py``
builds them from Redis; the crawl supervisor, ``invcrawl status``, the renderer and the
dashboard read their fields. Pure (no Redis): the renderer imports it.

``as_dict()`` is the JSON of ``invcrawl status --json`` and of the dashboard's API
(docs/redis-keys.md, README): its keys and their order are those of the fields.
``from_dict()`` reads such a dict back (unknown keys ignored, missing ones defaulted).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.items import GENERATORS, STATUSES
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.states import CrawlState, ProducerState


@dataclass(frozen=True)
class CrawlSummary:
    """One crawl's state, progress, items by status, rate and ETA, from its meta, stats
    and dead-letter count (cheap enough for every crawl of a fleet every second)."""

    crawl_id: str
    state: str = "unknown"  # a CrawlState, or "unknown" before the crawl's meta exists
    producer: str | None = None  # a ProducerState: the latest production run
    site: str | None = None
    project: str | None = None
    version: str | None = None
    weight: int = 1
    entries_total: int = 0
    pages_total: int = 0
    pages_done: int = 0
    pages_dead: int = 0
    items: int = 0
    items_by_status: dict[str, int] = field(default_factory=dict)
    # items of read pages by their page's generator (common/items.py, Generator); a
    # generator with no item is left out
    items_by_generator: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    rate_pages_s: float = 0.0
    eta_s: float | None = None
    counters: dict[str, int] = field(default_factory=dict)
    created_at: int = 0
    started_at: int | None = None
    finished_at: int | None = None
    error: str | None = None
    refresh_round: int = 0
    last_refresh_at: int | None = None
    next_refresh_at: int | None = None
    # the refresh schedule (frontier/refresh_schedule.py): its interval, adaptive or fixed
    refresh_interval_s: float | None = None
    refresh_adaptive: bool = False
    refresh_changed: bool | None = None
    items_removed: int = 0
    retain_items: str = "all"
    server_time: int = 0

    @classmethod
    def from_redis(
        cls, crawl_id: str, meta: Mapping[str, str], stats: Mapping[str, str], dead: int, now: int
    ) -> CrawlSummary:
        """The summary from the crawl's meta and stats hashes, its dead-letter count and
        the server's time (ms)."""
        m = CrawlMeta.decode(meta)
        counters = {name: int(value) for name, value in stats.items()}
        pages_total = m.tasks or m.pages
        pages_done = counters.get("pages_done", 0)
        by_status = {s.value: counters.get(f"status:{s}", 0) for s in STATUSES}
        by_generator = {g.value: n for g in GENERATORS if (n := counters.get(f"generator:{g}", 0))}
        started = m.started_at
        end = m.finished_at or now
        elapsed = max(0.0, (end - started) / 1000) if started else 0.0
        rate = pages_done / elapsed if elapsed > 0 else 0.0
        remaining = max(0, pages_total - pages_done - dead)
        return cls(
            crawl_id=crawl_id,
            state=m.state.value if m.state else "unknown",
            producer=m.producer.value if m.producer else None,
            site=m.site,
            project=m.project,
            version=m.version,
            weight=m.weight,
            entries_total=m.entries,
            pages_total=pages_total,
            pages_done=pages_done,
            pages_dead=dead,
            items=sum(by_status.values()),
            items_by_status=by_status,
            items_by_generator=by_generator,
            elapsed_s=round(elapsed, 1),
            rate_pages_s=round(rate, 2),
            eta_s=round(remaining / rate, 1) if rate > 0 and remaining else None,
            counters=counters,
            created_at=m.created_at,
            started_at=started or None,
            finished_at=m.finished_at or None,
            error=m.error or None,
            refresh_round=m.round,
            last_refresh_at=m.refresh_started_at or None,
            next_refresh_at=m.next_refresh_at or None,
            refresh_interval_s=m.refresh_interval or None,
            refresh_adaptive=m.refresh_adaptive,
            refresh_changed=m.refresh_changed,
            items_removed=counters.get("items_removed", 0),
            retain_items=m.retain_items,
            server_time=now,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrawlSummary:
        """A summary from its JSON (``as_dict()``); other keys are ignored."""
        return cls(**{f.name: data[f.name] for f in _SUMMARY_FIELDS if f.name in data})

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (``status --json``), keys in field order; its dicts are
        copies. (Not ``dataclasses.asdict``: its deep copy made a fleet of 500 crawls
        cost 4x as much to serve.)"""
        data = {name: getattr(self, name) for name in _SUMMARY_NAMES}
        data["items_by_status"] = dict(self.items_by_status)
        data["counters"] = dict(self.counters)
        return data

    @property
    def pages_settled(self) -> int:
        """Pages committed or dead-lettered."""
        return self.pages_done + self.pages_dead

    @property
    def is_open(self) -> bool:
        """Producing or running: pages may still move."""
        return self.state in (CrawlState.PRODUCING, CrawlState.RUNNING)

    @property
    def is_settled(self) -> bool:
        """Nothing more will happen to the crawl without an operator: finished, or its
        producer failed."""
        return self.state in (CrawlState.FINISHED, CrawlState.FAILED) or (
            self.producer == ProducerState.FAILED
        )

    @property
    def producer_failed(self) -> bool:
        return self.producer == ProducerState.FAILED


class FleetTotals:
    """Running totals over a fleet of crawl summaries, for the progress line of a
    many-site crawl: each crawl's share is replaced when its summary changes, so a line
    costs the same at 10 and at 10,000 crawls (summing every summary for each line took
    most of the supervisor's CPU at 10,000: issue 39). Rates are kept in thousandths of
    a page a second, so that replacing shares adds no float drift."""

    def __init__(self) -> None:
        self._shares: dict[str, tuple[int, int, int, int, int]] = {}
        self.pages_total = 0
        self.pages_settled = 0
        self.pages_dead = 0
        self.settled_crawls = 0  # finished or failed
        self._rate_milli = 0  # of the open crawls

    @property
    def crawls(self) -> int:
        return len(self._shares)

    @property
    def rate_pages_s(self) -> float:
        return self._rate_milli / 1000

    def update(self, crawl_id: str, summary: CrawlSummary) -> None:
        share = (
            summary.pages_total,
            summary.pages_settled,
            summary.pages_dead,
            int(summary.state in (CrawlState.FINISHED, CrawlState.FAILED)),
            round(summary.rate_pages_s * 1000) if summary.is_open else 0,
        )
        old = self._shares.get(crawl_id, (0, 0, 0, 0, 0))
        self._shares[crawl_id] = share
        self.pages_total += share[0] - old[0]
        self.pages_settled += share[1] - old[1]
        self.pages_dead += share[2] - old[2]
        self.settled_crawls += share[3] - old[3]
        self._rate_milli += share[4] - old[4]


_SUMMARY_FIELDS = dataclasses.fields(CrawlSummary)
_SUMMARY_NAMES = tuple(f.name for f in _SUMMARY_FIELDS)


@dataclass(frozen=True)
class CrawlStatus:
    """Everything ``status --crawl-id`` shows: the summary plus the crawl's Redis memory,
    per-slot queues and consumers."""

    summary: CrawlSummary
    redis_memory: dict[str, int] = field(default_factory=dict)
    pages_open: int = 0
    stream_entries: int = 0
    items_trimmed: int = 0
    slots: int = 0
    # {slot, queued, inflight, delayed, dead, owner} per slot
    per_slot: list[dict[str, Any]] = field(default_factory=list)
    consumers_alive: list[str] = field(default_factory=list)  # their ids
    # {id, host, pid, slots, held, last_beat, alive} per consumer
    consumers: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrawlStatus:
        """A crawl's status from its JSON (``as_dict()``)."""
        own = {f.name: data[f.name] for f in _STATUS_FIELDS if f.name in data}
        return cls(summary=CrawlSummary.from_dict(data), **own)

    def as_dict(self) -> dict[str, Any]:
        """``status --crawl-id ID --json``: the summary's keys, then the detail's."""
        detail = {f.name: copy.deepcopy(getattr(self, f.name)) for f in _STATUS_FIELDS}
        return {**self.summary.as_dict(), **detail}


_STATUS_FIELDS = [f for f in dataclasses.fields(CrawlStatus) if f.name != "summary"]


@dataclass(frozen=True)
class FleetStatus:
    """Every crawl (open ones first, then by id) with its live consumer count, the hosts
    shown, the consumers seen lately and the latest dead letters of the fleet."""

    crawls: list[CrawlSummary]
    consumers_alive: dict[str, int] = field(default_factory=dict)  # per crawl id
    hosts: list[dict[str, Any]] = field(default_factory=list)
    consumers: list[dict[str, Any]] = field(default_factory=list)
    dead_letters: list[dict[str, Any]] = field(default_factory=list)
    server_time: int = 0
    # a page of the crawls (frontier/status.fleet_status): every crawl's count, the open
    # ones' (as the registry lists them), where the page starts, and whether open crawls
    # are off the page (None, 0, False: every crawl is shown)
    crawls_total: int | None = None
    crawls_open: int | None = None
    offset: int = 0
    open_elsewhere: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FleetStatus:
        """A fleet from its JSON (``as_dict()``); the totals are computed again."""
        crawls = [CrawlSummary.from_dict(c) for c in data.get("crawls") or []]
        return cls(
            crawls=crawls,
            consumers_alive={
                c["crawl_id"]: int(c.get("consumers_alive") or 0) for c in data.get("crawls") or []
            },
            hosts=list(data.get("hosts") or []),
            consumers=list(data.get("consumers") or []),
            dead_letters=list(data.get("dead_letters") or []),
            server_time=int(data.get("server_time") or 0),
            crawls_total=(data.get("page") or {}).get("total"),
            crawls_open=(data.get("page") or {}).get("open"),
            offset=int((data.get("page") or {}).get("offset") or 0),
            open_elsewhere=bool((data.get("page") or {}).get("open_elsewhere")),
        )

    @property
    def is_settled(self) -> bool:
        return not self.open_elsewhere and all(c.is_settled for c in self.crawls)

    @property
    def is_page(self) -> bool:
        """Some crawls are not shown (a page of them)."""
        return self.crawls_total is not None and self.crawls_total > len(self.crawls)

    def page(self) -> dict[str, Any]:
        """Which crawls are shown: from ``offset``, ``shown`` of ``total`` (``open`` of
        them open, ``open_elsewhere``: some off this page; None: not counted)."""
        return {
            "offset": self.offset,
            "shown": len(self.crawls),
            "total": self.crawls_total,
            "open": self.crawls_open,
            "open_elsewhere": self.open_elsewhere,
        }

    def totals(self) -> dict[str, Any]:
        """The figures of the crawls shown (the crawl counts: of every crawl)."""
        settled = sum(1 for c in self.crawls if not c.is_open)
        open_ = len(self.crawls) - settled
        return {
            "crawls": len(self.crawls) if self.crawls_total is None else self.crawls_total,
            "open": open_ if self.crawls_open is None or not self.is_page else self.crawls_open,
            "pages_total": sum(c.pages_total for c in self.crawls),
            "pages_done": sum(c.pages_done for c in self.crawls),
            "pages_dead": sum(c.pages_dead for c in self.crawls),
            "items": sum(c.items for c in self.crawls),
            "rate_pages_s": round(sum(c.rate_pages_s for c in self.crawls if c.is_open), 2),
            "consumers_alive": sum(1 for c in self.consumers if c["alive"]),
        }

    def as_dict(self) -> dict[str, Any]:
        """``status --json`` of the fleet: each crawl's summary with its live consumer
        count, the hosts, consumers, dead letters and totals."""
        return {
            "crawls": [
                {**c.as_dict(), "consumers_alive": self.consumers_alive.get(c.crawl_id, 0)}
                for c in self.crawls
            ],
            "hosts": self.hosts,
            "consumers": self.consumers,
            "dead_letters": self.dead_letters,
            "totals": self.totals(),
            "page": self.page(),
            "server_time": self.server_time,
        }
