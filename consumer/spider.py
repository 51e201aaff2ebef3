"""The consumer spider: feeds claimed page tasks to Scrapy, extracts every entry of a
fetched page in one parse, and hands the page's items to the commit pipeline."""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from common.bounds import SizeLimits, bound_items
from common.extract import Target, extract_page
from common.items import ItemStatus, PageOutcome, build_sized_item, checksum, status_items
from common.plan import offsite_reason
from common.validators import response_validators
from consumer.worker import Worker
from fetch.budget import ExtractionTimeout, budget
from fetch.failures import Outcome, classify_exception, classify_status
from fetch.meta import DEAD, FOLLOW_WITHIN, OFFSITE, SITE
from fetch.politeness import HostBusy
from frontier.session import Claim

CLAIM = "invcrawl_claim"
DEFAULT_MAX_PAGE_BYTES = 64 * 1024 * 1024


@dataclass(slots=True)
class PageResult:
    """All items of one page plus the claim they settle: committed together."""

    claim: Claim
    outcome: PageOutcome
    items: list[dict[str, Any]] = field(default_factory=list)
    validators: str = ""  # what the next refresh revalidates the page with ("" = none)

    def __repr__(self) -> str:  # Scrapy logs items; keep it to one short line
        return f"<PageResult {self.claim.task.url} {self.outcome} items={len(self.items)}>"


