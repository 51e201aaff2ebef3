"""The first connection to Redis: TLS options folded into the URL, and waiting.

**TLS.** ``rediss://`` URLs use TLS. ``--redis-ca``, ``--redis-cert`` and
``--redis-key`` (``INVCRAWL_REDIS_CA``...) are folded into the URL's query string
(``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``, which redis-py's ``from_url``
passes to its TLS connection), so every client of the process, including the one
scrapy-redis builds from ``REDIS_URL``, gets them without another code path.

**Waiting.** A command started while Redis is restarting (a supervisor or
``docker compose`` starting everything at once) retries its first connection with
backoff for up to ``--redis-wait`` seconds, saying once that it waits, instead of
exiting at once and turning into a crash loop. Errors that waiting cannot cure (a
wrong password, a refused TLS certificate, an invalid URL) fail at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from redis.exceptions import AuthenticationError, AuthorizationError, RedisError, ResponseError

from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.frontier.connection import connect, is_transient
from invcrawl.process.secrets import mask_secrets, mask_url

_TLS_PARAMS = (
    ("redis_ca", "ssl_ca_certs"),
    ("redis_cert", "ssl_certfile"),
    ("redis_key", "ssl_keyfile"),
)


class RedisUnavailable(Exception):
    """Redis could not be reached (one line, password masked)."""


def redis_url(config: Config, url: str | None = None) -> str:
    """``url`` (default: ``--redis``) with the TLS options of ``config`` in its query
    string. Idempotent (a child process gets both the URL and the flags)."""
    url = url if url is not None else config.redis or ""
    given = {name: getattr(config, name) for name, _ in _TLS_PARAMS if getattr(config, name)}
    if not given:
        return url
    parts = urlsplit(url)
    if parts.scheme != "rediss":
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        raise ConfigError(f"{flags} need(s) a rediss:// Redis URL, got {display_url(url)}")
    if config.redis_key and not config.redis_cert:
        raise ConfigError("--redis-key needs --redis-cert")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    for name, param in _TLS_PARAMS:
        path: Path | None = getattr(config, name)
        if path is None:
            continue
        if not path.is_file():
            flag = "--" + name.replace("_", "-")
            raise ConfigError(f"{flag} {path}: no such file")
        query.setdefault(param, str(path.resolve()))
    return urlunsplit(parts._replace(query=urlencode(query)))


def display_url(url: str) -> str:
    """``url`` as messages show it: password masked, without the TLS file parameters
    folded in by :func:`redis_url` (the flags say those)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if not k.startswith("ssl_")]
    return mask_url(urlunsplit(parts._replace(query=urlencode(query))))


def permanent(exc: BaseException) -> bool:
    """Errors that waiting cannot cure."""
    if isinstance(exc, AuthenticationError | AuthorizationError):
        return True
    if isinstance(exc, ResponseError) and not is_transient(exc):
        return True  # NOAUTH, WRONGPASS, NOPERM...
    text = str(exc).lower()
    return "certificate" in text or "ssl" in text or "tls" in text or "wrong version" in text


async def wait_for_redis(
    url: str, wait: float, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic
) -> None:
    """PING ``url`` until it answers, for up to ``wait`` seconds (0: one try).

    Raises :class:`RedisUnavailable` with one line when it does not answer in time or
    fails with an error waiting cannot cure; ``ValueError`` for an invalid URL."""
    deadline = clock() + wait
    delay = 0.1
    waited = False
    while True:
        client = connect(url)
        try:
            await client.ping()
            if waited:
                say(f"Redis at {display_url(url)} is up")
            return
        except (RedisError, OSError) as exc:
            error = mask_secrets(str(exc)) or type(exc).__name__
            if permanent(exc) or not (is_transient(exc) or isinstance(exc, RedisError)):
                raise RedisUnavailable(
                    f"cannot connect to Redis at {display_url(url)}: {error}"
                ) from None
            left = deadline - clock()
            if left <= 0:
                after = f" after waiting {wait:g}s" if wait > 0 else ""
                raise RedisUnavailable(
                    f"cannot connect to Redis at {display_url(url)}{after}: {error}"
                ) from None
            if not waited:
                waited = True
                shown = display_url(url)
                say(f"waiting for Redis at {shown} (up to {wait:g}s, --redis-wait): {error}")
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, 2.0)
        finally:
            await client.aclose()
