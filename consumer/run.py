"""Process entry of ``invcrawl consume``: the process's one Redis client, its
:class:`~invcrawl.consumer.worker.Worker`, and one Scrapy crawler whose spider turns the worker's
claims into requests and whose item pipeline hands every page's outcome back to
``Worker.settle`` (the worker's host gate and settle step reach them through the
settings: ``fetch/shared.py``); graceful SIGTERM (finish or release in-flight pages; the command
then exits 143, or 130 for SIGINT), a second signal forces the stop."""

from __future__ import annotations

import gc
import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

from scrapy import signals
from scrapy.crawler import AsyncCrawlerProcess
from scrapy.settings import Settings
from scrapy_redis.connection import get_redis_from_settings

from invcrawl.common.bounds import SizeLimits
from invcrawl.common.listen import metrics_token
from invcrawl.common.search import semantic
from invcrawl.common.settings.config import Config
from invcrawl.consumer.crawls import Serving
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.metrics import Metrics, PrometheusMetrics
from invcrawl.consumer.settings import consumer_settings
from invcrawl.consumer.settling import PageBackoff
from invcrawl.consumer.slots import SlotPinning
from invcrawl.consumer.spider import PageBounds, PageSpider
from invcrawl.consumer.worker import Upstream, Worker, WorkerSettings
from invcrawl.frontier.connection import connect, packed_in_c, scrapy_redis_settings
from invcrawl.frontier.retry import new_stat_sink
from invcrawl.frontier.session import Frontier
from invcrawl.process import interrupts

log = logging.getLogger("invcrawl.consumer")


def serve_metrics(config: Config) -> Metrics | None:
    """``--metrics-port``: Prometheus metrics served from a thread of this process
    (consumer/metrics.py); raises MetricsError when the port cannot be had."""
    if config.metrics_port is None:
        return None
    metrics = PrometheusMetrics()
    address, port = metrics.serve(config.bind, config.metrics_port, metrics_token(config))
    shown = f"[{address}]" if ":" in address else address
    if not config.quiet:
        print(f"invcrawl consume: metrics at http://{shown}:{port}/metrics", file=sys.stderr)
    return metrics


def run_consumer(config: Config, upstream: Upstream | None = None) -> int:
    """Consume until stopped (or, with ``burst``, until there is nothing left to serve).
    ``upstream``: a producer of this process's making (``produce --consume``) whose crawl
    is not complete before it is done."""
    assert config.redis, "the CLI resolves an embedded Redis before starting a consumer"
    preload_search_model()
    # A stop signal while the consumer is built is recorded, not raised: a
    # KeyboardInterrupt inside Scrapy's and Twisted's set-up can be caught on the way (a
    # Deferred's callback catches everything), and the consumer then served on as if no
    # signal had come. It stops as soon as its handlers below stand.
    with interrupts.recorded(interrupts.STOP_SIGNALS):
        metrics = serve_metrics(config)
        worker = Worker(
            Frontier(redis_client(config)),
            worker_settings(config),
            stat=new_stat_sink(lambda: crawler.stats),
            upstream=upstream,
            metrics=metrics,
        )
        process = AsyncCrawlerProcess(consumer_settings(config, worker.hosts, worker))
        crawler = process.create_crawler(PageSpider)
    # Whatever ends the crawl: release what is still held, deregister, stop beating.
    crawler.signals.connect(worker.close, signal=signals.spider_closed)
    signals_seen = 0

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal signals_seen
        from twisted.internet import reactor  # noqa: PLC0415 - the process installed it

        interrupts.record(signum)  # the exit code says which (130, 143)
        signals_seen += 1
        if signals_seen == 1:
            reactor.callFromThread(worker.request_stop)
        else:
            log.warning("second signal: stopping now, releasing in-flight pages")
            reactor.callFromThread(crawler.stop)

    for signum in interrupts.honoured(interrupts.STOP_SIGNALS):
        signal.signal(signum, on_signal)
    if interrupts.first() is not None:  # stopped while it was built: claims nothing
        signals_seen = 1
        worker.request_stop()
    process.crawl(crawler, pages=worker, bounds=page_bounds(config))
    # Everything imported and built so far (Scrapy, Twisted, lxml, redis-py) lives as long
    # as the process: moved out of the collector's generations, it is no longer rescanned
    # by every full collection (docs/performance.md, "Figures behind the code's choices").
    gc.freeze()
    process.start(install_signal_handlers=False)
    if worker.fatal:
        log.error("consumer stopped by an unexpected error: %s", worker.fatal)
        return 1
    return 0


def preload_search_model() -> None:
    """Load the search index's model (``semantic.load``: numpy and the static table,
    ~0.25 CPU-s) in a thread while the consumer starts and its first pages download, not
    at the first commit: there the reactor waited for it, with every page in flight
    (docs/performance.md). A commit that comes first waits for the load, as before."""
    threading.Thread(target=semantic.load, name="invcrawl-model-load", daemon=True).start()


def worker_settings(config: Config) -> WorkerSettings:
    """The worker's settings, and its components', from the process's Config (the one
    place of the consumer that reads it: the components below see only their own)."""
    return WorkerSettings(
        concurrency=config.concurrency,
        host_concurrency=config.host_concurrency,
        host_delay=config.host_delay,
        leases=Leases(config.lease, config.task_deadline),
        backoff=PageBackoff(config.backoff_base, config.backoff_max),
        serving=Serving(
            crawl_ids=config.crawl_ids,
            slots=SlotPinning(config.consumer_slots, config.partition),
            burst=config.burst,
            max_tries=config.max_tries,
        ),
    )


def page_bounds(config: Config) -> PageBounds:
    return PageBounds(
        config.extract_budget,
        SizeLimits(config.max_doc_chars, int(config.max_item_mb * 1024 * 1024)),
    )


def redis_client(config: Config) -> Any:
    """The process's one Redis client: scrapy-redis builds it from REDIS_URL/REDIS_PARAMS
    (a cluster client, which scrapy-redis cannot build, comes from frontier/connection)."""
    if config.redis_cluster:
        return connect(config.redis or "", cluster=True)
    return packed_in_c(get_redis_from_settings(Settings(scrapy_redis_settings(config.redis))))
