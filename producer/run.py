"""Process entry of ``invcrawl produce`` (and of ``invcrawl inventory``, with a
printing sink instead of Redis)."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.crawler import AsyncCrawlerProcess

from common.config import Config
from common.crawler_settings import base_settings
from producer.spider import Fetched, InventorySpider, Sink

log = logging.getLogger("invcrawl.producer")


def producer_settings(config: Config) -> dict[str, Any]:
    settings = base_settings(config)
    # The inventory is one request: let Scrapy's own retry middleware handle a flaky
    # first fetch (the page tasks themselves are retried through Redis).
    settings.update({"RETRY_ENABLED": True, "RETRY_TIMES": 2})
    return settings


def quiet_download_errors() -> None:
    """The spider reports a failed inventory download in one line of its own; Scrapy's
    retry and robots.txt middlewares would also log it at ERROR with tracebacks."""
    for name in ("scrapy.downloadermiddlewares.retry", "scrapy.downloadermiddlewares.robotstxt"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def fetch_inventory(config: Config, inventory_url: str, sink: Sink) -> str | None:
    """Run the producer spider once; returns an error line, or None on success."""
    process = AsyncCrawlerProcess(producer_settings(config))
    quiet_download_errors()
    crawler = process.create_crawler(InventorySpider)
    process.crawl(
        crawler,
        inventory_url=inventory_url,
        sink=sink,
        max_inflated=config.max_inflated_mb * 1024 * 1024,
    )
    process.start()
    spider = crawler.spider
    assert isinstance(spider, InventorySpider)
    if spider.error:
        return spider.error
    if not spider.done:
        return f"the inventory at {inventory_url} could not be processed (see the log above)"
    return None


class Capture:
    """A sink that keeps what was fetched (for ``invcrawl inventory``)."""

    def __init__(self) -> None:
        self.fetched: Fetched | None = None

    async def __call__(self, fetched: Fetched) -> None:
        self.fetched = fetched
