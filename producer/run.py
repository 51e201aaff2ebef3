"""Process entry of ``invcrawl produce`` (and of ``invcrawl inventory``, with a
capturing sink instead of Redis). :class:`ForkedProducer` runs it in a forked child of a
consumer process (``produce --consume``, the first process of ``invcrawl crawl``), which
saves a whole interpreter and Scrapy start-up: :func:`produce_and_consume`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence

from scrapy.crawler import AsyncCrawlerProcess, Crawler

from invcrawl.common.plan import PlanCache
from invcrawl.common.settings.config import Config
from invcrawl.common.site import SiteError, inventory_url
from invcrawl.fetch.politeness import HostGate
from invcrawl.fetch.settings import base_settings
from invcrawl.frontier.connection import connect
from invcrawl.frontier.retry import Outages
from invcrawl.frontier.session import Frontier
from invcrawl.process import interrupts
from invcrawl.producer.enqueue import RedisSink, SinkSettings
from invcrawl.producer.preload import preload
from invcrawl.producer.spider import Fetched, InventoryJob, InventorySpider, Sink

log = logging.getLogger("invcrawl.producer")
# How long the inventory request waits for its host's turn (consumers may hold every
# permit of the host, or a 429 may block it), or for Redis through an outage, before the
# site is reported as failed.
PRODUCER_MAX_WAIT = 120.0


def quiet_download_errors() -> None:
    """The spider reports a failed inventory download in one line of its own; Scrapy's
    retry middleware would also log it at ERROR with a traceback."""
    logging.getLogger("scrapy.downloadermiddlewares.retry").setLevel(logging.CRITICAL)


def fetch_inventories(
    config: Config, jobs: Sequence[InventoryJob], host_gate: HostGate | None = None
) -> list[str | None]:
    """Run the producer spider once over every job; returns each job's error line (None
    on success), in order. ``host_gate``: the fleet's host politeness (with Redis)."""
    process = AsyncCrawlerProcess(base_settings(config, host_gate))
    quiet_download_errors()  # after the process, which configures logging
    crawler = start_inventory_crawl(process, max_inflated(config), jobs)[0]
    record_signals_on_start()
    process.start()
    return job_errors(crawler, jobs)


def record_signals_on_start() -> None:
    """Have the shutdown handlers Scrapy's process installs (after the reactor's start-up)
    record the signal too, so that the command exits 130 or 143 after Scrapy's graceful
    stop (process/interrupts.py). Call it after the process is built, before it starts."""
    from twisted.internet import reactor  # noqa: PLC0415 - the process installed it

    # Start-up triggers run in the order they were added, and the process adds its own
    # when it starts: one turn of the loop later, they are in place.
    reactor.callWhenRunning(reactor.callLater, 0, interrupts.chain)


def start_inventory_crawl(
    process: AsyncCrawlerProcess,
    max_inflated: int,
    jobs: Sequence[InventoryJob],
    plans: PlanCache | None = None,
) -> tuple[Crawler, asyncio.Task[None]]:
    """Schedule one run of the producer spider over ``jobs`` in ``process`` (whose
    settings hold the host gate: ``fetch/settings.py``); ``max_inflated``: bytes."""
    crawler = process.create_crawler(InventorySpider)
    task = process.crawl(crawler, jobs=jobs, max_inflated=max_inflated, plans=plans)
    return crawler, task


def max_inflated(config: Config) -> int:
    """``--max-inflated-mb`` in bytes: the largest inventory inflated."""
    return config.max_inflated_mb * 1024 * 1024


def sink_settings(config: Config) -> SinkSettings:
    """What :class:`RedisSink` reads of the process's Config (the components below the
    runners see only their own settings)."""
    return SinkSettings(
        slots=config.slots,
        max_tries=config.max_tries,
        max_inflated=max_inflated(config),
        project=config.project,
        version=config.version,
        weight=config.weight,
        retain_items=config.retain_items,
        refresh=config.refresh,
        force=config.force,
    )


