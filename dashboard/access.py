"""Who may look at the dashboard: which binds need a secret and which secret, which
``Host`` headers it answers (the rules of every read-only server of invcrawl, in
``common/listen.py``), and the session cookie's value. No aiohttp here: the
``dashboard`` command checks its options before the web server is imported."""

from __future__ import annotations

import hashlib
import hmac

from invcrawl.common.listen import HostCheck, host_name, is_loopback, listener_secret
from invcrawl.common.settings.config import Config

__all__ = ["HostCheck", "access_secret", "host_name", "is_loopback", "session_value"]


def access_secret(config: Config) -> str | None:
    """What the page asks for: ``--token``; else, on a bind beyond loopback, the password
    of the Redis user of ``--redis`` (a reader user: ``redis://reader:PASSWORD@...``).
    A bind beyond loopback without either is refused."""
    return listener_secret(
        config.dashboard_token,
        config.bind,
        config.redis,
        "the dashboard",
        "INVCRAWL_DASHBOARD_TOKEN or --token",
    )


def session_value(secret: str) -> str:
    """The cookie that proves the token was given (never the token itself)."""
    return hmac.new(secret.encode(), b"invcrawl-dashboard-session", hashlib.sha256).hexdigest()
