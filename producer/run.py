"""Process entry of ``invcrawl produce`` (and of ``invcrawl inventory``, with a
printing sink instead of Redis). ``schedule_inventory`` also lets a consumer process
run the producer spider beside its own (``produce --consume``, the first process of
``invcrawl crawl``), which saves a whole interpreter and Scrapy start-up."""

from __future__ import annotations

import logging

from scrapy.crawler import AsyncCrawlerProcess, Crawler

from common.config import Config
from common.crawler_settings import base_settings
from producer.spider import Fetched, InventorySpider, Sink

log = logging.getLogger("invcrawl.producer")


def quiet_download_errors() -> None:
    """The spider reports a failed inventory download in one line of its own; Scrapy's
    retry and robots.txt middlewares would also log it at ERROR with tracebacks."""
    for name in ("scrapy.downloadermiddlewares.retry", "scrapy.downloadermiddlewares.robotstxt"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def schedule_inventory(
    process: AsyncCrawlerProcess, config: Config, inventory_url: str, sink: Sink
) -> Crawler:
    """Add the producer spider to ``process`` (it runs when the process starts)."""
    quiet_download_errors()
    crawler = process.create_crawler(InventorySpider)
    process.crawl(
        crawler,
        inventory_url=inventory_url,
        sink=sink,
        max_inflated=config.max_inflated_mb * 1024 * 1024,
    )
    return crawler


def inventory_error(crawler: Crawler, inventory_url: str) -> str | None:
    """After the producer spider closed: its one-line error, or None on success."""
    spider = crawler.spider
    if not isinstance(spider, InventorySpider):  # never opened (Scrapy failed to start)
        return f"the inventory at {inventory_url} could not be processed (see the log above)"
    if spider.error:
        return spider.error
    if not spider.done:
        return f"the inventory at {inventory_url} could not be processed (see the log above)"
    return None


def fetch_inventory(config: Config, inventory_url: str, sink: Sink) -> str | None:
    """Run the producer spider once; returns an error line, or None on success."""
    process = AsyncCrawlerProcess(base_settings(config))
    crawler = schedule_inventory(process, config, inventory_url, sink)
    process.start()
    return inventory_error(crawler, inventory_url)


class Capture:
    """A sink that keeps what was fetched (for ``invcrawl inventory``)."""

    def __init__(self) -> None:
        self.fetched: Fetched | None = None

    async def __call__(self, fetched: Fetched) -> None:
        self.fetched = fetched
