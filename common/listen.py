"""Listening beyond loopback: which bind addresses are loopback. A server of invcrawl that
binds anything else asks for a secret: the dashboard (``dashboard/access.py``) and a
consumer's ``--metrics-port`` (:func:`metrics_token`; served by
``consumer/metrics_server.py``). Pure."""

from __future__ import annotations

import ipaddress

from common.settings.config import Config, ConfigError


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


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
