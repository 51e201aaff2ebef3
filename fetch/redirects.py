"""Redirects of page requests, followed only within the site.

A page answering 3xx is followed when the target is on the site's origin (scheme, host
and port of the crawl's final inventory URL: the request's ``FOLLOW_WITHIN`` meta), or
is the same host upgraded from http to https, or is on a host of ``--allow-host`` (e.g.
a docs CDN): a moved page, a dirhtml page without its trailing slash, http to https. A
redirect anywhere else is not followed: the page completes with status ``offsite`` and a
reason naming the target, so a page of the crawled site cannot send the crawler to
another host (loopback, a private address, another port). More than
:data:`MAX_REDIRECTS` hops, or a loop, is a dead letter.

Scrapy's own ``RedirectMiddleware`` never sees page requests (they carry
``handle_httpstatus_all``); it follows the producer's inventory request, whose targets
the address policy of :mod:`invcrawl.fetch.addresses` guards. ``fetch/robots.py`` follows
robots.txt redirects itself, within the host's origin. A ``<meta http-equiv="refresh">``
of a page (sphinx-reredirects' stubs) is a redirect too, under the same rules: Scrapy's
``MetaRefreshMiddleware`` is off (it followed one to any host, and decoded the page with
whatever charset the server named: ``rot13`` dead-lettered it with a ``LookupError``).
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from w3lib.html import get_meta_refresh
from w3lib.url import safe_url_string

from invcrawl.fetch.meta import DEAD, FOLLOW_WITHIN, HOPS, OFFSITE
from invcrawl.frontier.hosts import origin_of

MAX_REDIRECTS = 10
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
META_REFRESH_MAX_DELAY = 100  # seconds: a longer refresh is a page, not a redirect (Scrapy's)
META_SCAN = 8192  # bytes of a page searched for the refresh (it sits in <head>)
SCHEMES = ("http", "https")


def redirect_allowed(site: str | None, target: str, allow_hosts: frozenset[str]) -> bool:
    """Whether a redirect to ``target`` stays on the site (module docstring)."""
    parts = urlsplit(target)
    if parts.scheme not in SCHEMES or not parts.hostname:
        return False
    target_origin = origin_of(target)
    if site is None or target_origin is None:
        return False
    if target_origin == site:
        return True
    host = parts.hostname.lower()
    site_parts = urlsplit(site)
    if (
        host == (site_parts.hostname or "").lower()
        and site_parts.scheme == "http"
        and target_origin == f"https://{site_parts.netloc.rsplit(':', 1)[0]}:443"
        and site_parts.port == 80
    ):
        return True  # http -> https on the same host, default ports
    return host in allow_hosts


class SiteRedirectMiddleware:
    """Downloader middleware following the redirects of page requests (those with
    ``FOLLOW_WITHIN`` in their meta) within their site only."""

    def __init__(self, allow_hosts: frozenset[str]) -> None:
        self.allow_hosts = allow_hosts

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteRedirectMiddleware:
        hosts = crawler.settings.getlist("INVCRAWL_ALLOW_HOSTS")
        return cls(frozenset(h.lower() for h in hosts))

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if FOLLOW_WITHIN not in request.meta:
            return response
        target: str | None = None
        if response.status in REDIRECT_STATUSES:
            location = response.headers.get(b"Location")
            if not location:
                return response  # a 3xx without a target: classified like any other status
            target = location.decode("latin-1")
        elif response.status == 200:
            target = _meta_refresh(request.url, response)
        if not target:
            return response
        return self._follow(request, response, safe_url_string(urljoin(request.url, target)))

    def _follow(self, request: Request, response: Response, target: str) -> Request | Response:
        how = f"HTTP {response.status}" if response.status != 200 else "a meta refresh"
        hops: list[str] = list(request.meta.get(HOPS, []))
        if target in hops or target == request.url or len(hops) >= MAX_REDIRECTS:
            request.meta[DEAD] = (
                f"redirect loop or more than {MAX_REDIRECTS} redirects ({how} to {target})"
            )
            return response
        site: str | None = request.meta[FOLLOW_WITHIN]
        if not redirect_allowed(site, target, self.allow_hosts):
            verb = "redirects" if response.status != 200 else "refreshes"
            request.meta[OFFSITE] = f"{how} {verb} off the site ({site}) to {target}"
            return response
        meta = {**request.meta, HOPS: [*hops, request.url]}
        meta.pop("download_slot", None)
        return request.replace(url=target, meta=meta, dont_filter=True)


def _meta_refresh(url: str, response: Response) -> str | None:
    """The target of an HTML page's immediate ``<meta http-equiv="refresh">``, if any."""
    head = bytes(response.body[:META_SCAN])
    if b"refresh" not in head.lower():
        return None
    content_type = response.headers.get(b"Content-Type") or b"text/html"
    if b"html" not in content_type.lower():
        return None
    # Latin-1 reads any bytes; a refresh URL is ASCII (anything else is percent-encoded).
    delay, target = get_meta_refresh(head.decode("latin-1"), url)
    if target is None or delay is None or delay >= META_REFRESH_MAX_DELAY:
        return None
    return target
