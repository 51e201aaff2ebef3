"""The consumer spider: turns the Worker's claimed pages into requests (their claim,
crawl and site in ``request.meta``), extracts every entry of a fetched page in one parse,
and answers every page with exactly one settlement (``consumer/pages.py``) for the item
pipeline to settle: its callbacks decide nothing in Redis."""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from invcrawl.common.bounds import SizeLimits
from invcrawl.common.extract import extract_page
from invcrawl.common.items import (
    CrawlInfo,
    Item,
    ItemStatus,
    PageOutcome,
    status_items,
)
from invcrawl.common.pageitems import page_items
from invcrawl.common.plan import offsite_reason
from invcrawl.common.tasks import TaskStatus
from invcrawl.common.validators import response_validators
from invcrawl.consumer.pages import (
    CLAIM,
    CRAWL,
    ClaimedPage,
    PageFailure,
    PageFeed,
    PagePostponed,
    PageResult,
    Settlement,
    internal_error,
)
from invcrawl.fetch.budget import ExtractionTimeout, budget
from invcrawl.fetch.failures import Outcome, OutcomeKind, classify_exception, classify_status
from invcrawl.fetch.meta import DEAD, FOLLOW_WITHIN, OFFSITE, SITE
from invcrawl.fetch.politeness import HostBusy
from invcrawl.fetch.responses import header
from invcrawl.frontier.values import Claim

DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PageBounds:
    """What one page may cost: its extraction's time (seconds) and its items' sizes."""

    extract_budget: float
    sizes: SizeLimits


