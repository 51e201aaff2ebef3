"""robots.txt, fetched once per host for the whole fleet.

Scrapy's ``RobotsTxtMiddleware`` fetches robots.txt once per process; with N consumers
that is N fetches per host. This subclass keeps its parsing and its decisions but gets
the file through Redis: the first consumer that needs it takes a short lock, downloads
it (through the downloader, so the host's permit and delay apply) and stores it for
every consumer (``frontier/hosts.py``, ``ROBOTS_TTL``); the others wait for it there. A
``Crawl-delay`` raises the host's delay for the fleet (``robots_delay_ms``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler

from frontier.hosts import origin_of

log = logging.getLogger("invcrawl.consumer")

ROBOTS_TTL = 3600  # seconds a fetched robots.txt is shared before it is fetched again
LOCK_MS = 30_000  # a fetcher that dies holds the others back at most this long


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._expires: dict[str, float] = {}

    async def robot_parser(self, request: Request) -> Any:
        origin = origin_of(request.url)
        gate = getattr(self.crawler.spider, "host_gate", None)
        if origin is None or gate is None:  # not http(s), or no Redis to share it through
            return await super().robot_parser(request)
        key = urlparse_cached(request).netloc
        if key in self._parsers and time.monotonic() > self._expires.get(key, 0):
            del self._parsers[key]  # shared copy expired: read it again
        if key not in self._parsers:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._parsers[key] = future  # type: ignore[assignment]
            try:
                parser = await self._shared_parser(origin, gate)
            except Exception as exc:  # Redis or the download failed: obey nothing, as Scrapy
                log.warning("robots.txt of %s unavailable (%s): not obeyed", origin, exc)
                parser = None
            self._parsers[key] = parser
            self._expires[key] = time.monotonic() + ROBOTS_TTL
            future.set_result(parser)
        parser = self._parsers[key]
        if isinstance(parser, asyncio.Future):
            return await parser
        return parser

    async def _shared_parser(self, origin: str, gate: Any) -> Any:
        hosts, redis = gate.hosts, gate.outages.call  # Redis outages are waited out
        doc = await redis(lambda: hosts.robots(origin))
        while doc is None:
            if await redis(lambda: hosts.lock_robots(origin, gate.consumer_id, LOCK_MS)):
                doc = await self._download(origin)
                await redis(lambda d=doc: hosts.store_robots(origin, d, ROBOTS_TTL))
                self._stats.inc_value("invcrawl/robots_fetched")
            else:
                await asyncio.sleep(0.1)
                doc = await redis(lambda: hosts.robots(origin))
        if doc.get("body") is None:
            return None
        parser = build_from_crawler(self._parserimpl, self.crawler, doc["body"].encode())
        delay = _crawl_delay(parser, self._robotstxt_useragent or self._default_useragent)
        if delay:
            await redis(lambda: hosts.set_robots_delay(origin, int(delay * 1000)))
        return parser

    async def _download(self, origin: str) -> dict[str, Any]:
        request = Request(
            f"{origin}/robots.txt",
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True},
            callback=NO_CALLBACK,
        )
        try:
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:
            log.info("robots.txt of %s could not be fetched (%s): not obeyed", origin, exc)
            return {"status": None, "body": None, "error": str(exc)[:300], "at": time.time()}
        body = response.body.decode("utf-8", "replace") if response.status == 200 else ""
        return {"status": response.status, "body": body, "at": time.time()}


def _crawl_delay(parser: Any, useragent: str | bytes) -> float | None:
    """Crawl-delay for our user agent, from Protego (Scrapy's default parser)."""
    protego = getattr(parser, "rp", None)
    if protego is None or not hasattr(protego, "crawl_delay"):
        return None
    agent = useragent.decode() if isinstance(useragent, bytes) else useragent
    delay = protego.crawl_delay(agent)
    return float(delay) if delay else None