def job_errors(crawler: Crawler, jobs: Sequence[InventoryJob]) -> list[str | None]:
    """Each job's error line once the spider has run (None: produced)."""
    if not isinstance(crawler.spider, InventorySpider):  # never opened (Scrapy failed)
        return [
            f"the inventory at {job.url} could not be processed (see the log above)" for job in jobs
        ]
    return [
        job.error or (None if job.done else f"the inventory at {job.url} could not be processed")
        for job in jobs
    ]


def fetch_inventory(config: Config, url: str, sink: Sink) -> str | None:
    return fetch_inventories(config, [InventoryJob(url, sink)])[0]


class Capture:
    """A sink that keeps what was fetched (for ``invcrawl inventory``)."""

    def __init__(self) -> None:
        self.fetched: Fetched | None = None

    async def conditional_headers(self) -> dict[str, str]:
        return {}

    async def stored_inventory(self) -> bytes | None:
        return None

    async def __call__(self, fetched: Fetched) -> None:
        self.fetched = fetched

    async def failed(self, error: str) -> None:
        """Nothing to record: ``fetch_inventory`` returns the error line."""


@dataclasses.dataclass(frozen=True, slots=True)
class Produced:
    site: str
    crawl_id: str
    tasks: int = 0  # page tasks of the crawl
    added: int = 0  # of which this run enqueued (a re-run adds only what is missing)
    error: str | None = None  # one line for the user


def produce(config: Config, sites: Sequence[tuple[str, str]]) -> list[Produced]:
    """``invcrawl produce``: read the inventory of every (site, crawl id) and enqueue its
    pages as that crawl, or record in Redis why that failed."""
    frontier, gate = producer_clients(config)
    sinks, jobs = redis_jobs(sink_settings(config), frontier, sites)
    errors = fetch_inventories(config, jobs, gate)
    return produced(sites, sinks, errors)


def producer_clients(config: Config) -> tuple[Frontier, HostGate]:
    """The process's one Redis client, and its side of the fleet's host politeness."""
    assert config.redis
    frontier = Frontier(connect(config.redis, config.redis_cluster))
    # A producer has no pages to hand back: through a Redis outage it waits, but not
    # forever (a forked producer whose Redis is gone would otherwise never exit).
    outages = Outages(lambda name, n: None, lambda: outages.lasting() > PRODUCER_MAX_WAIT)
    gate = HostGate(
        frontier.hosts,
        f"producer-{os.getpid()}",
        limit=config.host_concurrency,
        delay=config.host_delay,
        lease=config.lease,
        outages=outages,
        max_wait=PRODUCER_MAX_WAIT,
        reuse=False,  # one request per host and round: nothing to keep a permit for
    )
    return frontier, gate


def redis_jobs(
    settings: SinkSettings, frontier: Frontier, sites: Sequence[tuple[str, str]]
) -> tuple[list[RedisSink], list[InventoryJob]]:
    """One inventory job per (site, crawl id), each producing into its crawl's keys."""
    sinks = [RedisSink(frontier, crawl_id, settings, site) for site, crawl_id in sites]
    jobs = [_job(site, sink) for (site, _), sink in zip(sites, sinks, strict=True)]
    return sinks, jobs


def produced(
    sites: Sequence[tuple[str, str]], sinks: Sequence[RedisSink], errors: Sequence[str | None]
) -> list[Produced]:
    return [
        Produced(site, crawl_id, sink.tasks, sink.added, error)
        for (site, crawl_id), sink, error in zip(sites, sinks, errors, strict=True)
    ]


def _job(site: str, sink: Sink) -> InventoryJob:
    """A site that names no inventory (a missing directory...) fails alone, recorded in
    Redis like a 404 (the spider skips it); the other sites go on."""
    try:
        return InventoryJob(inventory_url(site), sink)
    except SiteError as exc:
        return InventoryJob(site, sink, error=str(exc))


