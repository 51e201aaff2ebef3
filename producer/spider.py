"""The producer spider: fetch objects.inv through Scrapy (so robots.txt, proxies, retries
and timeouts apply), parse it with a bounded inflate, plan one task per page, and hand
the plan to a sink (Redis for ``produce``, a summary for ``inventory``), or tell the
sink why it could not."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from invcrawl.common.inventory import Inventory, InventoryError, parse_inventory
from invcrawl.common.plan import Plan, PlanCache, plan_crawl
from invcrawl.fetch.addresses import AddressRefused
from invcrawl.fetch.failures import refused_by_robots, too_large
from invcrawl.fetch.meta import SITE
from invcrawl.fetch.responses import header


@dataclass(frozen=True, slots=True)
class Fetched:
    inventory: Inventory
    plan: Plan
    url: str  # final URL, after redirects
    sha256: str
    body: bytes = b""  # objects.inv as served (kept for the next refresh)
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False  # a refresh's conditional GET got 304: body is the stored one


class Sink(Protocol):
    async def conditional_headers(self) -> dict[str, str]:
        """Headers of the inventory request (a refresh's If-None-Match...), after any
        preparation the sink needs before the download."""

    async def stored_inventory(self) -> bytes | None:
        """The inventory to use when the server answers 304 Not Modified."""

    async def __call__(self, fetched: Fetched) -> None:
        """The inventory was read and planned."""

    async def failed(self, error: str) -> None:
        """It could not be (``error`` is one line for the user)."""


@dataclass(slots=True)
class InventoryJob:
    """One inventory to read, the sink its plan goes to, and how that ended."""

    url: str
    sink: Sink
    error: str | None = None
    done: bool = False
    # Set while its inventory is being planned and enqueued: the spider may be closed
    # meanwhile (seen under heavy load: every page enqueued, the job then failed as "not
    # processed", and its crawl could never complete), so closing waits for it.
    busy: asyncio.Event | None = None


NON_REDIRECT_STATUSES = [s for s in range(100, 600) if s not in (301, 302, 303, 307, 308)]


class InventorySpider(Spider):
    """Reads every inventory of its jobs concurrently (one Scrapy process for all the
    sites of a multi-site run); each job ends in its sink, or its error."""

    name = "invcrawl-producer"
    # The inventory is one request: let Scrapy's own retry middleware handle a flaky
    # first fetch (the page tasks themselves are retried through Redis). Spider-level:
    # the shared base settings turn retries off for everything else.
    custom_settings = {"RETRY_ENABLED": True, "RETRY_TIMES": 2}  # noqa: RUF012 - Scrapy's API

    def __init__(
        self,
        jobs: Sequence[InventoryJob],
        max_inflated: int,
        plans: PlanCache | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.jobs = list(jobs)
        self.max_inflated = max_inflated
        self.plans = plans  # a long-running producer's plans of unchanged inventories

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> InventorySpider:
        spider: InventorySpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        return spider

    async def _closed(self, spider: Spider, reason: str) -> None:
        for job in self.jobs:
            if job.busy is not None:  # its callback is still at work: let it finish
                await job.busy.wait()
            if job.done:
                continue
            if job.error is None:
                job.error = f"the inventory at {job.url} could not be processed ({reason})"
            try:
                await job.sink.failed(job.error)
            except Exception as exc:  # e.g. Redis is down too: the line still reaches the user
                self.logger.warning("could not record the failure: %s", exc)

    async def start(self) -> AsyncIterator[Any]:
        for job in self.jobs:
            if job.error is not None:  # no inventory to fetch: failed when the spider closes
                continue
            try:
                headers = await job.sink.conditional_headers()
            except Exception as exc:  # Redis down: the job ends in its one line
                job.error = f"cannot prepare the crawl of {job.url}: {exc}"
                continue
            yield Request(
                job.url,
                headers=headers,
                callback=self.parse_inventory,
                errback=self.inventory_failed,
                dont_filter=True,
                # Every status reaches parse_inventory except redirects, which Scrapy's
                # redirect middleware follows (http -> https, a moved docs root): the
                # final URL is the base of the plan and of the site's redirect policy.
                # SITE: the site the user gave, trusted by the address policy even on an
                # internal address; a redirect elsewhere is checked (fetch/addresses.py).
                meta={"handle_httpstatus_list": NON_REDIRECT_STATUSES, SITE: job.url},
                cb_kwargs={"job": job},
            )

    async def parse_inventory(self, response: Response, job: InventoryJob) -> list[Any]:
        job.busy = asyncio.Event()
        try:
            return await self._parse_inventory(response, job)
        finally:
            job.busy.set()

    async def _parse_inventory(self, response: Response, job: InventoryJob) -> list[Any]:
        url = response.url
        body = response.body
        not_modified = False
        if response.status == 304 and (stored := await job.sink.stored_inventory()):
            body, not_modified = stored, True
        elif response.status != 200:
            hint = (
                " (is SITE the docs root, where objects.inv lives?)"
                if response.status == 404
                else ""
            )
            job.error = f"HTTP {response.status} fetching {url}{hint}"
            return []
        sha256 = hashlib.sha256(body).hexdigest()
        cached = self.plans.get(url, sha256) if self.plans is not None else None
        if cached is not None:
            inventory, plan = cached
        else:
            try:
                inventory = parse_inventory(body, max_inflated=self.max_inflated)
            except InventoryError as exc:
                job.error = f"{url}: {exc}"
                return []
            plan = plan_crawl(inventory, url)
            if plan.entries == 0:
                job.error = f"{url}: the inventory has 0 entries; nothing to crawl"
                return []
            if self.plans is not None:
                self.plans.put(url, sha256, inventory, plan)
        await job.sink(
            Fetched(
                inventory,
                plan,
                url,
                sha256,
                body,
                header(response, b"ETag"),
                header(response, b"Last-Modified"),
                not_modified,
            )
        )
        job.done = True
        return []

    def inventory_failed(self, failure: Failure) -> None:
        job: InventoryJob = failure.request.cb_kwargs["job"]  # type: ignore[attr-defined]
        job.error = describe_failure(failure, job.url)


def describe_failure(failure: Failure, url: str) -> str:
    """One line a user can act on, for a failed inventory download."""
    exc = failure.value
    name = type(exc).__name__
    text = str(exc)
    if isinstance(exc, AddressRefused):  # a redirect into the local network...
        return f"cannot fetch {url}: {text}"
    if refused_by_robots(exc):
        return f"robots.txt forbids fetching {url} (pass --no-robots to ignore robots.txt)"
    if name in ("DNSLookupError", "CannotResolveHostError"):
        return f"cannot resolve the host of {url}"
    if "ConnectionRefused" in name or name == "ConnectError":
        return f"connection refused: {url}"
    if "Timeout" in name or "TimedOut" in name:
        return f"timed out fetching {url}"
    if isinstance(exc, (FileNotFoundError, IsADirectoryError)) or "No such file" in text:
        return f"no such file: {url}"
    if too_large(exc):
        return f"{url} is larger than the download size limit"
    return f"cannot fetch {url}: {name}: {text}".rstrip(": ")
