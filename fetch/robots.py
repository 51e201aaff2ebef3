"""robots.txt, fetched once per host for the whole fleet, bounded like any other input.

Scrapy's ``RobotsTxtMiddleware`` fetches robots.txt once per process; with N consumers
that is N fetches per host. This subclass keeps its parsing and its decisions but gets
the file through Redis: the first consumer that needs it takes a short lock, downloads
it (through the downloader, so the host's permit and delay apply) and stores it for
every consumer (``frontier/hosts.py``, ``ROBOTS_TTL``); the others wait for it there. A
``Crawl-delay`` raises the host's delay for the fleet (``robots_delay_ms``).

What a site controls here is bounded:

* **Redirects** of robots.txt follow the page redirect policy (``fetch/redirects``:
  the host's own origin, http to https on the same host, ``--allow-host``), at most
  ``MAX_REDIRECTS`` hops; a redirect elsewhere (another port of the host, another host)
  is not followed and the host has no robots.txt (Scrapy followed it and obeyed the
  other server's rules).
* **Size**: the first :data:`ROBOTS_MAX_BYTES` are read, up to their last full line,
  the rest ignored (Google's rule and limit): a 7.5 MB file of 200,000 wildcard rules
  cost 23 CPU-s for 3 pages.
* **Time**: parsing runs under ``--extract-budget`` (``fetch/budget``); past it the
  file is treated as unreadable (obeyed as absent), as a failed download is.
* **Crawl-delay**: only a finite positive value counts, capped at ``--max-crawl-delay``
  (default 60 s); the value asked for is recorded beside the cap, for ``status``. An
  absent delay is recorded as 0, so a fixed robots.txt lifts the old one.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any
from urllib.parse import urljoin

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from w3lib.url import safe_url_string

from fetch.budget import ExtractionTimeout, budget
from fetch.redirects import MAX_REDIRECTS, REDIRECT_STATUSES, redirect_allowed
from frontier.hosts import origin_of

log = logging.getLogger("invcrawl.consumer")

ROBOTS_TTL = 3600  # seconds a fetched robots.txt is shared before it is fetched again
LOCK_MS = 30_000  # a fetcher that dies holds the others back at most this long
ROBOTS_MAX_BYTES = 500 * 1024  # Google reads the first 500 KiB and ignores the rest
DEFAULT_MAX_CRAWL_DELAY = 60.0


class SharedRobotsTxtMiddleware(RobotsTxtMiddleware):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._expires: dict[str, float] = {}
        settings = crawler.settings
        self._max_delay = settings.getfloat("INVCRAWL_MAX_CRAWL_DELAY", DEFAULT_MAX_CRAWL_DELAY)
        self._budget = settings.getfloat("INVCRAWL_EXTRACT_BUDGET", 0.0)
        hosts = settings.getlist("INVCRAWL_ALLOW_HOSTS")
        self._allow_hosts = frozenset(h.lower() for h in hosts)

    async def robot_parser(self, request: Request) -> Any:
        origin = origin_of(request.url)
        if origin is None:  # not http(s): nothing of ours to apply
            return await super().robot_parser(request)
        gate = getattr(self.crawler.spider, "host_gate", None)
        key = urlparse_cached(request).netloc
        if key in self._parsers and time.monotonic() > self._expires.get(key, 0):
            del self._parsers[key]  # shared copy expired: read it again
        if key not in self._parsers:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._parsers[key] = future  # type: ignore[assignment]
            try:
                if gate is None:  # no Redis to share it through (`invcrawl inventory`)
                    parser = self._parse(origin, await self._download(origin))
                else:
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
        parser = self._parse(origin, doc)
        asked = _crawl_delay(parser, self._robotstxt_useragent or self._default_useragent)
        delay = min(asked, self._max_delay)
        await redis(lambda: hosts.set_robots_delay(origin, int(delay * 1000), asked))
        return parser

    def _parse(self, origin: str, doc: dict[str, Any]) -> Any:
        """The parser of a stored robots.txt; None (obey nothing) for none, or for a
        file whose parsing runs past the extraction budget."""
        if doc.get("body") is None:
            return None
        try:
            with budget(self._budget):
                return build_from_crawler(self._parserimpl, self.crawler, doc["body"].encode())
        except ExtractionTimeout:
            log.warning(
                "robots.txt of %s took longer than %gs to parse: not obeyed", origin, self._budget
            )
            self._stats.inc_value("invcrawl/robots_over_budget")
            return None

    async def _download(self, origin: str) -> dict[str, Any]:
        url, hops = f"{origin}/robots.txt", []
        try:
            while True:
                response = await self.crawler.engine.download_async(_request(url))
                location = response.headers.get(b"Location")
                if response.status not in REDIRECT_STATUSES or not location:
                    break
                target = safe_url_string(urljoin(url, location.decode("latin-1")))
                hops.append(url)
                if len(hops) > MAX_REDIRECTS or target in hops:
                    return _absent(origin, f"redirect loop or more than {MAX_REDIRECTS} hops")
                if not redirect_allowed(origin, target, self._allow_hosts):
                    return _absent(
                        origin, f"HTTP {response.status} redirects off the site to {target}"
                    )
                url = target
        except Exception as exc:
            log.info("robots.txt of %s could not be fetched (%s): not obeyed", origin, exc)
            return {"status": None, "body": None, "error": str(exc)[:300], "at": time.time()}
        body = _head(response.body) if response.status == 200 else b""
        return {
            "status": response.status,
            "body": body.decode("utf-8", "replace"),
            "at": time.time(),
        }


def _request(url: str) -> Request:
    # dont_redirect: a redirect comes back to _download, which applies the site's policy
    # (Scrapy's RedirectMiddleware would follow it anywhere the address policy allows).
    return Request(
        url,
        priority=SharedRobotsTxtMiddleware.DOWNLOAD_PRIORITY,
        meta={"dont_obey_robotstxt": True, "dont_redirect": True},
        callback=NO_CALLBACK,
    )


def _absent(origin: str, why: str) -> dict[str, Any]:
    log.info("robots.txt of %s: %s; treated as absent", origin, why)
    return {"status": None, "body": "", "error": why[:300], "at": time.time()}


def _head(body: bytes) -> bytes:
    """The first ROBOTS_MAX_BYTES of a robots.txt, cut after its last whole line."""
    if len(body) <= ROBOTS_MAX_BYTES:
        return body
    head = body[:ROBOTS_MAX_BYTES]
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut >= 0 else b""


def _crawl_delay(parser: Any, useragent: str | bytes) -> float:
    """Crawl-delay for our user agent, from Protego (Scrapy's default parser): a finite
    positive number of seconds, else 0."""
    protego = getattr(parser, "rp", None)
    if protego is None or not hasattr(protego, "crawl_delay"):
        return 0.0
    agent = useragent.decode() if isinstance(useragent, bytes) else useragent
    try:
        delay = float(protego.crawl_delay(agent) or 0)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return delay if math.isfinite(delay) and delay > 0 else 0.0
