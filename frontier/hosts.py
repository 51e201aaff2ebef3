"""Fleet-wide politeness per host, in Redis: how many requests are in flight on a host
across every consumer, when the next one may start, whether a 429/503 blocks it, and
its robots.txt, fetched once and shared.

A host is the origin of a page URL: ``scheme://host:port`` (default port spelled out).
Its keys carry the origin as their hash tag (``frontier/keys.HostKeys``), so every
script here touches one Redis Cluster hash slot and never a crawl's keys.

Every host key expires: permits a lease after the last one, robots.txt and its lock
with their own TTL, and the state :data:`STATE_TTL_MS` after its last write (longer than
any start it schedules, any block, and twice a shared robots.txt's life,
``fetch/robots.ROBOTS_TTL``, after which the delay is written again).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from redis.asyncio import Redis

from invcrawl.frontier.keys import HOSTS, HostKeys
from invcrawl.frontier.scripts import Scripts

DEFAULT_PORTS = {"http": 80, "https": 443}
STATE_TTL_MS = 2 * 3600 * 1000


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL; None for what has no host to be polite
    to (``file://`` pages of a local site)."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    host = parts.hostname
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return f"{parts.scheme}://{host}:{port}"


@dataclass(frozen=True, slots=True)
class Grant:
    granted: bool
    wait_ms: int  # granted: the delay in force between starts; else: when to ask again
    why: str  # ok | blocked | delay | full


class Hosts:
    def __init__(self, redis: Redis, scripts: Scripts) -> None:
        self._redis = redis
        self._scripts = scripts

    async def acquire(
        self, origin: str, token: str, limit: int, delay_ms: int, lease_ms: int
    ) -> Grant:
        k = HostKeys(origin)
        granted, wait_ms, why = await self._scripts.run(
            "host_acquire",
            k.bind("permits", "state"),
            [token, limit, delay_ms, lease_ms, STATE_TTL_MS],
        )
        return Grant(granted == 1, int(wait_ms), str(why))

    async def release(self, origin: str, token: str) -> None:
        await self._redis.zrem(HostKeys(origin).permits, token)

    async def renew(self, origin: str, tokens: Iterable[str], lease_ms: int) -> set[str]:
        """Extend held permits; returns the tokens lost (their lease ran out)."""
        lost = await self._scripts.run(
            "host_renew", HostKeys(origin).bind("permits"), [lease_ms, *tokens]
        )
        return set(lost)

    async def block(self, origin: str, block_ms: int, reason: str) -> int:
        """No consumer starts a request on the host for ``block_ms``; returns until when."""
        return int(
            await self._scripts.run(
                "host_block", HostKeys(origin).bind("state"), [block_ms, reason, STATE_TTL_MS]
            )
        )

    async def set_robots_delay(self, origin: str, delay_ms: int, asked_s: float = 0.0) -> None:
        """The host's robots.txt Crawl-delay: ``delay_ms`` applied (0: none), the
        ``asked_s`` seconds its file says (more than applied: capped, shown by status)."""
        await self._scripts.run(
            "host_robots",
            HostKeys(origin).bind("state"),
            [delay_ms, f"{asked_s:g}", STATE_TTL_MS],
        )

    # -- robots.txt, fetched by one consumer for all --------------------------------------

    async def robots(self, origin: str) -> dict[str, Any] | None:
        doc = await self._redis.get(HostKeys(origin).robots)
        return cast(dict[str, Any], json.loads(doc)) if doc else None

    async def lock_robots(self, origin: str, holder: str, ttl_ms: int) -> bool:
        """Whether the caller is the one to fetch robots.txt now (the others wait for it
        in Redis); the lock expires, so a fetcher that dies does not block the rest."""
        k = HostKeys(origin)
        return bool(await self._redis.set(k.robots_lock, holder, nx=True, px=ttl_ms))

    async def store_robots(self, origin: str, doc: dict[str, Any], ttl_s: int) -> None:
        await self._redis.set(HostKeys(origin).robots, json.dumps(doc), ex=ttl_s)

    # -- the registry and status -------------------------------------------------------------

    async def register(self, origins: Iterable[str], now_ms: int) -> None:
        """List hosts consumers fetch from (status finds them here, without SCAN)."""
        mapping = {origin: now_ms for origin in origins}
        if mapping:
            await self._redis.zadd(HOSTS, mapping)

    async def known(self, since_ms: int = 0) -> list[str]:
        rows = await self._redis.zrangebyscore(HOSTS, since_ms, "+inf")
        return sorted(cast(list[str], rows))

    async def status(self, origin: str, now_ms: int) -> dict[str, Any]:
        k = HostKeys(origin)
        pipe = self._redis.pipeline(transaction=False)
        pipe.zcount(k.permits, now_ms, "+inf")
        pipe.hgetall(k.state)
        in_flight, state = await pipe.execute()
        blocked = int(state.get("blocked_until") or 0)
        robots_ms = int(state.get("robots_delay_ms") or 0)
        delay_ms = max(int(state.get("delay_ms") or 0), robots_ms)
        asked = _seconds(state.get("robots_delay_asked"))
        return {
            "host": origin,
            "in_flight": int(in_flight),
            "limit": int(state["limit"]) if state.get("limit") else None,
            "delay_s": delay_ms / 1000,
            "robots_delay_s": robots_ms / 1000,
            # the Crawl-delay the robots.txt asked for, when --max-crawl-delay capped it
            "robots_delay_capped_from": asked if asked > robots_ms / 1000 else None,
            "blocked_until": blocked if blocked > now_ms else None,
            "block_reason": state.get("block_reason") if blocked > now_ms else None,
            "blocks": int(state.get("blocks") or 0),
            "started": int(state.get("started") or 0),
            "last_at": int(state.get("last_at") or 0) or None,
        }


def _seconds(text: str | None) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0
