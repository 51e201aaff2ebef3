"""Who the dashboard answers, and as whom it reads Redis. On a loopback bind it answers
loopback Host names only (a web page could otherwise read it through DNS rebinding);
beyond loopback it refuses to serve as a Redis user that can write, found by probes
that change nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from aiohttp.test_utils import TestClient, TestServer
from conftest import run

from invcrawl.dashboard.access import HostCheck
from invcrawl.dashboard.server import Sampler, build_app
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import free_port
from support.cli import REPO, invcrawl

PASSWORD = "role-password-0123456789"


@pytest.mark.parametrize(
    ("host", "accepted"),
    [
        ("localhost:8780", True),
        ("LOCALHOST", True),
        ("127.0.0.1:8780", True),
        ("127.8.9.10", True),
        ("[::1]:8780", True),
        ("dash.localhost:8780", True),
        ("evil.example:8780", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.evil.example", False),
        ("10.0.0.5:8780", False),
        ("", False),
        (None, False),
    ],
)
def test_a_loopback_bind_answers_loopback_host_names_only(host: str | None, accepted: bool) -> None:
    assert HostCheck("127.0.0.1").accepts(host) is accepted
    assert HostCheck("::1").accepts(host) is accepted
    assert HostCheck("0.0.0.0").accepts(host)  # a token guards a wider bind instead


def test_allow_host_names_more() -> None:
    check = HostCheck("127.0.0.1", ("dash.internal", "[fd00::1]"))
    assert check.accepts("dash.internal:8780") and check.accepts("[fd00::1]:80")
    assert not check.accepts("other.internal")


@asynccontextmanager
async def served(url: str, hosts: HostCheck) -> AsyncIterator[TestClient[Any, Any]]:
    frontier = Frontier(connect(url))
    client = TestClient(
        TestServer(build_app(Sampler(frontier, url, 30_000, 0.05), None, None, hosts))
    )
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()
        await frontier.aclose()


@pytest.mark.integration
def test_the_server_refuses_a_rebound_host(redis_url: str) -> None:
    async def job() -> dict[str, int]:
        async with served(redis_url, HostCheck("127.0.0.1")) as client:
            out = {}
            for host in ("127.0.0.1", "localhost:8780", "attacker.example"):
                for path in ("/", "/api/status", "/api/events"):
                    reply = await client.get(path, headers={"Host": host})
                    out[f"{host}{path}"] = reply.status
                    reply.close()
            return out

    statuses = run(job())
    assert all(code == 403 for key, code in statuses.items() if key.startswith("attacker"))
    assert all(code == 200 for key, code in statuses.items() if not key.startswith("attacker"))


def role_rules(role: str) -> list[str]:
    acl = (REPO / "deploy" / "redis" / "users.acl.in").read_text()
    (line,) = [ln for ln in acl.splitlines() if ln.startswith(f"user invcrawl-{role} ")]
    return [r.replace(f"@{role.upper()}_PASSWORD@", PASSWORD) for r in line.split()[2:]]


@pytest.fixture
def as_role(redis_url: str, sync_redis: redis.Redis) -> Iterator[Any]:
    made: list[str] = []

    def url(role: str) -> str:
        sync_redis.execute_command("ACL", "SETUSER", f"invcrawl-{role}", *role_rules(role))
        made.append(f"invcrawl-{role}")
        return redis_url.replace("redis://", f"redis://invcrawl-{role}:{PASSWORD}@", 1)

    yield url
    for user in made:
        sync_redis.acl_deluser(user)


@pytest.mark.integration
def test_write_probes_find_every_role_that_can_write_and_change_nothing(
    redis_url: str, sync_redis: redis.Redis, as_role: Any
) -> None:
    urls = {role: as_role(role) for role in ("reader", "exporter", "consumer", "producer")}
    urls["default"] = redis_url
    sync_redis.config_resetstat()

    async def probe(url: str) -> str | None:
        frontier = Frontier(connect(url))
        try:
            return await frontier.write_allowed()
        finally:
            await frontier.aclose()

    found = {role: run(probe(url)) for role, url in urls.items()}
    assert found == {
        "reader": None,
        "exporter": "XTRIM",
        "consumer": "SET",
        "producer": "SET",
        "default": "SET",
    }
    assert sync_redis.dbsize() == 0  # nothing was written by any probe


@pytest.mark.e2e
def test_a_dashboard_beyond_loopback_refuses_a_writer(
    redis_url: str, as_role: Any, tmp_path: Path
) -> None:
    for role, url in (("default", redis_url), ("consumer", as_role("consumer"))):
        result = invcrawl(
            "dashboard", "--redis", url, "--bind", "0.0.0.0", "--port", str(free_port()),
            "--token", "a-token-for-the-page", cwd=tmp_path,
        )  # fmt: skip
        assert result.code == 2, (role, result.stderr)
        (line,) = result.error_lines
        assert "may write" in line and "read-only user" in line, line
        assert PASSWORD not in result.stderr
