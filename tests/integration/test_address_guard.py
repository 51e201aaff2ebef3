"""The consumer's Scrapy settings really install the guarded resolver: a request whose
host resolves to loopback, from a consumer that was not told the site is there, is
refused with a reason (the page would be dead-lettered with it, never retried)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.cli import REPO, run
from support.crawl import build_site
from support.httpserver import serve

pytestmark = pytest.mark.e2e

PROGRAM = """
import sys
from scrapy import Request, Spider
from scrapy.crawler import AsyncCrawlerProcess
from invcrawl.common.settings.config import load_config
from invcrawl.consumer.settings import consumer_settings

URL = sys.argv[1]
seen = []

class Probe(Spider):
    name = "probe"
    async def start(self):
        yield Request(URL, callback=self.ok, errback=self.failed, dont_filter=True)
    def ok(self, response):
        seen.append(f"fetched {response.status}")
    def failed(self, failure):
        seen.append(f"refused: {failure.value}")

settings = consumer_settings(load_config({"redis": "redis://127.0.0.1:1/0"}, {}))
# only the guard (the robots.txt middleware would fetch the site's robots.txt first)
settings["DOWNLOADER_MIDDLEWARES"] = {
    "invcrawl.fetch.addresses.AddressGuardMiddleware": 50,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
}
settings.update(ROBOTSTXT_OBEY=False, ITEM_PIPELINES={}, LOG_LEVEL="ERROR")
process = AsyncCrawlerProcess(settings)
process.crawl(Probe)
process.start()
print(seen)
"""


def test_the_guarded_resolver_is_installed(tmp_path: Path) -> None:
    root = build_site(tmp_path / "site", pages=1, extras=False).root
    with serve(root) as server:
        url = server.url.replace("127.0.0.1", "localhost") + "objects.inv"
        result = run([sys.executable, "-c", PROGRAM, url], cwd=REPO, timeout=60)
    assert "localhost resolves to a loopback address (127.0.0.1): refused" in result.stdout, (
        result.stdout + result.stderr
    )
