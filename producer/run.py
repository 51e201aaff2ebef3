"""Process entry of ``invcrawl produce`` (and of ``invcrawl inventory``, with a
printing sink instead of Redis). :class:`ForkedProducer` runs it in a forked child of a
consumer process (``produce --consume``, the first process of ``invcrawl crawl``), which
saves a whole interpreter and Scrapy start-up."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading

from scrapy.crawler import AsyncCrawlerProcess

from common.config import Config
from common.crawler_settings import base_settings
from producer.spider import Fetched, InventorySpider, Sink

log = logging.getLogger("invcrawl.producer")


def quiet_download_errors() -> None:
    """The spider reports a failed inventory download in one line of its own; Scrapy's
    retry and robots.txt middlewares would also log it at ERROR with tracebacks."""
    for name in ("scrapy.downloadermiddlewares.retry", "scrapy.downloadermiddlewares.robotstxt"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def fetch_inventory(config: Config, inventory_url: str, sink: Sink) -> str | None:
    """Run the producer spider once; returns an error line, or None on success."""
    process = AsyncCrawlerProcess(base_settings(config))
    quiet_download_errors()  # after the process, which configures logging
    crawler = process.create_crawler(InventorySpider)
    process.crawl(
        crawler,
        inventory_url=inventory_url,
        sink=sink,
        max_inflated=config.max_inflated_mb * 1024 * 1024,
    )
    process.start()
    spider = crawler.spider
    if not isinstance(spider, InventorySpider):  # never opened (Scrapy failed to start)
        return f"the inventory at {inventory_url} could not be processed (see the log above)"
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


class ForkedProducer:
    """The producer spider in a forked child of this process.

    Fork it after Scrapy is imported but before this process installs a reactor, opens a
    Redis connection or starts a thread. The child then starts with every module loaded
    (no second interpreter and Scrapy start-up, ~0.5 CPU-s) but has its own memory. The
    inventory, the plan and the encoded tasks peak at ~1 KB per entry (300 MB for 250,000
    entries) and are freed when the child exits, so the consumer's peak RSS does not grow
    with the site. Running it in the consumer's own process would keep that peak.

    The child writes its one-line error, if any, to a pipe and leaves with ``os._exit``:
    it must not unwind the parent's stack, which may hold an embedded Redis server it
    would otherwise stop.
    """

    def __init__(self, config: Config, inventory_url: str, sink: Sink) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read)
            _produce_and_exit(config, inventory_url, sink, write)
        os.close(write)
        self.pid = pid
        self._read = read
        self.inventory_url = inventory_url
        self.exited = False
        self.stopped = False
        self._reaping = threading.Lock()  # no kill between the reap and ``exited``

    def wait(self) -> str | None:
        """Block until the child has exited: its error line, or None on success."""
        chunks = []
        while chunk := os.read(self._read, 65536):
            chunks.append(chunk)
        os.close(self._read)
        # The pipe closed: the child is exiting, so this wait is short.
        with self._reaping:
            _, status = os.waitpid(self.pid, 0)
            self.exited = True
        error = b"".join(chunks).decode("utf-8", "replace").strip()
        code = os.waitstatus_to_exitcode(status)
        if self.stopped and (error or code != 0):
            return f"stopped before the inventory at {self.inventory_url} was read"
        if error or code == 0:
            return error or None
        how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
        return f"the producer process {how} while reading {self.inventory_url}"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop a still-running child: SIGTERM is Scrapy's graceful stop (it lets the
        inventory download finish), SIGKILL is safe too (producing is idempotent: a
        re-run enqueues what is missing). Only :meth:`wait` reaps the child, so its pid
        cannot have been reused before that."""
        with self._reaping:
            if not self.exited:
                self.stopped = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, sig)


def _produce_and_exit(config: Config, inventory_url: str, sink: Sink, report: int) -> None:
    code = 1
    try:
        # What it is, for anyone looking at the process (a benchmark reads sys.argv).
        sys.argv = [sys.argv[0], "produce", "(forked by produce --consume)"]
        error = fetch_inventory(config, inventory_url, sink)
        if error:
            os.write(report, error.encode("utf-8", "replace"))
        else:
            code = 0
    except BaseException as exc:  # whatever happens: report it and leave
        with contextlib.suppress(OSError):
            os.write(report, f"the producer failed: {exc!r}".encode())
    finally:
        with contextlib.suppress(Exception):
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
