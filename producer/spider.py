"""The producer spider: fetch objects.inv through Scrapy (so robots.txt, proxies, retries
and timeouts apply), parse it with a bounded inflate, plan one task per page, and hand
the plan to a sink (Redis for ``produce``, a summary for ``inventory``), or tell the
sink why it could not."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from common.inventory import Inventory, InventoryError, parse_inventory
from common.plan import Plan, plan_crawl


@dataclass(frozen=True, slots=True)
class Fetched:
    inventory: Inventory
    plan: Plan
    url: str  # final URL, after redirects
    sha256: str


class Sink(Protocol):
    async def __call__(self, fetched: Fetched) -> None:
        """The inventory was read and planned."""

    async def failed(self, error: str) -> None:
        """It could not be (``error`` is one line for the user)."""


class InventorySpider(Spider):
    name = "invcrawl-producer"
    # The inventory is one request: let Scrapy's own retry middleware handle a flaky
    # first fetch (the page tasks themselves are retried through Redis). Spider-level:
    # the shared base settings turn retries off for everything else.
    custom_settings = {"RETRY_ENABLED": True, "RETRY_TIMES": 2}  # noqa: RUF012 - Scrapy's API

    def __init__(self, inventory_url: str, sink: Sink, max_inflated: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inventory_url = inventory_url
        self.sink = sink
        self.max_inflated = max_inflated
        self.error: str | None = None
        self.done = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> InventorySpider:
        spider: InventorySpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        return spider

    async def _closed(self, spider: Spider, reason: str) -> None:
        if self.done:
            return
        if self.error is None:
            self.error = f"the inventory at {self.inventory_url} could not be processed ({reason})"
        try:
            await self.sink.failed(self.error)
        except Exception as exc:  # e.g. Redis is down too: the error line still reaches the user
            self.logger.warning("could not record the failure: %s", exc)

    async def start(self) -> AsyncIterator[Any]:
        yield Request(
            self.inventory_url,
            callback=self.parse_inventory,
            errback=self.inventory_failed,
            dont_filter=True,
            meta={"handle_httpstatus_all": True},
        )

    async def parse_inventory(self, response: Response) -> list[Any]:
        url = response.url
        if response.status != 200:
            hint = (
                " (is SITE the docs root, where objects.inv lives?)"
                if response.status == 404
                else ""
            )
            self.error = f"HTTP {response.status} fetching {url}{hint}"
            return []
        try:
            inventory = parse_inventory(response.body, max_inflated=self.max_inflated)
        except InventoryError as exc:
            self.error = f"{url}: {exc}"
            return []
        plan = plan_crawl(inventory, url)
        if plan.entries == 0:
            self.error = f"{url}: the inventory has 0 entries; nothing to crawl"
            return []
        await self.sink(Fetched(inventory, plan, url, hashlib.sha256(response.body).hexdigest()))
        self.done = True
        return []

    def inventory_failed(self, failure: Failure) -> None:
        self.error = describe_failure(failure, self.inventory_url)


def describe_failure(failure: Failure, url: str) -> str:
    """One line a user can act on, for a failed inventory download."""
    exc = failure.value
    name = type(exc).__name__
    text = str(exc)
    if name == "IgnoreRequest" and "robots" in text.lower():
        return f"robots.txt forbids fetching {url} (pass --no-robots to ignore robots.txt)"
    if name in ("DNSLookupError", "CannotResolveHostError"):
        return f"cannot resolve the host of {url}"
    if "ConnectionRefused" in name or name == "ConnectError":
        return f"connection refused: {url}"
    if "Timeout" in name or "TimedOut" in name:
        return f"timed out fetching {url}"
    if isinstance(exc, (FileNotFoundError, IsADirectoryError)) or "No such file" in text:
        return f"no such file: {url}"
    if "maxsize" in text.lower() or "max size" in text.lower():
        return f"{url} is larger than the download size limit"
    return f"cannot fetch {url}: {name}: {text}".rstrip(": ")
