"""The one Redis client of a process.

Always ``redis.asyncio.Redis`` (nothing blocks the reactor) with the same parameters.
Scrapy processes build theirs through scrapy-redis from the ``REDIS_URL`` /
``REDIS_PARAMS`` settings (:func:`scrapy_redis_settings`, the Scrapy idiom); the other
processes (the ``crawl`` supervisor, ``status``, ``export``...) with :func:`connect`,
which does not import Scrapy (0.4 s of CPU per command).
redis-py's automatic command retry is switched off: re-sending a Lua script whose reply
was lost could run it twice (a claim would lease tasks nobody knows of). Callers retry
explicitly, with backoff, where that is safe (docs/delivery.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from functools import cache
from typing import Any, TypeVar, cast

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ConnectionError,
    MasterDownError,
    ResponseError,
    TimeoutError,
)

from invcrawl.frontier.session import Frontier
from invcrawl.process.secrets import mask_secrets, mask_url

# Errors that mean "Redis is unreachable or restarting": back off and try again.
TRANSIENT_REDIS_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    BusyLoadingError,
    OSError,
    ClusterDownError,  # a shard failing over or restarting
    MasterDownError,
)


# The client's type, for a package that hands the client back to the frontier (the MCP
# server gives it to frontier/search.py) without importing redis-py itself.
Client = Redis


def redis_params() -> dict[str, Any]:
    """Keyword arguments of the client, besides its URL."""
    return {
        "decode_responses": True,
        "socket_timeout": 10,
        "socket_connect_timeout": 5,
        "health_check_interval": 15,
        "retry": Retry(NoBackoff(), 0),
        "retry_on_timeout": False,  # scrapy-redis's defaults turn it on
    }


def connect(url: str, cluster: bool = False) -> Redis:
    """Create the process's client (lazy: no connection is opened yet). ``cluster``
    (``--redis-cluster``): ``url`` names any node of a Redis Cluster; every script and
    pipeline of invcrawl touches one hash slot (frontier/keys.py), so the cluster client
    routes each call to its shard and nothing else changes."""
    try:
        if cluster:
            params = redis_params()
            for name in ("health_check_interval", "retry_on_timeout"):  # not cluster options
                params.pop(name)
            # The same command API as Redis (redis-py's async cluster client).
            return cast(Redis, RedisCluster.from_url(url, **params))
        return packed_in_c(Redis.from_url(url, **redis_params()))
    except ValueError as exc:
        raise ValueError(f"invalid Redis URL {mask_url(url)!r}: {mask_secrets(str(exc))}") from None


@contextlib.asynccontextmanager
async def fresh_frontier(url: str, cluster: bool = False) -> AsyncIterator[Frontier]:
    """A frontier on a connection of its own, closed on the way out: for work on an event
    loop of its own (a command's job, the ``crawl`` supervisor's steps between its runs,
    clearing a scheduler's next refresh after its loop is gone)."""
    frontier = Frontier(connect(url, cluster))
    try:
        yield frontier
    finally:
        await frontier.aclose()


def scrapy_redis_settings(url: str | None) -> dict[str, Any]:
    """Scrapy settings for scrapy-redis's ``get_redis_from_settings``."""
    return {"REDIS_URL": url, "REDIS_PARAMS": {"redis_cls": Redis, **redis_params()}}


# The argument types hiredis packs as redis-py does: bytes as they are, str in UTF-8 (and
# their subclasses: a StrEnum's value, as redis-py sends it), an int (not a subclass: an
# IntEnum or bool) in decimal. A call with any other (a float, memoryview, an IntEnum;
# bool or None: refused) is packed by redis-py itself: what is sent, or refused, is what
# redis-py sends.
_PLAIN = frozenset((bytes, str, int))


def _plain(args: tuple[Any, ...]) -> bool:
    types = set(map(type, args))  # a few: the loop below is over types, not arguments
    return types <= _PLAIN or all(t is int or issubclass(t, (str, bytes)) for t in types)


@cache
def _packing_in_c(base: type[AbstractConnection]) -> type[AbstractConnection]:
    """``base`` packing its commands with hiredis (C) instead of redis-py's Python loop."""
    import hiredis  # noqa: PLC0415 - only when redis-py found it (HIREDIS_AVAILABLE)

    pack = hiredis.pack_command

    class PackedInC(base):  # type: ignore[valid-type,misc]
        def pack_command(self, *args: Any) -> list[bytes]:
            encoder = self.encoder
            if (
                encoder.encoding != "utf-8"
                or encoder.encoding_errors != "strict"
                or not _plain(args)
            ):
                return cast(list[bytes], super().pack_command(*args))
            head = args[0]  # a command of several words ('SCRIPT LOAD'): sent apart
            if isinstance(head, str):
                args = (*head.encode().split(), *args[1:])
            elif isinstance(head, bytes) and b" " in head:
                args = (*head.split(), *args[1:])
            elif not isinstance(head, bytes):
                return cast(list[bytes], super().pack_command(*args))
            return [pack(args)]

    PackedInC.__name__ = PackedInC.__qualname__ = f"PackedInC{base.__name__}"
    return PackedInC


C = TypeVar("C")


def packed_in_c(client: C) -> C:
    """``client`` (a ``redis.asyncio.Redis``) packing its commands with hiredis, when
    redis-py uses hiredis and the connections are redis-py's own: the same bytes sent
    (a test compares them), in C. A consumer packs every commit's ~300 values, every
    item's six and the search index's four (0.34 against 0.09 CPU-s for the CPython
    crawl's 500 commits, docs/performance.md). Anything else is left as it is."""
    from redis.utils import HIREDIS_AVAILABLE  # noqa: PLC0415

    pool = getattr(client, "connection_pool", None)
    base = getattr(pool, "connection_class", None)
    if HIREDIS_AVAILABLE and base in (Connection, SSLConnection, UnixDomainSocketConnection):
        pool.connection_class = _packing_in_c(base)  # type: ignore[union-attr]
    return client


# Where redis-py's asyncio client writes to and reads from its socket: a connection the
# peer closed (a Redis node killed), or that another task disconnected meanwhile, can
# fail there with the transport's own error (``'NoneType' object has no attribute
# 'writelines'``, ``'NoneType' object is not callable``) instead of ConnectionError;
# the command was not delivered, so it is an outage like any other (redis-py #4287;
# redis-py 8 raises ConnectionError where the transport is already closing, and still
# lets the transport's error through where it is not).
_SOCKET_LAYER = ("redis/asyncio/connection.py", "asyncio/streams.py", "asyncio/selector_events.py")


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TRANSIENT_REDIS_ERRORS):
        return True
    if isinstance(exc, (AttributeError, TypeError)) and _raised_in(exc, _SOCKET_LAYER):
        return True
    # A Redis restarting from its AOF answers LOADING; some proxies say TRYAGAIN; a Redis
    # running a long script answers BUSY (the command was refused, not run: retrying it
    # is safe; docs/deploy.md, "Lua scripts").
    return isinstance(exc, ResponseError) and str(exc).startswith(("LOADING", "TRYAGAIN", "BUSY "))


def _raised_in(exc: BaseException, files: tuple[str, ...]) -> bool:
    """The innermost frame of ``exc``'s traceback is in one of ``files``."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.replace("\\", "/").endswith(files)
