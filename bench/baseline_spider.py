"""Baseline (a) of ``bench/crawl.py`` and ``bench/fleet.py``: a plain single-process
Scrapy spider doing the same work as an invcrawl crawl, without Redis.

    python -m bench.baseline_spider http://127.0.0.1:8000/ -o out.jsonl
    python -m bench.baseline_spider URL1 URL2 ... -o out.jsonl   # one site after another

It reads ``objects.inv`` through Scrapy (as the producer does), plans the crawl with
``invcrawl.common.inventory.parse_inventory`` + ``invcrawl.common.plan.plan_crawl`` and groups entries by
page with the producer's own ``tasks_from_plan``, fetches every page once and runs the
project's extraction exactly as the consumer spider does (``invcrawl.common.extract.extract_page``
+ ``invcrawl.common.items.build_item``, gzip bodies inflated, links re-based on the page URL),
and writes one JSON line per item as the export writes it (orjson of the item; the
consumer also compresses it for Redis, ``common/codec.py``, a cost the spider does not
pay).

Fairness (see docs/performance.md): the Scrapy settings are the consumer's own
(``invcrawl.consumer.settings.consumer_settings``: concurrency 8 per process and per domain, robots.txt
obeyed, no Scrapy retries, same timeouts and size limits), and, like the consumer, the
spider hands Scrapy **one item per page** (the page's item list) so that neither side
pays Scrapy's per-item signal/pipeline overhead 15,000 times. The only work it skips is
what distribution adds: claiming, leases, heartbeats, the Lua commit into Redis, the
separate producer and export processes.

On exit it prints one JSON line of counters on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import orjson
from scrapy import Request, Spider, signals
from scrapy.crawler import AsyncCrawlerProcess
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from twisted.python.failure import Failure

from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.items import CrawlInfo, build_item, status_items
from invcrawl.common.plan import plan_crawl
from invcrawl.common.settings.config import load_config
from invcrawl.common.site import inventory_url
from invcrawl.common.tasks import Task
from invcrawl.consumer.settings import consumer_settings
from invcrawl.consumer.spider import inflate_gzip
from invcrawl.producer.enqueue import tasks_from_plan

TASK = "baseline_task"


class PageItems(dict):  # type: ignore[type-arg]
    """One page's items, handed to Scrapy as a single item (as the consumer does)."""


def page_items(
    crawl: CrawlInfo, task: Task, response: Response, max_page_bytes: int
) -> list[dict[str, Any]] | None:
    """A fetched page's items, extracted as the consumer spider does (one parse per page);
    None when the page failed (a status other than 200 and 404). Shared with the
    scrapy-redis peer (``bench/scrapy_redis_peer.py``): the same extraction on every side."""
    if response.status == 404:
        return status_items(crawl, task, "page_not_found", "HTTP 404")
    if response.status != 200:
        return None
    targets = task.entries
    encoding = getattr(response, "encoding", None)
    body = inflate_gzip(response.body, max_page_bytes)
    base = task.url if response.url == task.download_url else response.url
    contents = extract_page(body, base, targets, encoding=encoding)
    return [
        build_item(crawl, task, entry, content)
        for entry, content in zip(task.entries, contents, strict=True)
    ]


