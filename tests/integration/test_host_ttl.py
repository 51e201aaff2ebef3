"""A host's keys in Redis expire (frontier/hosts.py and its scripts, against a real
redis-server): the permits a lease after the last one, the state STATE_TTL_MS after its
last write and never before the start it schedules or the block it holds. A state with
``next_at`` 1e23 and no TTL outlived the robots.txt that asked for it."""

from __future__ import annotations

from typing import Any

import redis
from conftest import run

from invcrawl.frontier.connection import connect
from invcrawl.frontier.hosts import STATE_TTL_MS, Hosts
from invcrawl.frontier.keys import HostKeys
from invcrawl.frontier.session import Frontier

HOST = "http://127.0.0.1:8000"
KEYS = HostKeys(HOST)


def on_redis(redis_url: str, job: Any) -> Any:
    async def main() -> Any:
        frontier = Frontier(connect(redis_url))
        try:
            return await job(frontier.hosts)
        finally:
            await frontier.aclose()

    return run(main())


def test_every_host_key_expires(redis_url: str, sync_redis: redis.Redis) -> None:
    async def acquire(hosts: Hosts) -> Any:
        await hosts.set_robots_delay(HOST, 60_000, 1e20)
        return await hosts.acquire(HOST, "c:1", 4, 0, 30_000)

    assert on_redis(redis_url, acquire).granted
    assert 0 < sync_redis.pttl(KEYS.permits) <= 2 * 30_000
    assert STATE_TTL_MS - 60_000 < sync_redis.pttl(KEYS.state) <= STATE_TTL_MS
    state = sync_redis.hgetall(KEYS.state)
    assert state["robots_delay_ms"] == "60000" and float(state["robots_delay_asked"]) == 1e20

    async def renew(hosts: Hosts) -> Any:
        return await hosts.renew(HOST, ["c:1"], 90_000)

    assert on_redis(redis_url, renew) == set()
    assert 60_000 < sync_redis.pttl(KEYS.permits) <= 2 * 90_000  # follows the longest lease

    async def block(hosts: Hosts) -> Any:
        return await hosts.block(HOST, 3_600_000, "HTTP 429")

    on_redis(redis_url, block)
    assert sync_redis.pttl(KEYS.state) > 3_600_000  # outlives the block it holds

    async def status(hosts: Hosts) -> Any:
        return await hosts.status(HOST, 0)

    shown = on_redis(redis_url, status)
    assert shown["robots_delay_capped_from"] == 1e20 and shown["robots_delay_s"] == 60


def test_a_long_delay_keeps_its_state_until_the_start_it_schedules(
    redis_url: str, sync_redis: redis.Redis
) -> None:
    delay = 3 * STATE_TTL_MS  # --host-delay is the user's: any length

    async def job(hosts: Hosts) -> Any:
        return await hosts.acquire(HOST, "c:1", 4, delay, 30_000)

    assert on_redis(redis_url, job).granted
    assert sync_redis.pttl(KEYS.state) > delay
