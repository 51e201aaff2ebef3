"""The dashboard's data endpoint against a real redis-server: crawls in every state, dead
letters, consumers and a blocked host; the same data as ``status --json``; no write
command ever sent (Redis's own command statistics, and an ACL user allowed to read only);
no secret shown; the token the page asks for; 500 crawls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any
from unittest.mock import patch

import pytest
import redis
from aiohttp.test_utils import TestClient, TestServer
from conftest import run
from redis.asyncio.connection import Connection

from invcrawl.dashboard.server import SAMPLER, Sampler, build_app
from invcrawl.dashboard.snapshot import DASHBOARD_CRAWLS
from invcrawl.frontier.connection import connect
from invcrawl.frontier.keys import HOSTS, HostKeys
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import status_view
from support.cli import REPO
from support.fleetdata import add_crawl, now_ms

READER, READER_PASSWORD = "dash-reader", "s3cret-reader-pw"


def populate(client: redis.Redis) -> dict[str, Any]:
    now = now_ms(client)
    add_crawl(client, "p-producing", "producing", tasks=0, done=0)
    running = add_crawl(client, "r-running", "running", tasks=100, done=40, started_ago_s=20)
    add_crawl(client, "f-finished", "finished", tasks=12, done=12)
    failed = add_crawl(client, "x-failed", "failed", tasks=0, producer="failed")
    client.hset(failed.meta, mapping={"producer": "failed", "error": "inventory: HTTP 404"})
    # two dead letters on the running crawl, with their reasons and payloads
    for i, (task_id, reason) in enumerate([("a1" * 8, "http_500"), ("b2" * 8, "lease_expired")]):
        client.zadd(running.dlq, {task_id: now - 5000 + i})
        client.hset(
            running.dlq_why,
            task_id,
            json.dumps({"reason": reason, "error": f"boom {i}", "tries": 5, "at": now}),
        )
        task = {"v": 1, "id": task_id, "url": f"https://u:pw@r.example/p{i}.html", "entries": []}
        client.hset(running.task, task_id, json.dumps(task))
    # a live consumer on the running crawl, and one silent for 5 minutes
    client.zadd(running.consumers, {"h-1-aa": now - 500, "h-2-bb": now - 300_000})
    client.hset(
        running.cinfo,
        mapping={
            "h-1-aa": json.dumps({"host": "h", "pid": 1, "slots": [0, 1], "held": 3}),
            "h-2-bb": json.dumps({"host": "h", "pid": 2, "slots": [], "held": 0}),
        },
    )
    # a host blocked by a 429 for another minute, with 2 of 4 permits in flight
    host = HostKeys("https://r.example:443")
    client.zadd(HOSTS, {"https://r.example:443": now})
    client.zadd(host.permits, {"h-1-aa:1": now + 30_000, "h-1-aa:2": now + 30_000})
    client.hset(
        host.state,
        mapping={
            "limit": 4,
            "delay_ms": 250,
            "blocked_until": now + 60_000,
            "block_reason": "429",
            "blocks": 1,
            "last_at": now - 100,
        },
    )
    return {"now": now}


@asynccontextmanager
async def dashboard(
    url: str, secret: str | None = None, interval: float = 0.05, focus: str | None = None
) -> AsyncIterator[TestClient[Any, Any]]:
    frontier = Frontier(connect(url))
    app = build_app(Sampler(frontier, url, 30_000, interval=interval), secret, focus)
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()
        await frontier.aclose()


async def get_status(client: TestClient[Any, Any]) -> dict[str, Any]:
    response = await client.get("/api/status")
    assert response.status == 200, await response.text()
    data: dict[str, Any] = await response.json()
    return data


@pytest.fixture
def reader_url(redis_url: str, sync_redis: redis.Redis) -> Iterator[str]:
    """The test server as the read-only user of the compose deployment: the rules of
    ``invcrawl-reader`` in deploy/redis/users.acl.in, exactly (the dashboard's user)."""
    acl = (REPO / "deploy" / "redis" / "users.acl.in").read_text()
    (line,) = [ln for ln in acl.splitlines() if ln.startswith("user invcrawl-reader ")]
    rules = line.split()[2:]
    rules = [r.replace("@READER_PASSWORD@", READER_PASSWORD) for r in rules]
    sync_redis.execute_command("ACL", "SETUSER", READER, *rules)
    yield redis_url.replace("redis://", f"redis://{READER}:{READER_PASSWORD}@", 1)
    sync_redis.acl_deluser(READER)


def test_the_data_endpoint_shows_every_state(reader_url: str, sync_redis: redis.Redis) -> None:
    populate(sync_redis)

    async def job() -> tuple[dict[str, Any], dict[str, Any]]:
        async with dashboard(reader_url) as client:
            page = await get_status(client)
        frontier = Frontier(connect(reader_url))
        try:
            fleet = (await status_view(frontier, None, 30_000))[0].as_dict()
        finally:
            await frontier.aclose()
        return page, fleet

    page, fleet = run(job())
    assert page["error"] is None
    crawls = {c["crawl_id"]: c for c in page["crawls"]}
    assert {c: crawls[c]["state"] for c in crawls} == {
        "p-producing": "producing",
        "r-running": "running",
        "f-finished": "finished",
        "x-failed": "failed",
    }
    # open crawls first, as in `status`
    assert [c["crawl_id"] for c in page["crawls"]][:2] == ["p-producing", "r-running"]
    running = crawls["r-running"]
    assert (running["pages_done"], running["pages_total"], running["pages_dead"]) == (40, 100, 2)
    assert running["items_by_status"]["ok"] == 119
    assert running["items_by_status"]["anchor_missing"] == 1
    assert 1.5 < running["rate_pages_s"] < 2.5 and running["eta_s"] > 0
    assert running["consumers_alive"] == 1
    assert crawls["x-failed"]["error"] == "inventory: HTTP 404"
    assert "counters" not in running  # the page shows items by status, not raw counters

    # the same data as `status --json`: one code path, the page only trims and masks
    assert set(fleet) <= set(page)
    assert [c["crawl_id"] for c in fleet["crawls"]] == [c["crawl_id"] for c in page["crawls"]]
    # (the rate is pages over the time since the start: read a moment later, it moves)
    steady = {k: v for k, v in fleet["totals"].items() if k != "rate_pages_s"}
    assert steady == {k: v for k, v in page["totals"].items() if k != "rate_pages_s"}
    assert page["totals"]["rate_pages_s"] == pytest.approx(fleet["totals"]["rate_pages_s"], 0.1)
    assert fleet["consumers"] == page["consumers"] and fleet["hosts"] == page["hosts"]

    (host,) = page["hosts"]
    assert (host["in_flight"], host["limit"], host["delay_s"]) == (2, 4, 0.25)
    assert host["blocked_until"] > page["server_time"] and host["block_reason"] == "429"

    consumers = {c["id"]: c for c in page["consumers"]}
    assert consumers["h-1-aa"]["alive"] and not consumers["h-2-bb"]["alive"]
    assert consumers["h-1-aa"]["crawls"]["r-running"] == {
        "slots": [0, 1],
        "held": 3,
        "last_beat": consumers["h-1-aa"]["last_beat"],
    }
    assert page["totals"]["consumers_alive"] == 1

    dead = page["dead_letters"]
    assert [(d["crawl_id"], d["reason"], d["tries"]) for d in dead] == [
        ("r-running", "lease_expired", 5),
        ("r-running", "http_500", 5),
    ]
    # nothing secret: the Redis password and a page URL's password are masked
    text = json.dumps(page)
    assert READER_PASSWORD not in text and "u:pw@" not in text
    assert page["redis"].startswith(f"redis://{READER}:***@")
    assert dead[0]["url"] == "https://u:***@r.example/p1.html"


def test_throughput_is_sampled_from_successive_snapshots(
    redis_url: str, sync_redis: redis.Redis
) -> None:
    keys = add_crawl(sync_redis, "moving", "running", tasks=1000, done=0)

    async def job() -> dict[str, Any]:
        async with dashboard(redis_url, interval=0.05) as client:
            await get_status(client)
            for _ in range(5):
                sync_redis.hincrby(keys.stats, "pages_done", 10)
                await asyncio.sleep(0.12)
            return await get_status(client)

    page = run(job())
    tp = page["throughput"]
    (series,) = tp["series"]
    assert series["crawl_id"] == "moving" and tp["other"] == []
    assert sum(series["rates"]) * tp["bucket_s"] == 50  # every page counted once


def test_a_dashboard_session_sends_no_write_command(
    redis_url: str, sync_redis: redis.Redis
) -> None:
    """Redis's own account of the session: every command the dashboard sent, checked
    against the server's command table (no command flagged ``write``)."""
    populate(sync_redis)
    sync_redis.config_resetstat()

    async def job() -> None:
        async with dashboard(redis_url) as client:
            await client.get("/")
            await get_status(client)
            async with client.get("/api/events") as events:
                seen = 0
                async for line in events.content:
                    seen += line.startswith(b"data: ")
                    if seen == 3:
                        break

    run(job())
    stats = sync_redis.info("commandstats")
    sent = {name.removeprefix("cmdstat_") for name in stats}
    assert {"hgetall", "time"} <= sent, sent  # it did read the fleet
    writes = []
    for name in sent:
        info = sync_redis.execute_command("COMMAND", "INFO", name)
        (spec,) = info.values()
        if "write" in spec["flags"] or "@write" in spec.get("acl_categories", []):
            writes.append(name)
    assert writes == [], f"the dashboard sent write commands: {writes}"


def test_the_page_asks_for_the_token(redis_url: str) -> None:
    async def job() -> None:
        async with dashboard(redis_url, secret="tok-123") as client:
            page = await client.get("/")
            assert page.status == 200 and "Content-Security-Policy" in page.headers
            assert (await client.get("/api/status")).status == 401
            assert (await client.get("/api/events")).status == 401
            wrong = await client.post("/api/login", json={"token": "nope"})
            assert wrong.status == 401
            bearer = {"Authorization": "Bearer tok-123"}
            assert (await client.get("/api/status", headers=bearer)).status == 200
            right = await client.post("/api/login", json={"token": "tok-123"})
            assert right.status == 200
            cookie = right.cookies["invcrawl_dashboard"]
            assert "tok-123" not in cookie.value and cookie["httponly"]
            data = await get_status(client)  # the session cookie is sent back
            assert "tok-123" not in json.dumps(data)

    run(job())


def round_trips_of_one_snapshot(redis_url: str) -> tuple[dict[str, Any], int]:
    """One snapshot of the fleet, and how many times it wrote to Redis's socket."""
    sends = 0
    original = Connection.send_packed_command

    async def counting(self: Connection, *args: Any, **kwargs: Any) -> None:
        nonlocal sends
        sends += 1
        await original(self, *args, **kwargs)

    async def job() -> dict[str, Any]:
        nonlocal sends
        async with dashboard(redis_url, interval=5) as client:
            await get_status(client)
            assert client.app is not None
            sends = 0
            with patch.object(Connection, "send_packed_command", counting):
                await client.app[SAMPLER].sample()
            return await get_status(client)

    page = run(job())
    return page, sends


def test_five_hundred_crawls_cost_as_many_round_trips_as_five(
    redis_url: str, sync_redis: redis.Redis
) -> None:
    """A snapshot reads every crawl in a fixed number of pipelined round trips, so 500
    crawls cost what 5 do in waiting on Redis (a time budget would be the machine's)."""
    for i in range(5):
        add_crawl(sync_redis, f"site-{i:03d}", "running", tasks=200, done=i)
    _, few = round_trips_of_one_snapshot(redis_url)
    for i in range(500):
        state = ("running", "finished", "producing", "failed")[i % 4]
        add_crawl(sync_redis, f"site-{i:03d}", state, tasks=200, done=(i * 7) % 200)
    page, many = round_trips_of_one_snapshot(redis_url)
    assert len(page["crawls"]) == 500 <= DASHBOARD_CRAWLS and page["totals"]["open"] == 250
    assert many == few, (few, many)


def test_crawl_id_opens_the_page_filtered(redis_url: str) -> None:
    async def job() -> str:
        async with dashboard(redis_url, focus='docs.x"<y') as client:
            return await (await client.get("/")).text()

    page = run(job())
    assert '<meta name="invcrawl-filter" content="docs.x&quot;&lt;y">' in page
