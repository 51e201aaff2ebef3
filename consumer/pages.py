"""What passes between the consumer's parts for one page: the feed hands the spider a
:class:`ClaimedPage`; the spider answers every page with exactly one settlement (a
:class:`PageResult` to commit, a :class:`PageFailure` to retry or dead-letter, or a
:class:`PagePostponed` to give back), which Scrapy's item pipeline hands to the one
settle step (``consumer/pipelines.py`` -> ``Worker.settle`` -> ``consumer/settling.py``).
The protocols say what the spider and the pipeline need of the Worker, which they do not
import."""

from __future__ import annotations

import traceback
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from invcrawl.common.items import CrawlInfo, Item, PageOutcome
from invcrawl.fetch.failures import Outcome, OutcomeKind
from invcrawl.fetch.shared import SharedKey
from invcrawl.frontier.values import Claim

# request.meta of a page request (with fetch/meta.SITE and FOLLOW_WITHIN):
CLAIM = "invcrawl_claim"  # the Claim the page settles
CRAWL = "invcrawl_crawl"  # the CrawlInfo of its crawl (the items' crawl, project, version)


class Ending(StrEnum):
    """How a claim was settled but by a commit (whose :class:`PageOutcome` says it); with
    those, the ``outcome`` label of ``invcrawl_pages`` (consumer/metrics.py), so the values
    are the labels'."""

    RETRY = "retry"  # a delayed task, to be tried again
    DEAD = "dead"  # dead-lettered
    POSTPONED = "postponed"  # released without using a delivery
    FENCED = "fenced"  # another delivery owns the task
    ABANDONED = "abandoned"  # Redis could not be had before the settle deadline, or the
    # task outlived its hard deadline (consumer/heartbeat.py)
    FORGOTTEN = "forgotten"  # its crawl was forgotten meanwhile: nothing to settle it in
    RELEASED = "released"  # given back unsettled (the consumer stopping)
    LEASE_LOST = "lease_lost"  # its lease expired and another consumer may hold it


@dataclass(frozen=True, slots=True)
class ClaimedPage:
    """A claimed task and what the spider needs to know of its crawl."""

    claim: Claim
    crawl: CrawlInfo
    site: str | None  # the origin of the crawl's site (None: a local site)
    base: str  # the inventory's folder: pages outside it are never fetched ("": no check)


@dataclass(slots=True)
class PageResult:
    """All items of one page plus the claim they settle: committed together (fetched,
    unchanged, not_found, skipped, offsite)."""

    claim: Claim
    outcome: PageOutcome
    items: list[Item] = field(default_factory=list)
    validators: str = ""  # what the next refresh revalidates the page with ("" = none)
    fetch_seconds: float | None = None  # its download (None: not downloaded)
    extract_seconds: float | None = None  # its extraction (None: not extracted)

    def __repr__(self) -> str:  # Scrapy logs items; keep it to one short line
        return f"<PageResult {self.claim.task.url} {self.outcome} items={len(self.items)}>"


@dataclass(frozen=True, slots=True)
class PageFailure:
    """The page could not be had: retried later or dead-lettered, as ``outcome.kind``
    says; ``internal``: the unexpected error of our own that killed it
    (:func:`internal_error`), logged with its traceback when settled."""

    claim: Claim
    outcome: Outcome
    internal: BaseException | None = None
    fetch_seconds: float | None = None

    def __repr__(self) -> str:
        return f"<PageFailure {self.claim.task.url} {self.outcome.kind}: {self.outcome.reason}>"


@dataclass(frozen=True, slots=True)
class PagePostponed:
    """The page's host will not take a request for ``seconds``: give the task back
    without using a delivery."""

    claim: Claim
    seconds: float

    def __repr__(self) -> str:
        return f"<PagePostponed {self.claim.task.url} {self.seconds:.1f}s>"


Settlement = PageResult | PageFailure | PagePostponed


def internal_error(
    claim: Claim, exc: BaseException, fetch_seconds: float | None = None
) -> PageFailure:
    """An unexpected error in our own code is deterministic: dead-lettered at once with
    the traceback's last line, rather than burn retries on it."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return PageFailure(
        claim, Outcome(OutcomeKind.DEAD, f"internal error: {text[:500]}"), exc, fetch_seconds
    )


class PageFeed(Protocol):
    """The spider's source of pages (the Worker)."""

    def feed(self) -> AsyncIterator[ClaimedPage]: ...


class Settle(Protocol):
    """The one settle step (the Worker), for the item pipeline."""

    async def settle(self, page: Settlement) -> object: ...


# The settle step, handed to the item pipeline through the settings (fetch/shared.py).
SETTLE: SharedKey[Settle] = SharedKey("INVCRAWL_SETTLE")