class BaselineSpider(Spider):
    name = "invcrawl-baseline"

    def __init__(self, inventory_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pending = list(inventory_urls)  # sites not started yet: one after another
        self.crawl: CrawlInfo | None = None
        self.counts: Counter[str] = Counter()
        self.statuses: dict[str, int] = {}
        self.max_page_bytes = 64 * 1024 * 1024

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BaselineSpider:
        spider: BaselineSpider = super().from_crawler(crawler, *args, **kwargs)
        spider.max_page_bytes = crawler.settings.getint("DOWNLOAD_MAXSIZE") or spider.max_page_bytes
        crawler.signals.connect(spider.next_site, signal=signals.spider_idle)
        return spider

    def inventory_request(self) -> Request:
        return Request(self.pending.pop(0), callback=self.parse_inventory, dont_filter=True)

    async def start(self) -> AsyncIterator[Any]:
        yield self.inventory_request()

    def next_site(self) -> None:
        """The current site is done (Scrapy is idle): start the next one, if any."""
        if self.pending:
            self.crawler.engine.crawl(self.inventory_request())
            raise DontCloseSpider

    def parse_inventory(self, response: Response) -> list[Any]:
        inventory = parse_inventory(response.body)
        plan = plan_crawl(inventory, response.url)
        self.crawl = CrawlInfo("baseline", inventory.project, inventory.version)
        self.counts["entries"] += plan.entries
        self.counts["sites"] += 1
        out: list[Any] = []
        for task in tasks_from_plan(plan):
            self.counts["pages"] += 1
            if task.status != "fetch":
                out.append(
                    PageItems(items=status_items(self.crawl, task, task.status, task.reason))
                )
                continue
            out.append(
                Request(
                    task.download_url,
                    callback=self.parse_page,
                    errback=self.page_failed,
                    dont_filter=True,
                    meta={TASK: task, "handle_httpstatus_all": True, "dont_retry": True},
                )
            )
        return out

    def parse_page(self, response: Response) -> list[PageItems]:
        task: Task = response.meta[TASK]
        assert self.crawl
        self.counts["fetched"] += 1
        items = page_items(self.crawl, task, response, self.max_page_bytes)
        if items is None:
            self.counts["failed"] += 1
            return []
        return [PageItems(items=items)]

    def page_failed(self, failure: Failure) -> None:
        self.counts["failed"] += 1
        self.logger.warning("failed: %s", failure.value)


class JsonLinesPipeline:
    """Writes every item of a page as one JSON line, serialised by ``prepare`` exactly as the
    consumer's settle step does (so a faster serialiser speeds both sides up)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.path = Path(crawler.settings.get("BASELINE_OUTPUT") or "baseline.jsonl")
        self.out: IO[str] | None = None
        self.statuses: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Any) -> JsonLinesPipeline:
        return cls(crawler)

    def open_spider(self, spider: Spider | None = None) -> None:
        self.out = open(self.path, "w", encoding="utf-8")  # noqa: SIM115

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.out:
            self.out.close()
        target = self.crawler.spider
        if isinstance(target, BaselineSpider):
            target.statuses = dict(self.statuses)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        assert self.out is not None
        write = self.out.write
        for data in item["items"]:
            self.statuses[data["status"]] += 1
            write(orjson.dumps(data).decode("utf-8") + "\n")
        return item


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sites", nargs="+", help="docs base URLs (or objects.inv URLs)")
    parser.add_argument("-o", "--output", type=Path, default=Path("baseline.jsonl"))
    parser.add_argument(
        "--concurrency", type=int, default=None, help="pages in flight (default: the consumer's, 8)"
    )
    args = parser.parse_args(argv)
    # The sites are the user's own choice, as for ``invcrawl crawl``: their hosts pass
    # the address guard (fetch/addresses.py) even on loopback.
    hosts = tuple(sorted({urlsplit(site).hostname or "" for site in args.sites} - {""}))
    config = load_config({"concurrency": args.concurrency, "allow_hosts": hosts})
    settings = consumer_settings(config)
    settings.pop("REDIS_URL", None)
    settings["ITEM_PIPELINES"] = {JsonLinesPipeline: 100}
    settings["BASELINE_OUTPUT"] = str(args.output)
    started = time.monotonic()
    process = AsyncCrawlerProcess(settings)
    crawler = process.create_crawler(BaselineSpider)
    process.crawl(crawler, inventory_urls=[inventory_url(site) for site in args.sites])
    process.start()
    spider = crawler.spider
    assert isinstance(spider, BaselineSpider)
    result: dict[str, Any] = dict(spider.counts)
    result["statuses"] = spider.statuses
    result["items"] = sum(spider.statuses.values())
    result["seconds"] = round(time.monotonic() - started, 3)
    print(json.dumps(result, sort_keys=True), flush=True)
    return 1 if spider.counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