class PageSpider(Spider):
    name = "invcrawl-consumer"

    def __init__(
        self, pages: PageFeed, bounds: PageBounds, max_page_bytes: int, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.pages = pages
        self.extract_budget = bounds.extract_budget
        self.max_page_bytes = max_page_bytes
        self.limits = bounds.sizes

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> PageSpider:
        max_page_bytes = crawler.settings.getint("DOWNLOAD_MAXSIZE") or DEFAULT_MAX_PAGE_BYTES
        spider: PageSpider = super().from_crawler(
            crawler, *args, max_page_bytes=max_page_bytes, **kwargs
        )
        return spider

    async def start(self) -> AsyncIterator[Request | Settlement]:
        async for page in self.pages.feed():
            claim, task = page.claim, page.claim.task
            if task.status != TaskStatus.FETCH:  # a generated or offsite page: never fetched
                status = ItemStatus(task.status)
                items = status_items(page.crawl, task, status, task.reason)
                yield PageResult(claim, PageOutcome(task.status), items)
                continue
            escapes = _outside(page)
            if escapes:  # the producer's plan refuses these; a queue written otherwise too
                yield _status_result(claim, page.crawl, escapes, PageOutcome.OFFSITE)
                continue
            yield Request(
                task.download_url,
                headers=task.validators.conditional_headers() if task.validators else None,
                callback=self.parse_page,
                errback=self.page_failed,
                dont_filter=True,  # a retried page must be fetched again
                meta={
                    CLAIM: claim,
                    CRAWL: page.crawl,
                    SITE: page.site,  # trusted by the address policy (fetch/addresses.py)
                    FOLLOW_WITHIN: page.site,  # its redirects (fetch/redirects.py)
                    "handle_httpstatus_all": True,
                    "dont_retry": True,
                },
            )

    async def parse_page(self, response: Response) -> list[Settlement]:
        claim: Claim = response.meta[CLAIM]
        crawl: CrawlInfo = response.meta[CRAWL]
        fetched = response.meta.get("download_latency") or 0.0
        known = claim.task.validators
        if response.status == 304 and known:  # a refresh's conditional GET: unchanged
            return [PageResult(claim, PageOutcome.UNCHANGED, [], known.encode(), fetched)]
        if response.meta.get(OFFSITE):  # redirected off the site: not followed
            reason = response.meta[OFFSITE]
            return [_status_result(claim, crawl, reason, PageOutcome.OFFSITE, fetched)]
        if response.meta.get(DEAD):
            return [
                PageFailure(claim, Outcome(OutcomeKind.DEAD, response.meta[DEAD]), None, fetched)
            ]
        outcome = classify_status(response.status, header(response, b"Retry-After"))
        if outcome.kind == OutcomeKind.NOT_FOUND:
            return [_status_result(claim, crawl, outcome.reason, fetch_seconds=fetched)]
        if outcome.kind != OutcomeKind.EXTRACT:
            return [PageFailure(claim, outcome, None, fetched)]
        try:
            body = inflate_gzip(response.body, self.max_page_bytes)
            validators = response_validators(
                header(response, b"ETag"),
                header(response, b"Last-Modified"),
                body,
                claim.task.entries_digest,
            )
            if known and known.body_hash == validators.body_hash:  # same bytes: no extraction
                return [PageResult(claim, PageOutcome.UNCHANGED, [], validators.encode(), fetched)]
            started = time.perf_counter()
            with budget(self.extract_budget):
                items = self.extract(claim, response, body)
            extracted = time.perf_counter() - started
        except ExtractionTimeout as exc:  # a hostile or pathological page
            return [PageFailure(claim, Outcome(OutcomeKind.RETRY, str(exc)), None, fetched)]
        except Exception as exc:
            return [internal_error(claim, exc, fetched)]
        validated = validators.encode()
        return [PageResult(claim, PageOutcome.FETCHED, items, validated, fetched, extracted)]

    async def page_failed(self, failure: Failure) -> list[Settlement]:
        request: Request = failure.request  # type: ignore[attr-defined]
        claim: Claim = request.meta[CLAIM]
        if isinstance(failure.value, HostBusy):  # its host is blocked or busy for a while
            return [PagePostponed(claim, failure.value.wait)]
        assert failure.value is not None
        outcome = classify_exception(failure.value)
        if outcome.kind == OutcomeKind.SKIPPED:
            reason = outcome.reason
            return [_status_result(claim, request.meta[CRAWL], reason, PageOutcome.SKIPPED)]
        if outcome.kind == OutcomeKind.NOT_FOUND:
            return [_status_result(claim, request.meta[CRAWL], outcome.reason)]
        return [PageFailure(claim, outcome)]

    def extract(self, claim: Claim, response: Response, body: bytes) -> list[Item]:
        task = claim.task
        crawl: CrawlInfo = response.meta[CRAWL]
        targets = task.entries
        # Only a charset the server declared: Scrapy's own guess looks at the raw body,
        # which is meaningless for a gzip file served as is (it guesses "ascii" and the
        # page parses truncated); without one the extractor reads <meta charset>.
        encoding = declared_charset(response)
        # Links are re-based on the page's canonical URL unless the server redirected.
        base = task.url if response.url == task.download_url else response.url
        contents = extract_page(body, base, targets, encoding=encoding, lazy=True)
        # Bounded while they are built: an entry's own copy is of its bounded content
        # (of a long text, a rope: only what the bounds keep of it is ever joined).
        return page_items(crawl, task, contents, self.limits, len(body))  # docs/items.md


def _outside(page: ClaimedPage) -> str | None:
    """Why the task's URL is not on the crawl's site (its folder, once decoded)."""
    if not page.base:
        return None
    return offsite_reason(page.claim.task.download_url, page.base)


def _status_result(
    claim: Claim,
    crawl: CrawlInfo,
    reason: str,
    outcome: PageOutcome = PageOutcome.NOT_FOUND,
    fetch_seconds: float | None = None,
) -> PageResult:
    """A page that yields no content: every entry gets the page's status."""
    status = {
        PageOutcome.NOT_FOUND: ItemStatus.PAGE_NOT_FOUND,
        PageOutcome.SKIPPED: ItemStatus.SKIPPED,
        PageOutcome.OFFSITE: ItemStatus.OFFSITE,
    }[outcome]
    items = status_items(crawl, claim.task, status, reason)
    return PageResult(claim, outcome, items, fetch_seconds=fetch_seconds)


def inflate_gzip(body: bytes, limit: int) -> bytes:
    """A gzip file served as is (a local ``.gz`` page, or a server that sends
    ``.html.gz`` without Content-Encoding) is inflated, bounded like a download."""
    if not body.startswith(b"\x1f\x8b"):
        return body
    inflater = zlib.decompressobj(wbits=31)
    out = inflater.decompress(body, limit + 1)
    if len(out) > limit:
        raise ValueError(f"page inflates beyond {limit} bytes")
    return out


def declared_charset(response: Response) -> str | None:
    content_type = header(response, b"Content-Type") or ""
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    return match[1] if match else None
