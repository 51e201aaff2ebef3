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
process-wide); :class:`GuardedResolver` applies it to every name Scrapy resolves, and
:class:`AddressGuardMiddleware` to IP literals in URLs and registers each crawl's site
host before its pages are requested.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

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
        # error into "no results", so the spider looks the reason up here)
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


# The process's policy: one DNS resolver per process, so one policy. The consumer's
# settings replace it with one holding --allow-host (install_policy).
POLICY = AddressPolicy()


def install_policy(allow_hosts: tuple[str, ...]) -> AddressPolicy:
    global POLICY  # noqa: PLW0603 - the resolver is process-wide, so is its policy
    POLICY = AddressPolicy(allow_hosts)
    return POLICY


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, refusing names that resolve where they must not."""

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
        d: defer.Deferred[str] = super().getHostByName(name, timeout)

        def check(address: str) -> str:
            host = (name.decode() if isinstance(name, bytes) else name).lower()
            reason = POLICY.refusal(host, address)
            if reason:
                POLICY.refused[host] = reason
                raise AddressRefused(reason)
            POLICY.refused.pop(host, None)
            return address

        d.addCallback(check)
        return d


SITE_META = "invcrawl_site"  # the site of an inventory request (producer/spider.py)


class AddressGuardMiddleware:
    """Downloader middleware (before robots.txt's): registers the crawl's site host
    before its first request, and refuses IP-literal URLs the policy refuses (they may
    not go through name resolution)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> AddressGuardMiddleware:
        install_policy(tuple(crawler.settings.getlist("INVCRAWL_ALLOW_HOSTS")))
        return cls(crawler)

    def process_request(self, request: Any) -> None:
        from fetch.redirects import site_origin  # noqa: PLC0415 - no import cycle

        # a page's crawl, or the site whose inventory this is (kept through redirects)
        site = site_origin(request, self.crawler.spider) or request.meta.get(SITE_META)
        if site:
            POLICY.add_site(site)
        host = urlsplit(request.url).hostname or ""
        if parse_ip(host) is not None:
            reason = POLICY.refusal(host, host)
            if reason:
                raise AddressRefused(reason)
