"""Listening beyond loopback: which bind addresses are loopback. A server of invcrawl that
binds anything else asks for a secret: the dashboard (``dashboard/access.py``), the MCP
server's ``--http`` endpoint (``mcpserver/http.py``), both through :func:`listener_secret`
and :class:`HostCheck`, and a consumer's ``--metrics-port`` (:func:`metrics_token`; served
by ``consumer/metrics_server.py``). Pure."""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote, urlsplit

from invcrawl.common.settings.config import Config, ConfigError


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None: another scheme or
    none). The scheme is case-insensitive (RFC 9110 11.1: ``bearer`` is ``Bearer``)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def metrics_token(config: Config) -> str | None:
    """The token a consumer's metrics endpoint asks for (None: none); a bind beyond
    loopback without one is refused in one line, before any work."""
    if config.metrics_port is None:
        return None
    if config.metrics_token:
        return config.metrics_token
    if is_loopback(config.bind):
        return None
    raise ConfigError(
        f"--bind {config.bind} makes this consumer's metrics reachable from other machines: "
        "give it a token for Prometheus to send (INVCRAWL_METRICS_TOKEN or --metrics-token; "
        "Authorization: Bearer TOKEN)"
    )


def listener_secret(
    token: str | None, bind: str, redis: str | None, what: str, ask: str
) -> str | None:
    """What a read-only server asks for: ``token``; else, on a bind beyond loopback, the
    password of the Redis user of ``redis`` (a reader user: ``redis://reader:PASSWORD@...``).
    A bind beyond loopback without either is refused, naming ``what`` is served and how
    to give a token (``ask``)."""
    if token:
        return token
    if is_loopback(bind):
        return None
    parts = urlsplit(redis or "")
    if parts.username and parts.username != "default" and parts.password:
        return unquote(parts.password)  # as Redis knows it (redis-py unquotes it too)
    raise ConfigError(
        f"--bind {bind} makes {what} reachable from other machines: give it a token to ask "
        f"for ({ask}), or connect as a Redis reader user (--redis redis://USER:PASSWORD@...), "
        "whose password it asks for"
    )


class HostCheck:
    """Which ``Host`` headers a server answers. On a loopback bind: loopback names and
    addresses only (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``[::1]``) and the
    names of ``--allow-host``: a web page the operator visits could otherwise read the
    server through DNS rebinding (its own name, resolved to 127.0.0.1). A bind beyond
    loopback asks for a token anyway, which such a page does not have: any Host."""

    def __init__(self, bind: str, allowed: tuple[str, ...] = ()) -> None:
        self.checked = is_loopback(bind)
        self.allowed = frozenset(h.lower().strip("[]") for h in allowed)

    def accepts(self, host_header: str | None) -> bool:
        if not self.checked:
            return True
        name = host_name(host_header or "")
        return bool(name) and (
            name == "localhost"
            or name.endswith(".localhost")
            or is_loopback(name)
            or name in self.allowed
        )


def host_name(host_header: str) -> str:
    """The name of a Host header without its port: ``[::1]:8780`` -> ``::1``."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host
