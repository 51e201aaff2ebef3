"""The producer spider closed while one of its inventories is still being planned and
enqueued (Scrapy's engine saw it idle: seen under heavy load) waits for that job instead
of failing it: a job failed after its pages were enqueued leaves a crawl that every
consumer finishes and none can complete."""

from __future__ import annotations

import asyncio
import zlib

from scrapy.http import Response

from invcrawl.producer.spider import Fetched, InventoryJob, InventorySpider

INVENTORY = (
    b"# Sphinx inventory version 2\n# Project: p\n# Version: 1\n"
    b"# The remainder of this file is compressed using zlib.\n"
    + zlib.compress(b"m.f py:function 1 api.html#$ -\n")
)


class SlowSink:
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        self.errors: list[str] = []
        self.fetched: list[Fetched] = []

    async def conditional_headers(self) -> dict[str, str]:
        return {}

    async def stored_inventory(self) -> bytes | None:
        return None

    async def __call__(self, fetched: Fetched) -> None:
        self.entered.set()
        await self.release.wait()  # enqueueing, slowly
        self.fetched.append(fetched)

    async def failed(self, error: str) -> None:
        self.errors.append(error)


def test_closing_waits_for_a_job_being_enqueued() -> None:
    async def scenario() -> SlowSink:
        sink = SlowSink()
        job = InventoryJob("http://docs.example.org/objects.inv", sink)
        spider = InventorySpider([job], max_inflated=1 << 20)
        response = Response(job.url, status=200, body=INVENTORY)
        parsing = asyncio.ensure_future(spider.parse_inventory(response, job))
        await sink.entered.wait()
        closing = asyncio.ensure_future(spider._closed(spider, "finished"))
        await asyncio.sleep(0.05)
        assert not closing.done()  # it waits for the job
        sink.release.set()
        await parsing
        await closing
        return sink

    sink = asyncio.run(scenario())
    assert sink.errors == [] and len(sink.fetched) == 1