class ForkedProducer:
    """:func:`produce` in a forked child of this process.

    Fork it after Scrapy is imported but before this process installs a reactor, opens a
    Redis connection or starts a thread. The child then starts with every module loaded
    (no second interpreter and Scrapy start-up, ~0.5 CPU-s) but has its own memory. The
    inventory, the plan and the encoded tasks peak at ~1 KB per entry (300 MB for 250,000
    entries) and are freed when the child exits, so the consumer's peak RSS does not grow
    with the site. Running it in the consumer's own process would keep that peak.

    The child records each site's failure in Redis (the crawl's ``error``, for ``status``
    and the crawl supervisor), writes the same lines to a pipe for this process, and
    leaves with ``os._exit``: it must not unwind the parent's stack, which may hold an
    embedded Redis server it would otherwise stop. The consumer polls it (:meth:`poll`,
    the ``Upstream`` protocol of ``consumer/worker.py``) from its feed loop.
    """

    def __init__(self, config: Config, sites: Sequence[tuple[str, str]]) -> None:
        preload(base_settings(config))  # the crawler's components, for both processes
        read, write = os.pipe()
        # Every object the child inherits goes to the collector's permanent generation
        # for the fork: the child's full collections skip them instead of walking the
        # whole inherited heap (touching, and so copying, every page of it;
        # docs/performance.md, "Figures behind the code's choices").
        gc.freeze()
        try:
            pid = os.fork()
        except BaseException:
            gc.unfreeze()
            raise
        if pid == 0:  # the child
            os.close(read)
            _produce_and_exit(config, sites, write)
        gc.unfreeze()  # (this process collects as it always did)
        os.close(write)
        os.set_blocking(read, False)
        self.pid = pid
        self.site = ", ".join(site for site, _ in sites)
        self._read = read
        self._report = b""
        self.result: tuple[bool, str | None] | None = None
        self.stopped = False

    def poll(self) -> tuple[bool, str | None]:
        """(finished, error line): never blocks."""
        if self.result is not None:
            return self.result
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._read, 65536):
                self._report += chunk
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return False, None
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._read, 65536):
                self._report += chunk
        os.close(self._read)
        self.result = True, self._error(os.waitstatus_to_exitcode(status))
        return self.result

    def _error(self, code: int) -> str | None:
        error = self._report.decode("utf-8", "replace").strip()
        if self.stopped and (error or code != 0):
            return f"stopped before the inventory of {self.site} was read"
        if error or code == 0:
            return error or None
        how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
        return f"the producer process {how} while reading the inventory of {self.site}"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop a still-running child: SIGTERM is Scrapy's graceful stop (it lets the
        inventory download finish), SIGKILL is safe too (producing is idempotent: a
        re-run enqueues what is missing). Only :meth:`poll` reaps the child, so its pid
        cannot have been reused before that."""
        if self.result is None:
            self.stopped = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def wait(self, timeout: float) -> tuple[bool, str | None]:
        deadline = time.monotonic() + timeout
        while not (result := self.poll())[0] and time.monotonic() < deadline:
            time.sleep(0.05)
        return result


def _produce_and_exit(config: Config, sites: Sequence[tuple[str, str]], report: int) -> None:
    code = 1
    try:
        # What it is, for anyone looking at the process (a benchmark reads sys.argv).
        sys.argv = [sys.argv[0], "produce", "(forked by produce --consume)"]
        errors = [p.error for p in produce(config, sites) if p.error]
        if errors:
            os.write(report, "\n".join(errors).encode("utf-8", "replace"))
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


Consume = Callable[[Config, "ForkedProducer"], int]


def produce_and_consume(
    config: Config, sites: Sequence[tuple[str, str]], consume: Consume
) -> tuple[int, str | None]:
    """``produce --consume``: the producer in a forked child (:class:`ForkedProducer`), the
    consumer here (``consume``, the consumer's runner, given by the CLI: the producer does
    not import the consumer), pinned to the crawls and waiting for the child before it
    decides a crawl is complete. Returns the consumer's exit code and the producer's error
    lines (one per site that failed; the other sites are crawled)."""
    producer = ForkedProducer(config, sites)
    pinned = tuple(crawl_id for _, crawl_id in sites)
    try:
        code = consume(dataclasses.replace(config, crawl_ids=pinned, burst=True), producer)
    finally:
        # The consumer stopped (SIGTERM) before the crawl was produced: stop the producer
        # too, within a few seconds, and let its outcome decide the exit code.
        producer.stop()
        if not producer.wait(5)[0]:
            producer.stop(signal.SIGKILL)
            producer.wait(5)
    _, error = producer.poll()
    return code, error
