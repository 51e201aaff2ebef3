"""The one settle step (consumer/settling.py), in process: every page ends its claim
exactly once, with the outcome its Redis call gave (committed, fenced, retried,
dead-lettered, postponed), or forgotten (its crawl gone) or abandoned (Redis unreachable
past the settle deadline); the retry's delay is the page backoff's; the holdings and the
``invcrawl_pages`` outcome label hear of each claim once."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest
from redis.exceptions import ConnectionError

from invcrawl.common.items import PageOutcome
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.metrics import Metrics
from invcrawl.consumer.pages import Ending, PageFailure, PagePostponed, PageResult
from invcrawl.consumer.settling import PageBackoff, Settled, Settler
from invcrawl.fetch.failures import Outcome, OutcomeKind
from invcrawl.frontier.retry import Outages, RetryWaits
from invcrawl.frontier.values import Claim, CommitResult, FailResult

URL = "https://docs.test/p.html"
ENTRY = TaskEntry("m.f", "py", "function", 1, "m.f", "-")


class Recorded(Metrics):
    def __init__(self) -> None:
        self.settled: list[str] = []
        self.fenced_crawls: list[str] = []

    def page_settled(self, crawl: str, url: str, outcome: str, fetched: bool = True) -> None:
        self.settled.append(str(outcome))

    def fenced(self, crawl: str) -> None:
        self.fenced_crawls.append(crawl)


class FakeSession:
    """A crawl session whose three settle calls answer as told (an exception: raised)."""

    crawl_id = "c"

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    async def _answer(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((name, args, kwargs))
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def commit(self, *args: Any) -> Any:
        return await self._answer("commit", *args)

    async def fail(self, *args: Any, **kwargs: Any) -> Any:
        return await self._answer("fail", *args, **kwargs)

    async def release(self, *args: Any) -> Any:
        return await self._answer("release", *args)


class FakeCrawls:
    def __init__(self, served: Any) -> None:
        self.served = served
        self.woken: list[str] = []

    def get(self, crawl_id: str) -> Any:
        return self.served

    def wake(self, crawl_id: str) -> None:
        self.woken.append(crawl_id)


def claim(deliveries: int = 1, claimed_at: float | None = None) -> Claim:
    task = Task("t1", URL, (ENTRY,))
    return Claim("c", task, "c1:1", deliveries, 0, False, claimed_at or time.monotonic())


def settler(
    session: FakeSession | None, lease: float = 30.0
) -> tuple[Settler, Holdings, Recorded, FakeCrawls, list[tuple[str, int]]]:
    served = None if session is None else SimpleNamespace(session=session, max_tries=3)
    crawls = FakeCrawls(served)
    metrics = Recorded()
    stats: list[tuple[str, int]] = []

    def stat(name: str, n: int) -> None:
        stats.append((name, n))

    held = Holdings(metrics, stat, lambda claim: None)
    outages = Outages(stat, lambda: False)
    outages._retry = outages._retry.but(waits=lambda: RetryWaits(0.001, 0.002))
    out = Settler(
        Leases(lease=lease, task_deadline=lease),
        PageBackoff(base=10.0, maximum=100.0),
        "consumer-1",
        crawls=crawls,  # type: ignore[arg-type]
        held=held,
        outages=outages,
        metrics=metrics,
        stat=stat,
    )
    return out, held, metrics, crawls, stats


def settle(s: Settler, held: Holdings, page: Any) -> Settled:
    held.add([page.claim])
    assert len(held) == 1
    settled = asyncio.run(s.settle(page))
    assert len(held) == 0  # the claim left the holdings, once
    return settled


def test_a_committed_page_counts_its_items() -> None:
    session = FakeSession(CommitResult(True, new=2, updated=1))
    s, held, metrics, _, stats = settler(session)
    settled = settle(s, held, PageResult(claim(), PageOutcome.FETCHED))
    assert settled.outcome is PageOutcome.FETCHED and settled.committed
    assert metrics.settled == ["fetched"]
    assert ("invcrawl/pages_done", 1) in stats and ("invcrawl/items_new", 2) in stats


def test_a_fenced_commit_is_fenced_not_done() -> None:
    s, held, metrics, _, stats = settler(FakeSession(CommitResult(False, expired=True)))
    settled = settle(s, held, PageResult(claim(), PageOutcome.FETCHED))
    assert settled.outcome is Ending.FENCED and not settled.committed
    assert metrics.settled == ["fenced"] and metrics.fenced_crawls == ["c"]
    assert ("invcrawl/fenced", 1) in stats and ("invcrawl/pages_done", 1) not in stats


@pytest.mark.parametrize(
    ("kind", "answer", "ending"),
    [
        (OutcomeKind.RETRY, FailResult.RETRY, Ending.RETRY),
        (OutcomeKind.DEAD, FailResult.DEAD, Ending.DEAD),
        (OutcomeKind.RETRY, FailResult.FENCED, Ending.FENCED),
    ],
)
def test_a_failed_page_ends_as_the_script_says(
    kind: OutcomeKind, answer: FailResult, ending: Ending
) -> None:
    session = FakeSession(answer)
    s, held, metrics, crawls, stats = settler(session)
    settled = settle(s, held, PageFailure(claim(deliveries=2), Outcome(kind, "HTTP 503")))
    assert settled.outcome is ending and metrics.settled == [ending.value]
    (name, args, kwargs) = session.calls[0]
    _, error, delay_ms, max_tries = args
    # the page backoff: base 10 s doubled once (delivery 2), half of it jittered
    assert name == "fail" and 10_000 <= delay_ms <= 20_000 and max_tries == 3
    assert error["reason"] == "HTTP 503" and error["delivery"] == 2
    assert kwargs == {"dead_now": kind is OutcomeKind.DEAD}
    assert (f"invcrawl/{ending}", 1) in stats
    assert crawls.woken == (["c"] if ending is Ending.RETRY else [])  # its retry comes due


@pytest.mark.parametrize(("released", "ending"), [(True, Ending.POSTPONED), (False, Ending.FENCED)])
def test_a_postponed_page_is_released_for_its_seconds(released: bool, ending: Ending) -> None:
    session = FakeSession(released)
    s, held, metrics, _, _ = settler(session)
    assert settle(s, held, PagePostponed(claim(), 2.5)).outcome is ending
    assert session.calls[0][1][1] == 2500 and metrics.settled == [ending.value]


def test_a_forgotten_crawls_claim_is_settled_without_redis() -> None:
    s, held, metrics, _, _ = settler(None)
    assert settle(s, held, PageResult(claim(), PageOutcome.FETCHED)).outcome is Ending.FORGOTTEN
    assert metrics.settled == ["forgotten"]


def test_redis_unreachable_past_the_deadline_abandons_the_claim() -> None:
    down = ConnectionError("Connection refused")
    session = FakeSession(down, down, down, CommitResult(True))
    # claimed long ago: its settle deadline (task deadline + a lease) has passed
    s, held, metrics, _, stats = settler(session, lease=0.01)
    old = claim(claimed_at=time.monotonic() - 10)
    assert settle(s, held, PageResult(old, PageOutcome.FETCHED)).outcome is Ending.ABANDONED
    assert len(session.calls) == 1 and metrics.settled == ["abandoned"]
    assert stats.count(("invcrawl/redis_outages", 1)) == 1
    # within the deadline, the same outage is ridden out and the commit lands
    session = FakeSession(down, down, CommitResult(True))
    s, held, metrics, _, _ = settler(session)
    assert settle(s, held, PageResult(claim(), PageOutcome.FETCHED)).committed
    assert len(session.calls) == 3 and metrics.settled == ["fetched"]
