"""The claims a consumer holds: tasks claimed and not settled yet, per crawl and per host.

Every claim enters through :meth:`Holdings.add` and leaves exactly once through
:meth:`Holdings.settled`, with the outcome it ended in (counted once per claim for
Prometheus, ``consumer/metrics.py``); the owner hears of each through ``on_settled``
(the Worker makes room for the next claims and checks the crawl for completion).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from invcrawl.common.items import PageOutcome
from invcrawl.common.tasks import TaskStatus
from invcrawl.consumer.metrics import Metrics
from invcrawl.consumer.pages import Ending
from invcrawl.frontier.retry import StatSink
from invcrawl.frontier.values import Claim


class Holdings:
    def __init__(
        self, metrics: Metrics, stat: StatSink, on_settled: Callable[[Claim], None]
    ) -> None:
        self._held: dict[tuple[str, str], Claim] = {}
        self._metrics = metrics
        self._stat = stat
        self._on_settled = on_settled

    def add(self, claims: Iterable[Claim]) -> None:
        for claim in claims:
            self._held[(claim.crawl_id, claim.task.id)] = claim
            self._metrics.claimed(claim.crawl_id, claim.task.url, _fetched(claim))
            self._stat("invcrawl/claims", 1)
            if claim.deliveries > 1:
                self._stat("invcrawl/redeliveries", 1)

    def settled(self, claim: Claim, outcome: PageOutcome | Ending = Ending.RELEASED) -> None:
        """The claim is no longer ours (committed, failed, released, lease lost or
        abandoned: ``outcome``, counted once per claim)."""
        if self._held.pop((claim.crawl_id, claim.task.id), None) is not None:
            self._metrics.page_settled(claim.crawl_id, claim.task.url, outcome, _fetched(claim))
        self._on_settled(claim)

    def get(self, crawl_id: str, task_id: str) -> Claim | None:
        return self._held.get((crawl_id, task_id))

    def of_crawl(self, crawl_id: str) -> list[Claim]:
        return [claim for (held_crawl, _), claim in self._held.items() if held_crawl == crawl_id]

    def crawl_ids(self) -> set[str]:
        return {crawl_id for crawl_id, _ in self._held}

    def holds_crawl(self, crawl_id: str) -> bool:
        return any(held_crawl == crawl_id for held_crawl, _ in self._held)

    def per_host(self, origin_of: Callable[[str], str | None]) -> dict[str | None, int]:
        """How many claims are held per host (``origin_of``: a crawl's host)."""
        counts: dict[str | None, int] = {}
        for crawl_id, _ in self._held:
            origin = origin_of(crawl_id)
            counts[origin] = counts.get(origin, 0) + 1
        return counts

    def isolated(self) -> bool:
        """Holding a suspect task: claim nothing else until it is settled
        (docs/delivery.md)."""
        return any(claim.suspect for claim in self._held.values())

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, key: object) -> bool:
        """``(crawl id, task id) in holdings``."""
        return key in self._held

    def __iter__(self) -> Iterator[Claim]:
        return iter(list(self._held.values()))


def _fetched(claim: Claim) -> bool:
    """A page to download (its host is one requests go to), not an offsite or skipped
    one: only those are in flight on a host (consumer/metrics.py)."""
    return claim.task.status == TaskStatus.FETCH
