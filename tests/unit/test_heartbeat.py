"""The consumer's heartbeat (consumer/heartbeat.py), in process: a beat renews the leases
of the claims held, abandons those past the hard task deadline (not renewed: they
expire and are reaped), settles a lease another consumer took as lost, reaps expired
leases and wakes the crawl; an outage stops the beat where it is met (said once), and a
crawl forgotten meanwhile is let go."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

from redis.exceptions import ConnectionError

from invcrawl.common.tasks import Task
from invcrawl.consumer.heartbeat import Heartbeat
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.metrics import Metrics
from invcrawl.frontier.retry import Outages
from invcrawl.frontier.values import Claim, CrawlNotFound


class Recorded(Metrics):
    def __init__(self) -> None:
        self.settled: list[tuple[str, str]] = []

    def page_settled(self, crawl: str, url: str, outcome: str, fetched: bool = True) -> None:
        self.settled.append((url, str(outcome)))


class FakeSession:
    def __init__(self, crawl_id: str, lost: tuple[str, ...] = (), fail: Exception | None = None):
        self.crawl_id = crawl_id
        self.lost = lost
        self.fail = fail
        self.renewed: list[list[str]] = []
        self.reaped: list[tuple[int, list[str]]] = []

    async def renew(self, consumer: str, claims: list[Claim], lease_ms: int, info: Any) -> Any:
        if self.fail is not None:
            raise self.fail
        self.renewed.append([c.task.id for c in claims])
        return list(self.lost)

    async def expired(self, order: list[int], now_ms: int) -> dict[int, list[str]]:
        return {order[0]: ["gone"]}

    async def reap_expired(self, slot: int, max_tries: int, ids: list[str]) -> tuple[int, int]:
        self.reaped.append((slot, ids))
        return len(ids), 0


class FakeSlots:
    def __init__(self) -> None:
        self.owned = [0, 1]
        self.refreshed = 0

    async def refresh(self) -> None:
        self.refreshed += 1

    def reap_order(self) -> list[int]:
        return [1, 0]


class FakeCrawls:
    def __init__(self, *served: Any) -> None:
        self.served = list(served)
        self.woken: list[str] = []
        self.forgot: list[str] = []

    def to_beat(self, held: set[str]) -> list[Any]:
        return self.served

    def wake(self, crawl_id: str) -> None:
        self.woken.append(crawl_id)

    async def forgotten(self, crawl_id: str) -> None:
        self.forgot.append(crawl_id)


class FakeHosts:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.renewals = 0

    async def renew(self) -> None:
        if self.fail is not None:
            raise self.fail
        self.renewals += 1


def served(session: FakeSession) -> Any:
    return SimpleNamespace(
        session=session, crawl_id=session.crawl_id, slots=FakeSlots(), max_tries=3, origin=None
    )


def claim(crawl_id: str, task_id: str, age: float = 0.0) -> Claim:
    task = Task(task_id, f"https://docs.test/{task_id}.html", ())
    return Claim(crawl_id, task, "c1:1", 1, 0, False, time.monotonic() - age)


def heartbeat(crawls: FakeCrawls, hosts: FakeHosts | None = None) -> tuple[Heartbeat, Any]:
    metrics = Recorded()
    stats: list[tuple[str, int]] = []

    def stat(name: str, n: int) -> None:
        stats.append((name, n))

    registry = SimpleNamespace(beat_consumer=_noop, server_ms=_now)
    frontier = SimpleNamespace(registry=registry, hosts=SimpleNamespace(register=_noop))
    held = Holdings(metrics, stat, lambda claim: None)
    beat = Heartbeat(
        frontier,  # type: ignore[arg-type]
        Leases(lease=30.0, task_deadline=300.0),
        "consumer-1",
        hosts=hosts or FakeHosts(),  # type: ignore[arg-type]
        crawls=crawls,  # type: ignore[arg-type]
        held=held,
        outages=Outages(stat, lambda: False),
        stat=stat,
    )
    return beat, SimpleNamespace(held=held, metrics=metrics, stats=stats)


async def _noop(*args: Any) -> None:
    return None


async def _now() -> int:
    return 1_000


def test_a_beat_renews_abandons_loses_and_reaps() -> None:
    session = FakeSession("c", lost=("taken",))
    crawls = FakeCrawls(served(session))
    beat, seen = heartbeat(crawls)
    seen.held.add([claim("c", "fresh"), claim("c", "taken"), claim("c", "stuck", age=301)])
    asyncio.run(beat.beat())
    assert session.renewed == [["fresh", "taken"]]  # not the one past the task deadline
    outcomes = dict(seen.metrics.settled)
    assert outcomes == {
        "https://docs.test/stuck.html": "abandoned",
        "https://docs.test/taken.html": "lease_lost",
    }
    assert len(seen.held) == 1 and seen.held.get("c", "fresh") is not None
    assert session.reaped == [(1, ["gone"])] and crawls.woken == ["c"]
    assert crawls.served[0].slots.refreshed == 1
    assert {("invcrawl/abandoned", 1), ("invcrawl/leases_lost", 1), ("invcrawl/reaped", 1)} <= set(
        seen.stats
    )


def test_an_outage_stops_the_beat_where_it_is_met() -> None:
    down = ConnectionError("Connection refused")
    # at the host permits: no crawl is beaten
    first = FakeSession("a")
    beat, seen = heartbeat(FakeCrawls(served(first)), FakeHosts(fail=down))
    asyncio.run(beat.beat())
    assert first.renewed == [] and seen.stats == [("invcrawl/redis_outages", 1)]
    # at a crawl: the turn ends there, the crawls after it wait for the next beat
    broken, after = FakeSession("a", fail=down), FakeSession("b")
    beat, seen = heartbeat(FakeCrawls(served(broken), served(after)))
    asyncio.run(beat.beat())
    assert after.renewed == [] and seen.stats == [("invcrawl/redis_outages", 1)]


def test_a_forgotten_crawl_is_let_go_and_the_others_beaten() -> None:
    gone, kept = FakeSession("a", fail=CrawlNotFound("a")), FakeSession("b")
    crawls = FakeCrawls(served(gone), served(kept))
    beat, _ = heartbeat(crawls)
    asyncio.run(beat.beat())
    assert crawls.forgot == ["a"] and kept.renewed == [[]]
