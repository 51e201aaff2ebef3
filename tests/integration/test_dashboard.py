"""The dashboard's data endpoints against a real redis-server holding crawls in several
states: the same data as `invcrawl status --json`, dead letters with the redrive command,
the token, a masked Redis URL, and not one write command sent to Redis."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import redis
from aiohttp.test_utils import TestClient, TestServer
from conftest import run

from common.config import Config, ConfigError
from common.tasks import Task, TaskEntry
from frontier.connection import connect
from frontier.session import Frontier
from frontier.status import status_view
from invcrawl.dashboard import build_app, check_bind

pytestmark = pytest.mark.integration

ENTRY = (TaskEntry("f", "py", "function", 1, "f", "-"),)
WRITES = {
    "hset", "hsetnx", "hdel", "hincrby", "set", "del", "xadd", "zadd", "zrem", "rpush",
    "lpush", "lpop", "sadd", "srem", "eval", "evalsha", "pexpire", "expire", "multi", "exec",
    "xgroup", "xack", "xtrim", "flushdb", "flushall",
}  # fmt: skip


async def _crawls(frontier: Frontier) -> None:
    """running (2 pages, one claimed), failed (inventory 404), finished (one dead page)."""
    run_ = frontier.crawl("run")
    await run_.open({"site": "http://a.test/"}, 2, 1)
    await run_.enqueue(
        [Task("aa01", "http://a.test/p.html", ENTRY), Task("aa02", "http://a.test/q.html", ENTRY)]
    )
    await run_.produced({"entries": 2, "pages": 2, "tasks": 2}, 2)
    (held,) = await run_.claim("consumer-1", [0, 1], 1, False, 60_000)
    info = {"host": "box", "pid": 42, "slots": [0, 1], "held": 1, "lease_ms": 60_000}
    await run_.renew("consumer-1", [held], 60_000, info)
    await frontier.crawl("bad").produce_failed(
        "HTTP 404 fetching http://b.test/objects.inv", {"site": "http://b.test/"}
    )
    done = frontier.crawl("done")
    await done.open({"site": "http://c.test/"}, 2, 1)
    await done.enqueue([Task("cc01", "http://c.test/x.html", ENTRY)])
    await done.produced({"entries": 1, "pages": 1, "tasks": 1}, 1)
    (claim,) = await done.claim("consumer-2", [0, 1], 1, False, 60_000)
    await done.fail(claim, {"reason": "HTTP 403"}, 0, 1, dead_now=True)
    assert await done.is_complete()


def _write_calls(client: redis.Redis) -> dict[str, int]:
    stats = client.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(v["calls"])
        for name, v in stats.items()
        if name.removeprefix("cmdstat_").split("|")[0] in WRITES
    }


def test_endpoints_read_only_and_same_data_as_status(fresh_redis: Any) -> None:
    url = fresh_redis.url.replace("redis://", "redis://:s3cret-not-really@", 1)

    async def setup() -> None:
        frontier = Frontier(connect(fresh_redis.url))
        await _crawls(frontier)
        await frontier.aclose()

    run(setup())
    sync = redis.Redis.from_url(fresh_redis.url, decode_responses=True)
    before = _write_calls(sync)
    config = dataclasses.replace(Config(), redis=fresh_redis.url, dashboard_token="t0ken")

    async def job() -> tuple[Any, ...]:
        frontier = Frontier(connect(fresh_redis.url))
        app = build_app(frontier, dataclasses.replace(config, redis=url))
        async with TestClient(TestServer(app)) as client:
            unauth = await client.get("/api/status")
            headers = {"Authorization": "Bearer t0ken"}
            fleet = await (await client.get("/api/status", headers=headers)).json()
            one = await (await client.get("/api/crawl/done?token=t0ken")).json()
            running = await (await client.get("/api/crawl/run", headers=headers)).json()
            missing = await client.get("/api/crawl/nope", headers=headers)
            html = await (await client.get("/")).text()
        other = Frontier(connect(fresh_redis.url))
        reference, _ = await status_view(other, None, config.lease_ms)
        await other.aclose()
        return unauth.status, fleet, one, running, missing.status, html, reference

    unauth, fleet, one, running, missing, html, reference = run(job())
    assert unauth == 401 and missing == 404
    assert {c["crawl_id"]: c["state"] for c in fleet["crawls"]} == {
        "run": "running",
        "bad": "failed",
        "done": "finished",
    }
    strip = lambda d: {k: v for k, v in d.items() if k not in ("server_time", "settled", "redis")}  # noqa: E731
    assert [strip(c) for c in fleet["crawls"]] == [strip(c) for c in reference["crawls"]]
    assert fleet["redis"].startswith("redis://:***@") and "s3cret" not in str(fleet)
    assert one["pages_dead"] == 1 and one["dead_letters"][0]["reason"] == "HTTP 403"
    assert one["redrive_command"] == "invcrawl dlq redrive --all --crawl-id done"
    (consumer,) = running["consumers"]
    assert consumer["id"] == "consumer-1" and consumer["alive"] and consumer["slots"] == [0, 1]
    assert consumer["host"] == "box" and consumer["held"] == 1
    assert "<title>invcrawl dashboard</title>" in html and "/api/status" in html
    assert _write_calls(sync) == before  # the dashboard sent no write command
    sync.close()


def test_only_loopback_binds_without_a_token() -> None:
    for bind in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        check_bind(bind, None)
    for bind in ("0.0.0.0", "192.168.1.5", "::"):
        with pytest.raises(ConfigError, match="--token"):
            check_bind(bind, None)
        check_bind(bind, "secret")
