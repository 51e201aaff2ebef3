"""The consumer spider: feeds claimed page tasks to Scrapy, extracts every entry of a
fetched page in one parse, and hands the page's items to the commit pipeline."""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from common.extract import Target, extract_page
from common.items import build_item, status_items
from common.store import Claim
from consumer.failures import classify_exception, classify_status
from consumer.worker import Worker

CLAIM = "invcrawl_claim"


@dataclass(slots=True)
class PageResult:
    """All items of one page plus the claim they settle: committed together."""

    claim: Claim
    outcome: str  # fetched | not_found | skipped | offsite
    items: list[dict[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:  # Scrapy logs items; keep it to one short line
        return f"<PageResult {self.claim.task.url} {self.outcome} items={len(self.items)}>"


class PageSpider(Spider):
    name = "invcrawl-consumer"

    def __init__(self, worker: Worker, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.worker = worker
        self.max_page_bytes = 64 * 1024 * 1024  # DOWNLOAD_MAXSIZE, set in from_crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> PageSpider:
        spider: PageSpider = super().from_crawler(crawler, *args, **kwargs)
        spider.max_page_bytes = crawler.settings.getint("DOWNLOAD_MAXSIZE") or spider.max_page_bytes
        crawler.signals.connect(spider._opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        return spider

    def _opened(self, spider: Spider) -> None:
        # Crawler.stats exists only once the crawl has started (Scrapy >= 2.13).
        stats = self.crawler.stats
        assert stats is not None
        self.worker.on_stat = stats.inc_value

    async def _closed(self, spider: Spider, reason: str) -> None:
        await self.worker.close()

    async def start(self) -> AsyncIterator[Any]:
        async for claim in self.worker.feed():
            task = claim.task
            if task.status != "fetch":
                assert self.worker.crawl
                items = status_items(self.worker.crawl, task, task.status, task.reason)
                yield PageResult(claim, task.status, items)
                continue
            yield Request(
                task.download_url,
                callback=self.parse_page,
                errback=self.page_failed,
                dont_filter=True,  # a retried page must be fetched again
                meta={CLAIM: claim, "handle_httpstatus_all": True, "dont_retry": True},
            )

    async def parse_page(self, response: Response) -> list[PageResult]:
        claim: Claim = response.meta[CLAIM]
        outcome = classify_status(response.status, _header(response, b"Retry-After"))
        if outcome.kind == "not_found":
            return [self._status_result(claim, "not_found", "page_not_found", outcome.reason)]
        if outcome.kind != "extract":
            await self.worker.fail(claim, outcome)
            return []
        try:
            items = self.extract(claim, response)
        except Exception as exc:
            await self.worker.fail_with_exception(claim, exc)
            return []
        return [PageResult(claim, "fetched", items)]

    async def page_failed(self, failure: Failure) -> list[PageResult]:
        claim: Claim = failure.request.meta[CLAIM]  # type: ignore[attr-defined]
        outcome = classify_exception(failure.value)
        if outcome.kind == "skipped":
            return [self._status_result(claim, "skipped", "skipped", outcome.reason)]
        if outcome.kind == "not_found":
            return [self._status_result(claim, "not_found", "page_not_found", outcome.reason)]
        await self.worker.fail(claim, outcome)
        return []

    def extract(self, claim: Claim, response: Response) -> list[dict[str, Any]]:
        task = claim.task
        crawl = self.worker.crawl
        assert crawl
        targets = [Target(e.name, e.domain, e.role, e.anchor, e.dispname) for e in task.entries]
        # Only a charset the server declared: Scrapy's own guess looks at the raw body,
        # which is meaningless for a gzip file served as is (it guesses "ascii" and the
        # page parses truncated); without one the extractor reads <meta charset>.
        encoding = declared_charset(response)
        body = inflate_gzip(response.body, self.max_page_bytes)
        # Links are re-based on the page's canonical URL unless the server redirected.
        base = task.url if response.url == task.download_url else response.url
        contents = extract_page(body, base, targets, encoding=encoding)
        return [
            build_item(crawl, task, entry, content)
            for entry, content in zip(task.entries, contents, strict=True)
        ]

    def _status_result(self, claim: Claim, outcome: str, status: str, reason: str) -> PageResult:
        assert self.worker.crawl
        return PageResult(
            claim, outcome, status_items(self.worker.crawl, claim.task, status, reason)
        )


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
