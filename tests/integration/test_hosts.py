"""Fleet-wide host politeness (frontier/hosts.py and its scripts) against a real
redis-server: the concurrency limit, the delay between starts, robots.txt Crawl-delay,
Retry-After blocks, permit leases (renewed, lost, expired permits dropped)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import run

from invcrawl.fetch import politeness
from invcrawl.fetch.politeness import HostGate
from invcrawl.frontier.connection import connect
from invcrawl.frontier.hosts import Hosts
from invcrawl.frontier.keys import HostKeys
from invcrawl.frontier.retry import Outages
from invcrawl.frontier.session import Frontier

HOST = "http://127.0.0.1:8000"
LEASE = 30_000


def on_redis(redis_url: str, job: Any) -> Any:
    async def main() -> Any:
        frontier = Frontier(connect(redis_url))
        try:
            return await job(frontier.hosts)
        finally:
            await frontier.aclose()

    return run(main())


async def permits_in_redis(redis_url: str) -> int:
    """The permits of HOST in Redis, read with a client of the test's own."""
    client = connect(redis_url)
    try:
        return int(await client.zcard(HostKeys(HOST).permits))
    finally:
        await client.aclose()


def test_at_most_limit_permits_then_one_per_release(redis_url: str) -> None:
    async def job(hosts: Hosts) -> Any:
        grants = [await hosts.acquire(HOST, f"c:{i}", 2, 0, LEASE) for i in range(3)]
        await hosts.release(HOST, "c:0")
        again = await hosts.acquire(HOST, "c:3", 2, 0, LEASE)
        other = await hosts.acquire("http://127.0.0.2:8000", "c:4", 2, 0, LEASE)
        return grants, again, other

    grants, again, other = on_redis(redis_url, job)
    assert [g.granted for g in grants] == [True, True, False]
    assert grants[2].why == "full" and 1 <= grants[2].wait_ms <= 25
    assert again.granted and other.granted  # another host is not affected


def test_starts_are_spaced_by_the_delay_and_crawl_delay_raises_it(redis_url: str) -> None:
    # Delays of seconds, so that a loaded machine's pauses between two calls (tens or
    # hundreds of ms) stay well inside every margin asserted below.
    async def job(hosts: Hosts) -> Any:
        first = await hosts.acquire(HOST, "c:1", 10, 1000, LEASE)
        early = await hosts.acquire(HOST, "c:2", 10, 1000, LEASE)
        await hosts.set_robots_delay(HOST, 3000)  # robots.txt asks for 3 s
        await asyncio.sleep(early.wait_ms / 1000 + 0.01)
        due = await hosts.acquire(HOST, "c:3", 10, 1000, LEASE)
        await asyncio.sleep(0.21)
        slower = await hosts.acquire(HOST, "c:4", 10, 1000, LEASE)
        return first, early, due, slower

    first, early, due, slower = on_redis(redis_url, job)
    assert first.granted and not early.granted and early.why == "delay"
    assert 500 <= early.wait_ms <= 1000
    assert due.granted  # the next start, once the delay has passed
    # from `due` on, starts are 3 s apart: 0.21 s later it is not time yet
    assert not slower.granted and slower.why == "delay" and slower.wait_ms > 1000


def test_a_block_stops_every_start_and_is_never_shortened(redis_url: str) -> None:
    async def job(hosts: Hosts) -> Any:
        until = await hosts.block(HOST, 2000, "HTTP 429")
        kept = await hosts.block(HOST, 100, "HTTP 503")  # a shorter block changes nothing
        blocked = await hosts.acquire(HOST, "c:1", 4, 0, LEASE)
        status = await hosts.status(HOST, until - 1900)
        await asyncio.sleep(blocked.wait_ms / 1000 + 0.01)
        after = await hosts.acquire(HOST, "c:2", 4, 0, LEASE)
        return until, kept, blocked, status, after

    until, kept, blocked, status, after = on_redis(redis_url, job)
    assert kept == until
    assert not blocked.granted and blocked.why == "blocked" and 1000 < blocked.wait_ms <= 2000
    assert status["blocked_until"] == until and status["block_reason"] == "HTTP 429"
    assert after.granted


