"""The typed values a crawl session (:mod:`invcrawl.frontier.session`) hands out: a claimed
task, a commit's result, the crawl's slot layout."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from invcrawl.common.items import ItemLayout
from invcrawl.common.tasks import Task


class CrawlNotFound(LookupError):
    pass


class FailResult(StrEnum):
    """What ``fail.lua`` did with a failed task (its reply, so the values are the script's)."""

    RETRY = "retry"  # into the delayed set, to be tried again
    DEAD = "dead"  # dead-lettered: out of tries, or a permanent failure
    FENCED = "fenced"  # the lease was not ours: another delivery owns the task


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
