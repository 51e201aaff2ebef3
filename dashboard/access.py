"""Who may look at the dashboard: which binds need a secret and which secret, which
``Host`` headers it answers, and the session cookie's value. No aiohttp here: the
``dashboard`` command checks its options before the web server is imported."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import unquote, urlsplit

from common.listen import is_loopback
from common.settings.config import Config, ConfigError

__all__ = ["HostCheck", "access_secret", "host_name", "is_loopback", "session_value"]


def access_secret(config: Config) -> str | None:
    """What the page asks for: ``--token``; else, on a bind beyond loopback, the password
    of the Redis user of ``--redis`` (a reader user: ``redis://reader:PASSWORD@...``).
    A bind beyond loopback without either is refused."""
    if config.dashboard_token:
        return config.dashboard_token
    if is_loopback(config.bind):
        return None
    parts = urlsplit(config.redis or "")
    if parts.username and parts.username != "default" and parts.password:
        return unquote(parts.password)  # as Redis knows it (redis-py unquotes it too)
    raise ConfigError(
        f"--bind {config.bind} makes the dashboard reachable from other machines: "
        "give it a token to ask for (INVCRAWL_DASHBOARD_TOKEN or --token), or connect as a "
        "Redis reader user (--redis redis://USER:PASSWORD@...), whose password it asks for"
    )


class HostCheck:
    """Which ``Host`` headers the dashboard answers. On a loopback bind: loopback names
    and addresses only (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``[::1]``) and
    the names of ``--allow-host``: a web page the operator visits could otherwise read
    the page through DNS rebinding (its own name, resolved to 127.0.0.1). A bind beyond
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


def session_value(secret: str) -> str:
    """The cookie that proves the token was given (never the token itself)."""
    return hmac.new(secret.encode(), b"invcrawl-dashboard-session", hashlib.sha256).hexdigest()