def test_permits_are_leased_renewed_and_dropped_when_expired(redis_url: str) -> None:
    async def job(hosts: Hosts) -> Any:
        # Leases of 0.8 s and steps 0.4 s apart: 0.4 s of margin for a loaded machine.
        await hosts.acquire(HOST, "dead:1", 1, 0, 800)  # its holder dies
        refused = await hosts.acquire(HOST, "live:1", 1, 0, 800)
        await asyncio.sleep(0.9)
        taken = await hosts.acquire(HOST, "live:1", 1, 0, 800)  # the expired one is dropped
        await asyncio.sleep(0.4)
        renewed = await hosts.renew(HOST, ["live:1"], 800)
        await asyncio.sleep(0.4)  # 0.8 s after it was taken: alive thanks to the renewal
        kept = await hosts.renew(HOST, ["live:1", "dead:1"], 800)
        await asyncio.sleep(1.0)
        lost = await hosts.renew(HOST, ["live:1"], 800)  # expiry is final
        return refused, taken, renewed, kept, lost

    refused, taken, renewed, kept, lost = on_redis(redis_url, job)
    assert not refused.granted and taken.granted
    assert renewed == set() and kept == {"dead:1"} and lost == {"live:1"}


def test_robots_is_shared_and_fetched_by_one_consumer(redis_url: str) -> None:
    async def job(hosts: Hosts) -> Any:
        locks = [await hosts.lock_robots(HOST, f"c{i}", 1000) for i in range(3)]
        before = await hosts.robots(HOST)
        await hosts.store_robots(HOST, {"status": 200, "body": "User-agent: *\n"}, 60)
        return locks, before, await hosts.robots(HOST)

    locks, before, after = on_redis(redis_url, job)
    assert locks == [True, False, False] and before is None
    assert after == {"status": 200, "body": "User-agent: *\n"}


def _gate(frontier: Frontier, delay: float = 0.0, reuse: bool = True) -> Any:

    stats: dict[str, int] = {}

    def stat(name: str, n: int) -> None:
        stats[name] = stats.get(name, 0) + n

    gate = HostGate(
        frontier.hosts,
        "c1",
        limit=2,
        delay=delay,
        lease=30.0,
        outages=Outages(stat, lambda: False),
        reuse=reuse,
    )
    return gate, stats


