"""The peer of ``bench/crawl.py`` and ``bench/fleet.py``: the same job as an invcrawl crawl,
built the way a Scrapy user builds a distributed crawl with scrapy-redis.

    python -m bench.scrapy_redis_peer crawl http://127.0.0.1:8000/ --redis redis://127.0.0.1:6390/0 \\
        --processes 2 -o out.jsonl
    python -m bench.scrapy_redis_peer crawl URL1 URL2 ... --redis URL -o out.jsonl   # many sites

The ``crawl`` command is the job's driver (it plays the part of invcrawl's producer and
crawl supervisor):

1. starts ``--processes`` spider processes (``spider`` command, below);
2. **feeds** them: fetches each site's ``objects.inv`` (``urllib``), plans it with the
   project's ``invcrawl.common.inventory`` + ``invcrawl.common.plan`` and groups entries by page with the
   producer's own ``tasks_from_plan``; every page to fetch becomes one JSON message
   ``{"url", "meta": {"task", "crawl"}}`` pushed to the spider's start-URL list
   (``peer:start_urls``: scrapy-redis's ``RedisSpider`` convention); pages never fetched
   (``skipped``/``offsite``) have their items pushed at once; then it sets ``peer:fed``;
3. waits for the spiders, then copies the item list into ``-o`` (one JSON line per item,
   written as stored: nothing decoded) and prints one JSON line of counters.

Each spider process is a ``scrapy_redis.spiders.RedisSpider`` on scrapy-redis's own
components, configured as its README says for a shared crawl:

* ``SCHEDULER = scrapy_redis.scheduler.Scheduler`` (requests pickled into one sorted set,
  ``peer:requests``, shared by every process), ``DUPEFILTER_CLASS =
  scrapy_redis.dupefilter.RFPDupeFilter`` (a request fingerprint ``SADD``-ed into
  ``peer:dupefilter``: pages are not filtered out with ``dont_filter``), and
  ``SCHEDULER_PERSIST = True`` (without it the first process to close deletes the queue
  the others still read);
* the spider reads start messages in batches of ``CONCURRENT_REQUESTS`` (RedisSpider's
  default) at start and whenever it is idle; each page is fetched and extracted exactly as
  the single-process spider does (``baseline_spider.page_items``: ``extract_page`` +
  ``build_item``);
* ``scrapy_redis.pipelines.RedisPipeline`` (its thread per item, as it does), with
  ``REDIS_ITEMS_SERIALIZER = orjson.dumps``, pushes a page's items with **one** ``RPUSH``
  of one element per item (the spider hands Scrapy one item per page, as the consumer and
  the baseline spider do).

The Scrapy settings are the consumer's and the baseline's (``invcrawl.consumer.run.consumer_settings``:
concurrency per process and per domain, robots.txt, no Scrapy retries, timeouts, size
limits), with the Redis client scrapy-redis builds from ``REDIS_URL`` and its own defaults.

What the peer does not have, and invcrawl does: leases (a spider killed mid-page loses the
pages it popped), fencing, deduplication of items by key and checksum, retries in Redis,
fleet-wide host limits, refresh, progress. Its one concession to a benchmark: a spider
closes as soon as it is idle with nothing left to start (``RedisSpider`` otherwise stays
open forever, or ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds checked on Scrapy's 5 s heartbeat).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
import warnings
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import redis

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.items import CrawlInfo, status_items
from invcrawl.common.plan import Plan, plan_crawl
from invcrawl.common.site import crawl_id_for, inventory_url, local_fetch_url
from invcrawl.common.tasks import Task, decode_task, encode_task

NAME = "peer"  # the spider's name: scrapy-redis names every key after it
START_KEY = f"{NAME}:start_urls"  # REDIS_START_URLS_KEY's default, "%(name)s:start_urls"
ITEMS_KEY = f"{NAME}:items"  # REDIS_ITEMS_KEY's default, "%(spider)s:items"
QUEUE_KEY = f"{NAME}:requests"  # SCHEDULER_QUEUE_KEY's default
FED_KEY = f"{NAME}:fed"  # set by the driver once every start message is pushed
EXPORT_CHUNK = 2000


def argv(
    sites: list[str], redis_url: str, output: Path, *, processes: int, concurrency: int
) -> list[str]:
    """The command line of one peer crawl (for the benchmark harnesses)."""
    return [
        sys.executable, "-m", "bench.scrapy_redis_peer", "crawl", *sites, "--redis", redis_url,
        "--processes", str(processes), "--concurrency", str(concurrency), "-o", str(output),
    ]  # fmt: skip


# -- the driver: feed, wait, export ----------------------------------------------------------


def page_tasks(plan: Plan) -> list[Task]:
    """One task per page: ``invcrawl.producer.enqueue.tasks_from_plan``, repeated here because that
    module imports Scrapy (0.7 s of start-up the driver, a plain script, does not need)."""
    tasks = []
    for page in plan.pages:
        fetch_url = local_fetch_url(page.fetch_url)
        entries = tuple(page.targets)
        tasks.append(
            Task(page.task_id, page.page_url, entries, page.status, page.reason,
                 fetch_url if fetch_url != page.page_url else None)
        )  # fmt: skip
    return tasks


def feed(client: redis.Redis, sites: list[str]) -> dict[str, int]:
    """Plan every site and push its pages as start messages; returns counters."""
    counts: Counter[str] = Counter()
    for site in sites:
        with urllib.request.urlopen(inventory_url(site), timeout=60) as response:
            data, final_url = response.read(), response.geturl()
        inventory = parse_inventory(data)
        plan = plan_crawl(inventory, final_url)
        crawl = [crawl_id_for(site), inventory.project, inventory.version]
        info = CrawlInfo(*crawl)
        starts: list[bytes] = []
        done: list[bytes] = []
        for task in page_tasks(plan):
            counts["pages"] += 1
            counts["entries"] += len(task.entries)
            if task.status == "fetch":
                meta = {"task": encode_task(task), "crawl": crawl}
                starts.append(orjson.dumps({"url": task.download_url, "meta": meta}))
            else:
                done += [
                    orjson.dumps(i) for i in status_items(info, task, task.status, task.reason)
                ]
        with client.pipeline(transaction=False) as pipe:
            if done:
                pipe.rpush(ITEMS_KEY, *done)
            if starts:
                pipe.rpush(START_KEY, *starts)
            pipe.execute()
        counts["fetch_pages"] += len(starts)
        counts["sites"] += 1
    client.set(FED_KEY, 1)
    return dict(counts)


def export(client: redis.Redis, output: Path) -> int:
    """Copy the item list into ``output`` as it is stored (JSON, one item per element)."""
    written = 0
    with open(output, "wb") as out:
        while True:
            chunk = client.lrange(ITEMS_KEY, written, written + EXPORT_CHUNK - 1)
            if not chunk:
                return written
            out.write(b"\n".join(chunk) + b"\n")
            written += len(chunk)


def run_crawl(args: argparse.Namespace) -> int:
    client = redis.Redis.from_url(args.redis)
    hosts = sorted({urlsplit(s).hostname or "" for s in args.sites} - {""})
    spider_argv = [sys.executable, "-m", "bench.scrapy_redis_peer", "spider", "--redis", args.redis]
    spider_argv += ["--concurrency", str(args.concurrency)]
    for host in hosts:
        spider_argv += ["--allow-host", host]
    started = time.monotonic()
    # The spiders start up (Python, Scrapy) while the driver plans: they wait for FED_KEY.
    spiders = [subprocess.Popen(spider_argv, stdout=subprocess.PIPE) for _ in range(args.processes)]
    try:
        counts = feed(client, args.sites)
    except Exception as exc:
        client.set(FED_KEY, 1)  # release the spiders: they find nothing and close
        print(f"scrapy-redis peer: feeding failed: {exc}", file=sys.stderr)
        for proc in spiders:
            proc.wait()
        return 1
    stats = []
    for proc in spiders:
        out, _ = proc.communicate()
        stats.append({"code": proc.returncode, **_last_json(out)})
    written = export(client, args.output)
    client.close()
    result = {
        **counts,
        "items": written,
        "spiders": stats,
        "seconds": round(time.monotonic() - started, 3),
    }
    print(json.dumps(result, sort_keys=True), flush=True)
    return 1 if any(s["code"] != 0 or s.get("failed") for s in stats) else 0


def _last_json(out: bytes) -> dict[str, Any]:
    for line in reversed(out.decode(errors="replace").splitlines()):
        if line.startswith("{"):
            try:
                return dict(json.loads(line))
            except ValueError:
                break
    return {}


# -- the spider process ----------------------------------------------------------------------


def run_spider(args: argparse.Namespace) -> int:
    # Scrapy is imported here only: the driver stays a small process.
    from scrapy import Request
    from scrapy.crawler import AsyncCrawlerProcess
    from scrapy.exceptions import DontCloseSpider, ScrapyDeprecationWarning
    from scrapy.http import Response
    from scrapy_redis.pipelines import RedisPipeline
    from scrapy_redis.spiders import RedisSpider
    from twisted.python.failure import Failure

    from bench.baseline_spider import PageItems, page_items
    from invcrawl.common.settings.config import load_config
    from invcrawl.consumer.run import consumer_settings

    class PagePipeline(RedisPipeline):
        """scrapy-redis's pipeline, pushing a page's items in one ``RPUSH``."""

        def _process_item(self, item: Any, spider: Any) -> Any:
            self.server.rpush(self.item_key(item, spider), *map(self.serialize, item["items"]))
            return item

    class PeerSpider(RedisSpider):
        name = NAME

        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            self.counts: Counter[str] = Counter()
            self.max_page_bytes = 64 * 1024 * 1024

        async def start(self) -> AsyncIterator[Any]:
            # The driver may still be planning: its start messages are not all pushed yet.
            while not self.server.exists(FED_KEY):
                await asyncio.sleep(0.01)
            for request in self.next_requests():
                yield request

        def make_request_from_data(self, data: bytes) -> Request:
            doc = orjson.loads(data)
            meta = {**doc["meta"], "handle_httpstatus_all": True, "dont_retry": True}
            return Request(
                doc["url"], callback=self.parse_page, errback=self.page_failed, meta=meta
            )

        def spider_idle(self) -> None:
            """Start the next batch; with none left (the driver fed everything before the
            first batch was read), close: pages still in flight are other processes'."""
            found = False
            self.counts["idle"] += 1  # one per batch read: the spider drained before each
            for request in self.next_requests():
                self.crawler.engine.crawl(request)
                found = True
            if found:
                raise DontCloseSpider
            if self.server.zcard(QUEUE_KEY):  # another process's batch, not popped yet
                self.counts["idle_waits"] += 1
                raise DontCloseSpider

        def parse_page(self, response: Response) -> Iterator[PageItems]:
            task = decode_task(response.meta["task"])
            crawl = CrawlInfo(*response.meta["crawl"])
            self.counts["fetched"] += 1
            items = page_items(crawl, task, response, self.max_page_bytes)
            if items is None:
                self.counts["failed"] += 1
                return
            self.counts["items"] += len(items)
            yield PageItems(items=items)

        def page_failed(self, failure: Failure) -> None:
            self.counts["failed"] += 1
            self.logger.warning("failed: %s", failure.value)

    # scrapy-redis 0.9.1 predates Scrapy 2.13's API: four deprecation warnings per process
    warnings.filterwarnings("ignore", category=ScrapyDeprecationWarning)
    config = load_config({"concurrency": args.concurrency, "allow_hosts": tuple(args.allow_host)})
    settings = consumer_settings(config)
    settings.pop("REDIS_PARAMS", None)  # invcrawl's asyncio client: scrapy-redis's own instead
    settings.update(
        {
            "REDIS_URL": args.redis,
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_PERSIST": True,
            "ITEM_PIPELINES": {PagePipeline: 300},
            "REDIS_ITEMS_SERIALIZER": "orjson.dumps",
        }
    )
    process = AsyncCrawlerProcess(settings)
    crawler = process.create_crawler(PeerSpider)
    process.crawl(crawler)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, PeerSpider)
    print(json.dumps(dict(spider.counts), sort_keys=True), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    crawl = commands.add_parser("crawl", help="feed, run the spiders, export")
    crawl.add_argument("sites", nargs="+", help="docs base URLs (or objects.inv URLs)")
    crawl.add_argument("--redis", required=True, help="redis://... (a fresh server)")
    crawl.add_argument("--processes", type=int, default=1)
    crawl.add_argument("--concurrency", type=int, default=8, help="pages in flight per process")
    crawl.add_argument("-o", "--output", type=Path, default=Path("peer.jsonl"))
    spider = commands.add_parser("spider", help="one spider process (started by crawl)")
    spider.add_argument("--redis", required=True)
    spider.add_argument("--concurrency", type=int, default=8)
    spider.add_argument("--allow-host", action="append", default=[])
    args = parser.parse_args(argv)
    if args.command == "crawl":
        return run_crawl(args)
    return run_spider(args)


if __name__ == "__main__":
    sys.exit(main())
