"""Scripts a server lost (a restart) are loaded again as the deployment's least-privilege
users may: ``SCRIPT LOAD`` and ``EVALSHA``, never ``EVAL`` (deploy/redis/users.acl.in).
A consumer's claim over several crawls (one pipelined round trip, frontier/claims.py)
after a ``SCRIPT FLUSH`` claims, as the shipped consumer user, instead of stopping on
NOPERM (the compose suite's Redis restart found it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from conftest import run
from test_store import make_task

from invcrawl.frontier.claims import claim_many
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import free_port
from support.acl import render_acl, role_url
from support.redisproc import LoggedRedisServer

pytestmark = pytest.mark.integration


@pytest.fixture
def acl_server(tmp_path: Path) -> Iterator[LoggedRedisServer]:
    acl = tmp_path / "users.acl"
    render_acl(acl, inspector=True)
    server = LoggedRedisServer(tmp_path / "redis", port=free_port(), extra=["--aclfile", str(acl)])
    server.start()
    yield server
    server.stop()


def test_a_consumer_claims_across_crawls_after_the_server_lost_its_scripts(
    acl_server: LoggedRedisServer,
) -> None:
    port = acl_server.port

    async def produce() -> None:
        client = connect(role_url(port, "producer"))
        frontier = Frontier(client)
        for i in range(3):
            crawl = frontier.crawl(f"acl-{i}")
            await crawl.open({"site": "x"}, 2, 1)
            await crawl.enqueue([make_task(10 * i + j) for j in range(i + 1)])
        await client.aclose()

    async def consume() -> Any:
        client = connect(role_url(port, "consumer"))
        frontier = Frontier(client)
        asks = [(frontier.crawl(f"acl-{i}"), [0, 1], 2) for i in range(3)]
        try:
            return await claim_many(asks, "c1", False, 30_000)
        finally:
            await client.aclose()

    run(produce())
    inspector = redis.Redis.from_url(role_url(port, "inspector"))
    inspector.script_flush()  # what a restarted server holds: no script
    consumer = redis.Redis.from_url(role_url(port, "consumer"))
    with pytest.raises(redis.exceptions.NoPermissionError):
        consumer.eval("return 1", 0)  # the control: this user may not EVAL
    consumer.close()
    got = run(consume())
    assert [len(claims) for claims in got] == [1, 2, 2]
    inspector.close()
