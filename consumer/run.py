"""Process entry of ``invcrawl consume``: one Redis client, one Scrapy crawler, graceful
SIGTERM (finish or release in-flight pages, exit 0), second signal forces the stop."""

from __future__ import annotations

import gc
import logging
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any

from redis.asyncio import Redis
from scrapy.crawler import AsyncCrawlerProcess
from scrapy_redis.connection import get_redis_from_settings

from common.config import Config
from common.crawler_settings import base_settings
from consumer.worker import Worker

log = logging.getLogger("invcrawl.consumer")


def consumer_settings(config: Config) -> dict[str, Any]:
    settings = base_settings(config)
    settings.update(
        {
            "CONCURRENT_REQUESTS": config.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": config.concurrency,
            # A callback returns at most one PageResult: Scrapy's default of 100 makes
            # it start 100 asyncio tasks per page (scraper._parallel_asyncio).
            "CONCURRENT_ITEMS": 1,
            "ITEM_PIPELINES": {"consumer.pipelines.CommitPipeline": 100},
        }
    )
    return settings


def run_consumer(
    config: Config,
    redis: Redis | None = None,
    beside: Callable[[AsyncCrawlerProcess, Worker], None] | None = None,
) -> int:
    """Consume until stopped (or, with ``burst``, until the crawl is complete).
    ``redis``: the process's client, if it already has one. ``beside``: adds another
    crawler to the same process before it starts (the producer spider, for
    ``produce --consume``)."""
    from consumer.spider import PageSpider  # noqa: PLC0415 - imports Scrapy machinery

    assert config.redis, "the CLI resolves an embedded Redis before starting a consumer"
    process = AsyncCrawlerProcess(consumer_settings(config))
    # The process's one client: scrapy-redis builds it from REDIS_URL / REDIS_PARAMS.
    worker = Worker(redis or get_redis_from_settings(process.settings), config)
    if beside:
        beside(process, worker)
    crawler = process.create_crawler(PageSpider)
    signals_seen = 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal signals_seen
        from twisted.internet import reactor  # noqa: PLC0415

        signals_seen += 1
        if signals_seen == 1:
            reactor.callFromThread(worker.request_stop)  # type: ignore[attr-defined]
        else:
            log.warning("second signal: stopping now, releasing in-flight pages")
            reactor.callFromThread(crawler.stop)  # type: ignore[attr-defined]

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    process.crawl(crawler, worker=worker)
    # Everything imported and built so far (Scrapy, Twisted, lxml, redis-py: ~1/2 million
    # objects) lives as long as the process: moved out of the collector's generations, it is
    # no longer rescanned by every full collection (~0.1 s of a CPython-docs crawl).
    gc.freeze()
    process.start(install_signal_handlers=False)
    if worker.fatal:
        log.error("consumer stopped by an unexpected error: %s", worker.fatal)
        return 1
    return 0
