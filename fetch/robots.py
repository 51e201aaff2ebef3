"""robots.txt, fetched once per host for the whole fleet, bounded like any other input.

Scrapy's ``RobotsTxtMiddleware`` fetches robots.txt once per process; with N consumers
that is N fetches per host. :class:`SharedRobotsTxtMiddleware` (in its place, with the
same decisions: a disallowed request is ignored with ``IgnoreRequest``, the rules parsed
by Protego, Scrapy's default parser) gets the file through Redis: the first consumer
that needs it takes a short lock, downloads it (through the downloader, so the host's
permit and delay apply) and stores it for every consumer (``frontier/hosts.py``,
``ROBOTS_TTL``); the others wait for it there. A ``Crawl-delay`` raises the host's delay
for the fleet (``robots_delay_ms``). Without a host gate in the settings (no Redis:
``invcrawl inventory``) each process downloads its own copy.

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
from functools import partial
from typing import Any
from urllib.parse import urljoin

from protego import Protego
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from w3lib.url import safe_url_string

from invcrawl.fetch.budget import ExtractionTimeout, budget
from invcrawl.fetch.permits import HOST_GATE
from invcrawl.fetch.politeness import HostGate
from invcrawl.fetch.redirects import MAX_REDIRECTS, REDIRECT_STATUSES, redirect_allowed
from invcrawl.frontier.hosts import origin_of

log = logging.getLogger("invcrawl.consumer")

ROBOTS_TTL = 3600  # seconds a fetched robots.txt is shared before it is fetched again
LOCK_MS = 30_000  # a fetcher that dies holds the others back at most this long
ROBOTS_MAX_BYTES = 500 * 1024  # Google reads the first 500 KiB and ignores the rest
DEFAULT_MAX_CRAWL_DELAY = 60.0
DOWNLOAD_PRIORITY = 1000  # robots.txt before the requests waiting for it (Scrapy's)


class SharedRobotsTxtMiddleware:
    """Downloader middleware: a request that its host's robots.txt disallows for our user
    agent is ignored (``IgnoreRequest``: the page's entries are ``skipped``)."""

    def __init__(self, crawler: Crawler, gate: HostGate | None) -> None:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self._crawler = crawler
        self._stats = crawler.stats
        self._gate = gate
        self._useragent: str = settings.get("ROBOTSTXT_USER_AGENT") or ""
        self._default_useragent: str = settings.get("USER_AGENT") or ""
        self._max_delay = settings.getfloat("INVCRAWL_MAX_CRAWL_DELAY", DEFAULT_MAX_CRAWL_DELAY)
        self._budget = settings.getfloat("INVCRAWL_EXTRACT_BUDGET", 0.0)
        hosts = settings.getlist("INVCRAWL_ALLOW_HOSTS")
        self._allow_hosts = frozenset(h.lower() for h in hosts)
        # origin -> the reading of its rules (None: nothing to obey), shared by the
        # requests that wait for it; read again once expired
        self._rules: dict[str, asyncio.Task[Protego | None]] = {}
        self._expires: dict[str, float] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SharedRobotsTxtMiddleware:
        return cls(crawler, HOST_GATE.get(crawler.settings))

    async def process_request(self, request: Request) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return
        origin = origin_of(request.url)
        if origin is None:  # not http(s) (a local site's file:// pages): nothing to obey
            return
        rules = await self.rules(origin)
        if rules is None:
            return
        agent = self._useragent or _text(request.headers.get(b"User-Agent"))
        if not rules.can_fetch(request.url, agent or self._default_useragent):
            log.debug("Forbidden by robots.txt: %s", request)
            self._stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest("Forbidden by robots.txt")

    async def rules(self, origin: str) -> Protego | None:
        """The robots.txt rules of ``origin`` (None: none to obey), read once per
        ``ROBOTS_TTL`` by this process, however many requests wait for them."""
        reading = self._rules.get(origin)
        if reading is None or (reading.done() and time.monotonic() > self._expires[origin]):
            reading = asyncio.ensure_future(self._read(origin))
            self._rules[origin] = reading
        # shielded: a request cancelled while it waits does not cancel the reading
        return await asyncio.shield(reading)

    async def _read(self, origin: str) -> Protego | None:
        try:
            if self._gate is None:  # no Redis to share it through (`invcrawl inventory`)
                rules = self.rules_from(origin, await self._download(origin))
            else:
                rules = await self._shared_rules(origin, self._gate)
        except Exception as exc:  # Redis or the download failed: obey nothing, as Scrapy
            log.warning("robots.txt of %s unavailable (%s): not obeyed", origin, exc)
            rules = None
        self._expires[origin] = time.monotonic() + ROBOTS_TTL
        return rules

    async def _shared_rules(self, origin: str, gate: HostGate) -> Protego | None:
        hosts, redis = gate.hosts, gate.outages.call  # Redis outages are waited out
        doc = await redis(lambda: hosts.robots(origin))
        while doc is None:
            if await redis(lambda: hosts.lock_robots(origin, gate.consumer_id, LOCK_MS)):
                doc = await self._download(origin)
                await redis(partial(hosts.store_robots, origin, doc, ROBOTS_TTL))
                self._stats.inc_value("invcrawl/robots_fetched")
            else:
                await asyncio.sleep(0.1)
                doc = await redis(lambda: hosts.robots(origin))
        rules = self.rules_from(origin, doc)
        asked = crawl_delay(rules, self._useragent or self._default_useragent)
        delay = min(asked, self._max_delay)
        await redis(lambda: hosts.set_robots_delay(origin, int(delay * 1000), asked))
        return rules

    def rules_from(self, origin: str, doc: dict[str, Any]) -> Protego | None:
        """The rules of a stored robots.txt; None (obey nothing) for none, or for a file
        whose parsing runs past the extraction budget."""
        if doc.get("body") is None:
            return None
        try:
            with budget(self._budget):
                return Protego.parse(doc["body"])
        except ExtractionTimeout:
            log.warning(
                "robots.txt of %s took longer than %gs to parse: not obeyed", origin, self._budget
            )
            self._stats.inc_value("invcrawl/robots_over_budget")
            return None

    async def _download(self, origin: str) -> dict[str, Any]:
        url, hops = f"{origin}/robots.txt", []
        engine = self._crawler.engine
        try:
            while True:
                response = await engine.download_async(_request(url))
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
        body = head(response.body) if response.status == 200 else b""
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
        priority=DOWNLOAD_PRIORITY,
        meta={"dont_obey_robotstxt": True, "dont_redirect": True},
        callback=NO_CALLBACK,
    )


def _absent(origin: str, why: str) -> dict[str, Any]:
    log.info("robots.txt of %s: %s; treated as absent", origin, why)
    return {"status": None, "body": "", "error": why[:300], "at": time.time()}


def _text(value: bytes | None) -> str:
    return value.decode("latin-1") if value else ""


def head(body: bytes) -> bytes:
    """The first ROBOTS_MAX_BYTES of a robots.txt, cut after its last whole line."""
    if len(body) <= ROBOTS_MAX_BYTES:
        return body
    first = body[:ROBOTS_MAX_BYTES]
    cut = first.rfind(b"\n")
    return first[: cut + 1] if cut >= 0 else b""


def crawl_delay(rules: Protego | None, agent: str) -> float:
    """Crawl-delay for our user agent: a finite positive number of seconds, else 0."""
    if rules is None:
        return 0.0
    try:
        delay = float(rules.crawl_delay(agent) or 0)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return delay if math.isfinite(delay) and delay > 0 else 0.0
