"""The typed values a crawl session (:mod:`invcrawl.frontier.session`) hands out: a claimed task,
a commit's result, the crawl's slot layout."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from invcrawl.common.items import ItemLayout
from invcrawl.common.tasks import Task


class CrawlNotFound(LookupError):
    pass


@dataclass(slots=True)
class Claim:
    """A leased task as the consumer holds it."""

    crawl_id: str
    task: Task
    token: str
    deliveries: int
    slot: int
    suspect: bool
    claimed_at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class CommitResult:
    committed: bool
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    expired: bool = False


@dataclass(frozen=True, slots=True)
class Layout:
    slots: int
    max_slots: int
    buckets: int
    term_logs: int  # of its search index (common/search/postings.py)

    @property
    def items(self) -> ItemLayout:
        return ItemLayout(self.buckets, self.term_logs)
