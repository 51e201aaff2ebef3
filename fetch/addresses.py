"""Which network addresses a consumer may connect to (server-side request forgery).

A consumer runs inside someone's network. A hostile site must not use it to reach
loopback, private, link-local, shared or cloud-metadata addresses (the metadata service
at 169.254.169.254 hands out credentials). The rule:

* a public address is always allowed;
* a site whose own host is on such an address (a local docs server, ``localhost``, a
  name of the intranet) may be crawled: its host is trusted with the address it had
  when first seen (an IP literal, or its first resolution). A site host that first
  resolved to a public address and later resolves to an internal one (DNS rebinding)
  is refused;
* a host listed with ``--allow-host`` is the user's explicit choice and is allowed;
* anything else resolving to a non-public address is refused;
* a metadata address is refused unless it is literally the site's own address.

The producer's inventory request is guarded too: the site given by the user is trusted
as above, but a redirect of its ``objects.inv`` to another host on an internal address
is refused (the final inventory URL defines the site the consumers then trust).

:class:`AddressPolicy` holds that state for the process (the DNS resolver is
process-wide: one policy, ``ADDRESS_POLICY`` in the settings); :class:`GuardedResolver`
applies it to every name Scrapy resolves, and :class:`AddressGuardMiddleware` to IP
literals in URLs; the middleware registers each request's site host (``SITE`` in its
meta) before it is requested, and names the refusal of a failed request.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Self
from urllib.parse import urlsplit

from scrapy.crawler import Crawler
from scrapy.http import Request
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.base import ReactorBase
from twisted.internet.error import DNSLookupError

from invcrawl.fetch.meta import SITE
from invcrawl.fetch.politeness import HostBusy
from invcrawl.fetch.shared import SharedKey

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
    )
)
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


class AddressRefused(DNSLookupError):
    """A request to an address the policy refuses (dead-lettered at once)."""


def parse_ip(host: str) -> IPAddress | None:
    try:
        ip = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def address_kind(ip: IPAddress) -> str | None:
    """Why ``ip`` is not public ("loopback", "private", "metadata"...), or None."""
    if ip in METADATA:
        return "cloud metadata"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.ip_network("100.64.0.0/10"):
        return "shared (carrier-grade NAT)"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    return None


class AddressPolicy:
    """The process's address rule (see the module docstring)."""

    def __init__(self, allow_hosts: tuple[str, ...] = ()) -> None:
        self.allow_hosts = {h.lower() for h in allow_hosts}
        self.sites: dict[str, bool | None] = {}  # site host -> internal (None: not yet seen)
        # host -> why its last resolution was refused (Twisted turns the resolver's
        # error into "no results": AddressGuardMiddleware looks the reason up here)
        self.refused: dict[str, str] = {}

    def refusal_of(self, url: str) -> str | None:
        """Why the last lookup of ``url``'s host was refused, if it was."""
        return self.refused.get((urlsplit(url).hostname or "").lower())

    def add_site(self, url_or_origin: str) -> None:
        host = (urlsplit(url_or_origin).hostname or "").lower()
        if not host or host in self.sites:
            return
        ip = parse_ip(host)
        if ip is not None:
            self.sites[host] = address_kind(ip) is not None
        elif host in LOCAL_NAMES or host.endswith(".localhost"):
            self.sites[host] = True
        else:
            self.sites[host] = None  # decided by its first resolution

    def refusal(self, host: str, address: str) -> str | None:
        """Why a connection to ``host`` at ``address`` is refused, or None."""
        host = host.lower().strip("[]")
        ip = parse_ip(address)
        if ip is None:
            return None
        kind = address_kind(ip)
        if kind is None:
            if self.sites.get(host) is None and host in self.sites:
                self.sites[host] = False  # first seen public: it stays public
            return None
        if kind == "cloud metadata":
            if parse_ip(host) == ip and host in self.sites:
                return None
            return f"{host} is a {kind} address ({address}): refused"
        if host in self.allow_hosts:
            return None
        if host in self.sites:
            if self.sites[host] is None:
                self.sites[host] = True  # a site on an internal address: a normal use
            if self.sites[host]:
                return None
            return f"{host} now resolves to a {kind} address ({address}) but was public: refused"
        return f"{host} resolves to a {kind} address ({address}): refused"


# The process's policy: one DNS resolver per process, so one policy, shared by the
# resolver and the middleware through the settings (fetch/settings.py).
ADDRESS_POLICY: SharedKey[AddressPolicy] = SharedKey("INVCRAWL_ADDRESS_POLICY")


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, refusing names that resolve where they must not."""

    policy: AddressPolicy

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> Self:
        # Built by the crawler process from its own settings: the same policy object as
        # the middlewares' (fetch/shared.py).
        resolver = super().from_crawler(crawler, reactor)
        resolver.policy = ADDRESS_POLICY.require(crawler.settings)
        return resolver

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        d: defer.Deferred[str] = super().getHostByName(name, timeout)
        policy = self.policy

        def check(address: str) -> str:
            host = (name.decode() if isinstance(name, bytes) else name).lower()
            reason = policy.refusal(host, address)
            if reason:
                policy.refused[host] = reason
                raise AddressRefused(reason)
            policy.refused.pop(host, None)
            return address

        d.addCallback(check)
        return d


class AddressGuardMiddleware:
    """Downloader middleware (before robots.txt's): registers the site of a request
    (its ``SITE`` meta) before its first request, refuses IP-literal URLs the policy
    refuses (they may not go through name resolution), and turns the failure of a
    request whose name the resolver refused into :class:`AddressRefused` with the
    reason (Twisted reports the resolver's refusal as a plain lookup failure)."""

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuardMiddleware:
        return cls(ADDRESS_POLICY.require(crawler.settings))

    def process_request(self, request: Request) -> None:
        # a page's crawl, or the site whose inventory this is (kept through redirects)
        site = request.meta.get(SITE)
        if site:
            self.policy.add_site(site)
        host = urlsplit(request.url).hostname or ""
        if parse_ip(host) is not None:
            reason = self.policy.refusal(host, host)
            if reason:
                raise AddressRefused(reason)

    def process_exception(self, request: Request, exception: Exception) -> None:
        # A host that is busy or blocked is postponed whatever its address (the page
        # goes back to Redis and its next request resolves again).
        if isinstance(exception, (AddressRefused, HostBusy)):
            return
        reason = self.policy.refusal_of(request.url)
        if reason:
            raise AddressRefused(reason) from exception