def test_a_permit_is_reused_by_the_next_request_then_given_back(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a delay in force, a finished request's permit goes to this consumer's next
    request to the host without a Redis round trip; unused, it is back in Redis within
    SPARE_IDLE; never past REUSE_WINDOW; a block or close gives spares back at once.
    SPARE_IDLE is 2 s here and each check waits for what it expects, never for a time: a
    loaded machine may pause longer than the real 100 ms between two steps."""
    monkeypatch.setattr(politeness, "SPARE_IDLE", 2.0)
    monkeypatch.setattr(politeness, "REUSE_WINDOW", 600.0)

    async def main() -> Any:
        frontier = Frontier(connect(redis_url))
        gate, stats = _gate(frontier)
        permits = connect(redis_url)  # the test's own client, to look at the permits
        key = HostKeys(HOST).permits

        async def out_within(seconds: float) -> int:
            """The permits out once none is (polled for up to ``seconds``)."""
            deadline = asyncio.get_running_loop().time() + seconds
            while (
                count := await permits.zcard(key)
            ) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.02)
            return int(count)

        try:
            first = await gate.acquire(HOST)
            await gate.release(HOST, first)
            in_redis_while_spare = await permits.zcard(key)
            second = await gate.acquire(HOST)  # the spare one
            await gate.release(HOST, second)
            after_idle = await out_within(30.0)  # SPARE_IDLE, then one round trip
            third = await gate.acquire(HOST)
            monkeypatch.setattr(politeness, "REUSE_WINDOW", 0.0)  # its window is over
            await gate.release(HOST, third)  # past the window: given back at once
            after_window = await permits.zcard(key)
            monkeypatch.setattr(politeness, "REUSE_WINDOW", 600.0)
            fourth = await gate.acquire(HOST)
            await gate.release(HOST, fourth)
            await gate.block(HOST, 0.2, "HTTP 429")  # a block drops the spare at once
            after_block = await permits.zcard(key)
            await asyncio.sleep(0.25)
            fifth = await gate.acquire(HOST)
            await gate.release(HOST, fifth)
            await gate.close()
            after_close = await permits.zcard(key)
            return (
                first,
                second,
                third,
                in_redis_while_spare,
                after_idle,
                after_window,
                after_block,
                after_close,
                stats,
            )
        finally:
            await permits.aclose()
            await frontier.aclose()

    first, second, third, spare, idle, window, block, close, stats = run(main())
    assert second == first and third != first
    assert spare == 1  # a spare permit still counts against the host's limit
    assert (idle, window, block, close) == (0, 0, 0, 0)
    assert stats["invcrawl/host_permits_reused"] == 1
    assert stats["invcrawl/host_permits"] == 4


def test_no_reuse_where_a_delay_is_in_force_or_for_a_producer(redis_url: str) -> None:
    async def main() -> Any:
        frontier = Frontier(connect(redis_url))
        try:
            tokens = []
            for delay, reuse in ((0.05, True), (0.0, False)):
                gate, _ = _gate(frontier, delay=delay, reuse=reuse)
                first = await gate.acquire(HOST)
                await gate.release(HOST, first)
                tokens.append((first, await gate.acquire(HOST)))
                await gate.release(HOST, tokens[-1][1])
            return tokens, await permits_in_redis(redis_url)
        finally:
            await frontier.aclose()

    tokens, left = run(main())
    assert all(a != b for a, b in tokens)
    assert left == 0


def test_a_request_waiting_for_a_full_host_gets_a_released_permit_at_once(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full host, this consumer's own released permit goes straight to its request
    that waits (no wait for the next look at Redis); a waiter cancelled after the hand-
    over gives the permit back; a permit held by another consumer is still waited for.
    Each step waits for the state it needs (a request waiting, a permit back in Redis),
    never for a time: a loaded machine once released the permit before the request
    waited for it. The reuse window is widened for the same reason: it is not what this
    test is about."""
    monkeypatch.setattr(politeness, "REUSE_WINDOW", 600.0)

    async def main() -> Any:
        frontier = Frontier(connect(redis_url))
        gate, stats = _gate(frontier)  # limit 2

        async def until_a_request_waits() -> None:
            for _ in range(20_000):
                if gate.waiting(HOST) == 1:
                    return
                await asyncio.sleep(0.005)
            raise AssertionError("the request never waited for a released permit")

        async def until_out(count: int) -> None:
            for _ in range(5_000):
                if await permits_in_redis(redis_url) == count:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"never {count} permit(s) out in Redis")

        other, _ = _gate(frontier)
        other.consumer_id = "c2"
        try:
            held = [await gate.acquire(HOST), await other.acquire(HOST)]  # host full
            waiting = asyncio.ensure_future(gate.acquire(HOST, max_wait=600.0))
            # It asked Redis (full) and waits up to 25 ms to ask again: release in the
            # middle of such a wait (nothing else runs between the check and the release).
            await until_a_request_waits()
            asked_before = stats.get("invcrawl/host_wait/full", 0)
            await gate.release(HOST, held[0])
            for _ in range(3):  # a few turns of the loop: no timer, no Redis look
                await asyncio.sleep(0)
            assert waiting.done()
            handed = waiting.result()
            await gate.release(HOST, handed)  # idle: back to Redis within SPARE_IDLE
            await until_out(1)

            # Cancelled right after the hand-over: the permit is not kept by anyone.
            mine = await gate.acquire(HOST)  # full again
            waiting = asyncio.ensure_future(gate.acquire(HOST, max_wait=600.0))
            await until_a_request_waits()
            await gate.release(HOST, mine)
            assert not waiting.done()  # handed over, not yet resumed
            waiting.cancel()
            # back to Redis in the background: only the other consumer's stays out
            await until_out(1)
            after_cancel = await permits_in_redis(redis_url)
            await other.release(HOST, held[1])
            await other.close()
            await gate.close()
            return held, handed, asked_before, after_cancel, stats
        finally:
            await frontier.aclose()

    held, handed, asked, after_cancel, stats = run(main())
    assert handed == held[0] and asked >= 1
    assert stats["invcrawl/host_permits_reused"] == 1
    assert after_cancel == 1  # only the other consumer's permit is out
