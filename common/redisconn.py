"""The one Redis client of a process.

Built through scrapy-redis's connection helper (``REDIS_URL`` / ``REDIS_PARAMS``
conventions) with ``redis.asyncio.Redis`` as the class, so nothing blocks the reactor.
redis-py's automatic command retry is switched off: re-sending a Lua script whose reply
was lost could run it twice (a claim would lease tasks nobody knows of). Callers retry
explicitly, with backoff, where that is safe (docs/delivery.md).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, ResponseError, TimeoutError
from scrapy_redis.connection import get_redis

# Errors that mean "Redis is unreachable or restarting": back off and try again.
TRANSIENT_REDIS_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    BusyLoadingError,
    OSError,
)


def redis_params(url: str) -> dict[str, Any]:
    """REDIS_PARAMS for scrapy-redis's get_redis(); also used to build Scrapy settings."""
    return {
        "redis_cls": Redis,
        "url": url,
        "decode_responses": True,
        "socket_timeout": 10,
        "socket_connect_timeout": 5,
        "health_check_interval": 15,
        "retry": Retry(NoBackoff(), 0),
    }


def connect(url: str) -> Redis:
    """Create the process's client (lazy: no connection is opened yet)."""
    try:
        client: Redis = get_redis(**redis_params(url))
    except ValueError as exc:
        raise ValueError(f"invalid Redis URL {url!r}: {exc}") from None
    return client


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT_REDIS_ERRORS):
        return True
    # A Redis restarting from its AOF answers LOADING; some proxies say TRYAGAIN.
    return isinstance(exc, ResponseError) and str(exc).startswith(("LOADING", "TRYAGAIN"))