class PageSpider(Spider):
    name = "invcrawl-consumer"

    def __init__(self, worker: Worker, max_page_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.worker = worker
        self.max_page_bytes = max_page_bytes
        config = worker.config
        self.limits = SizeLimits(config.max_doc_chars, int(config.max_item_mb * 1024 * 1024))

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, *args: Any, worker: Worker, **kwargs: Any
    ) -> PageSpider:
        max_page_bytes = crawler.settings.getint("DOWNLOAD_MAXSIZE") or DEFAULT_MAX_PAGE_BYTES
        spider: PageSpider = super().from_crawler(
            crawler, *args, worker=worker, max_page_bytes=max_page_bytes, **kwargs
        )
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        return spider

    async def _closed(self, spider: Spider, reason: str) -> None:
        await self.worker.close()

    async def start(self) -> AsyncIterator[Any]:
        async for claim in self.worker.feed():
            task = claim.task
            if task.status != "fetch":  # a generated or offsite page: never fetched
                status = ItemStatus(task.status)
                items = status_items(self.worker.crawl_info(claim), task, status, task.reason)
                yield PageResult(claim, PageOutcome(task.status), items)
                continue
            escapes = self._outside(claim)
            if escapes:  # the producer's plan refuses these; a queue written otherwise too
                yield self._status_result(claim, escapes, PageOutcome.OFFSITE)
                continue
            served = self.worker.crawls.get(claim.crawl_id)
            site = served.origin if served is not None else None
            yield Request(
                task.download_url,
                headers=task.validators.conditional_headers() if task.validators else None,
                callback=self.parse_page,
                errback=self.page_failed,
                dont_filter=True,  # a retried page must be fetched again
                meta={
                    CLAIM: claim,
                    SITE: site,  # trusted by the address policy (fetch/addresses.py)
                    FOLLOW_WITHIN: site,  # its redirects (fetch/redirects.py)
                    "handle_httpstatus_all": True,
                    "dont_retry": True,
                },
            )

    async def parse_page(self, response: Response) -> list[PageResult]:
        claim: Claim = response.meta[CLAIM]
        self.worker.metrics.fetched(response.meta.get("download_latency") or 0.0)
        known = claim.task.validators
        if response.status == 304 and known:  # a refresh's conditional GET: unchanged
            return [PageResult(claim, PageOutcome.UNCHANGED, [], known.encode())]
        if response.meta.get(OFFSITE):  # redirected off the site: not followed
            return [self._status_result(claim, response.meta[OFFSITE], PageOutcome.OFFSITE)]
        if response.meta.get(DEAD):
            await self.worker.fail(claim, Outcome("dead", response.meta[DEAD]))
            return []
        outcome = classify_status(response.status, _header(response, b"Retry-After"))
        if outcome.kind == "not_found":
            return [self._status_result(claim, outcome.reason)]
        if outcome.kind != "extract":
            await self.worker.fail(claim, outcome)
            return []
        try:
            body = inflate_gzip(response.body, self.max_page_bytes)
            validators = response_validators(
                _header(response, b"ETag"),
                _header(response, b"Last-Modified"),
                body,
                claim.task.entries_digest,
            )
            if known and known.body_hash == validators.body_hash:  # same bytes: no extraction
                return [PageResult(claim, PageOutcome.UNCHANGED, [], validators.encode())]
            started = time.perf_counter()
            with budget(self.worker.config.extract_budget):
                items = self.extract(claim, response, body)
            self.worker.metrics.extracted(time.perf_counter() - started)
        except ExtractionTimeout as exc:  # a hostile or pathological page
            await self.worker.fail(claim, Outcome("retry", str(exc)))
            return []
        except Exception as exc:
            await self.worker.fail_with_exception(claim, exc)
            return []
        return [PageResult(claim, PageOutcome.FETCHED, items, validators.encode())]

    async def page_failed(self, failure: Failure) -> list[PageResult]:
        claim: Claim = failure.request.meta[CLAIM]  # type: ignore[attr-defined]
        if isinstance(failure.value, HostBusy):  # its host is blocked or busy for a while
            await self.worker.postpone(claim, failure.value.wait)
            return []
        outcome = classify_exception(failure.value)
        if outcome.kind == "skipped":
            return [self._status_result(claim, outcome.reason, PageOutcome.SKIPPED)]
        if outcome.kind == "not_found":
            return [self._status_result(claim, outcome.reason)]
        await self.worker.fail(claim, outcome)
        return []

    def extract(self, claim: Claim, response: Response, body: bytes) -> list[dict[str, Any]]:
        task = claim.task
        crawl = self.worker.crawl_info(claim)
        targets = [Target(e.name, e.domain, e.role, e.anchor, e.dispname) for e in task.entries]
        # Only a charset the server declared: Scrapy's own guess looks at the raw body,
        # which is meaningless for a gzip file served as is (it guesses "ascii" and the
        # page parses truncated); without one the extractor reads <meta charset>.
        encoding = declared_charset(response)
        # Links are re-based on the page's canonical URL unless the server redirected.
        base = task.url if response.url == task.download_url else response.url
        contents = extract_page(body, base, targets, encoding=encoding)
        sized = [
            build_sized_item(crawl, task, entry, content)
            for entry, content in zip(task.entries, contents, strict=True)
        ]
        items = [item for item, _ in sized]
        sizes = [size for _, size in sized]
        return bound_items(items, self.limits, len(body), checksum, sizes)  # docs/items.md

    def _outside(self, claim: Claim) -> str | None:
        """Why the task's URL is not on the crawl's site (its folder, once decoded)."""
        served = self.worker.crawls.get(claim.crawl_id)
        if served is None or not served.base:
            return None
        return offsite_reason(claim.task.download_url, served.base)

    def _status_result(
        self, claim: Claim, reason: str, outcome: PageOutcome = PageOutcome.NOT_FOUND
    ) -> PageResult:
        """A page that yields no content: every entry gets the page's status."""
        status = {
            PageOutcome.NOT_FOUND: ItemStatus.PAGE_NOT_FOUND,
            PageOutcome.SKIPPED: ItemStatus.SKIPPED,
            PageOutcome.OFFSITE: ItemStatus.OFFSITE,
        }[outcome]
        items = status_items(self.worker.crawl_info(claim), claim.task, status, reason)
        return PageResult(claim, outcome, items)


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
    content_type = _header(response, b"Content-Type") or ""
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    return match[1] if match else None


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
