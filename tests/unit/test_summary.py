"""The crawl summary model: built from a crawl's meta and stats, its JSON (``status
--json``, the dashboard's API) keeps the keys and order docs/redis-keys.md describes, and
reads back unchanged."""

from __future__ import annotations

import json

from invcrawl.frontier.summary import CrawlStatus, CrawlSummary, FleetStatus

KEYS = [
    "crawl_id",
    "state",
    "producer",
    "site",
    "project",
    "version",
    "weight",
    "entries_total",
    "pages_total",
    "pages_done",
    "pages_dead",
    "items",
    "items_by_status",
    "items_by_generator",
    "elapsed_s",
    "rate_pages_s",
    "eta_s",
    "counters",
    "created_at",
    "started_at",
    "finished_at",
    "error",
    "refresh_round",
    "last_refresh_at",
    "next_refresh_at",
    "refresh_interval_s",
    "refresh_adaptive",
    "refresh_changed",
    "items_removed",
    "retain_items",
    "server_time",
]


def summary() -> CrawlSummary:
    meta = {
        "state": "running",
        "producer": "done",
        "site": "https://docs.test/",
        "tasks": "100",
        "entries": "300",
        "started_at": "1000",
        "refresh_changed": "1",
        "refresh_interval": "60",
    }
    stats = {
        "pages_done": "40",
        "status:ok": "119",
        "status:anchor_missing": "1",
        "generator:sphinx": "100",
        "generator:pydoctor": "20",
    }
    return CrawlSummary.from_redis("c", meta, stats, dead=2, now=21_000)


def test_the_summary_from_redis_and_its_json() -> None:
    s = summary()
    assert list(s.as_dict()) == KEYS
    assert (s.pages_total, s.pages_done, s.pages_dead, s.items) == (100, 40, 2, 120)
    assert s.items_by_status["ok"] == 119 and s.elapsed_s == 20.0 and s.rate_pages_s == 2.0
    assert s.items_by_generator == {"sphinx": 100, "pydoctor": 20}  # none of mkdocstrings
    assert s.eta_s == 29.0 and s.refresh_changed is True and s.refresh_interval_s == 60.0
    assert s.is_open and not s.is_settled and s.pages_settled == 42
    text = json.dumps(s.as_dict())
    assert CrawlSummary.from_dict(json.loads(text)) == s
    assert CrawlSummary.from_redis("x", {}, {}, 0, 5).as_dict()["state"] == "unknown"


def test_a_crawl_status_and_the_fleet_read_back_from_their_json() -> None:
    s = summary()
    status = CrawlStatus(s, pages_open=58, slots=1, consumers_alive=["w1"])
    data = status.as_dict()
    assert list(data)[: len(KEYS)] == KEYS and data["consumers_alive"] == ["w1"]
    assert CrawlStatus.from_dict(json.loads(json.dumps(data))) == status
    fleet = FleetStatus([s], {"c": 1}, consumers=[{"alive": True}], server_time=21_000)
    data = fleet.as_dict()
    assert data["crawls"][0]["consumers_alive"] == 1
    assert data["totals"]["pages_done"] == 40 and data["totals"]["consumers_alive"] == 1
    assert FleetStatus.from_dict(json.loads(json.dumps(data))) == fleet
