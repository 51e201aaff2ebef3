"""The address policy (no SSRF into the consumers' network) and the redirect rule."""

from __future__ import annotations

import pytest
from twisted.internet import defer
from twisted.python.failure import Failure

from invcrawl.fetch import addresses
from invcrawl.fetch.addresses import AddressPolicy, AddressRefused, address_kind, parse_ip
from invcrawl.fetch.failures import classify_exception
from invcrawl.fetch.redirects import redirect_allowed


@pytest.mark.parametrize(
    ("ip", "kind"),
    [
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
        ("127.0.0.1", "loopback"),
        ("127.0.0.2", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd12::1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
    ],
)
def test_address_kinds(ip: str, kind: str | None) -> None:
    parsed = parse_ip(ip)
    assert parsed is not None
    assert address_kind(parsed) == kind


def test_a_public_site_cannot_reach_internal_addresses() -> None:
    policy = AddressPolicy()
    policy.add_site("https://docs.example.org:443")
    assert policy.refusal("docs.example.org", "93.184.216.34") is None
    assert "was public" in (policy.refusal("docs.example.org", "127.0.0.1") or "")
    assert "private" in (policy.refusal("cdn.example.org", "10.0.0.5") or "")
    assert "metadata" in (policy.refusal("evil.example", "169.254.169.254") or "")
    assert policy.refusal("cdn.example.org", "151.101.1.1") is None


def test_a_local_site_is_a_normal_use() -> None:
    policy = AddressPolicy()
    for site in ("http://127.0.0.1:8000", "http://localhost:8000", "http://docs.intranet:80"):
        policy.add_site(site)
    assert policy.refusal("127.0.0.1", "127.0.0.1") is None
    assert policy.refusal("localhost", "127.0.0.1") is None
    assert policy.refusal("docs.intranet", "10.0.0.7") is None  # first seen internal
    assert policy.refusal("docs.intranet", "10.0.0.8") is None
    # other hosts on internal addresses stay refused, metadata always
    assert policy.refusal("127.0.0.2", "127.0.0.2") is not None
    assert policy.refusal("docs.intranet", "169.254.169.254") is not None


def test_allow_host_is_the_users_choice() -> None:
    policy = AddressPolicy(("cdn.internal",))
    assert policy.refusal("cdn.internal", "10.0.0.9") is None
    assert policy.refusal("cdn.internal", "169.254.169.254") is not None


def test_the_resolver_refuses_and_the_page_is_dead_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        addresses.CachingThreadedResolver,
        "getHostByName",
        lambda self, name, timeout=(): defer.succeed("10.0.0.5"),
    )
    resolver = addresses.GuardedResolver.__new__(addresses.GuardedResolver)
    resolver.policy = AddressPolicy()
    resolver.policy.add_site("https://docs.example.org:443")
    results: list[object] = []
    resolver.getHostByName("internal.example.org").addBoth(results.append)
    (failure,) = results
    assert isinstance(failure, Failure) and isinstance(failure.value, AddressRefused)
    outcome = classify_exception(failure.value)
    assert outcome.kind == "dead" and "private address (10.0.0.5)" in outcome.reason
    results.clear()
    resolver.getHostByName("docs.example.org").addBoth(results.append)
    assert results == ["10.0.0.5"]  # the site's own host, first seen there: a local site


@pytest.mark.parametrize(
    ("site", "target", "allowed"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/a/b.html", True),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8001/a.html", False),
        ("http://127.0.0.1:8000", "http://localhost:8000/a.html", False),
        ("http://127.0.0.1:8000", "https://127.0.0.1:8000/a.html", False),
        ("http://docs.example.org:80", "https://docs.example.org/a.html", True),  # upgrade
        ("https://docs.example.org:443", "http://docs.example.org/a.html", False),  # downgrade
        ("https://docs.example.org:443", "https://DOCS.example.org:443/x", True),
        ("https://docs.example.org:443", "https://cdn.example.org/x", False),
        ("https://docs.example.org:443", "ftp://docs.example.org/x", False),
        ("https://docs.example.org:443", "file:///etc/passwd", False),
        (None, "http://127.0.0.1/x", False),
    ],
)
def test_redirect_rule(site: str | None, target: str, allowed: bool) -> None:
    assert redirect_allowed(site, target, frozenset()) is allowed


def test_redirect_to_an_allowed_host() -> None:
    site = "https://docs.example.org:443"
    assert redirect_allowed(site, "https://cdn.example.org/x", frozenset({"cdn.example.org"}))
