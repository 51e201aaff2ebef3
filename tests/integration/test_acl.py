"""Least-privilege Redis users: redis-server runs with the ACL file of deploy/redis
(rendered by deploy/redis/start.sh, as compose does), a crawl runs with those users
(producer, consumers, then the read-only tools and the exporter), and each user is
refused what it must not do: the dangerous commands, keys outside the project's, and
for the reader and exporter any write."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from frontier.server import free_port
from support.cli import REPO, clean_env, invcrawl
from support.crawl import Site, build_site
from support.httpserver import serve
from support.redisproc import LoggedRedisServer, system_redis_server

pytestmark = pytest.mark.e2e

START = REPO / "deploy" / "redis" / "start.sh"
PASSWORDS = {
    "producer": "producer-0123456789abcdef",
    "consumer": "consumer-0123456789abcdef",
    "reader": "reader-0123456789abcdef",
    "exporter": "exporter-0123456789abcdef",
}
ENV = {f"INVCRAWL_REDIS_{role.upper()}_PASSWORD": pw for role, pw in PASSWORDS.items()}
DANGEROUS = [
    ("FLUSHALL",),
    ("FLUSHDB",),
    ("CONFIG", "GET", "*"),
    ("CONFIG", "SET", "appendonly", "no"),
    ("KEYS", "*"),
    ("DEBUG", "SLEEP", "0"),
    ("SHUTDOWN", "NOSAVE"),
    ("SCRIPT", "FLUSH"),
    ("ACL", "LIST"),
    ("ACL", "SETUSER", "default", "on"),
    ("MONITOR",),
    ("CLIENT", "KILL", "TYPE", "normal"),
    ("SAVE",),
    ("BGREWRITEAOF",),
    ("SWAPDB", "0", "1"),
    ("MIGRATE", "127.0.0.1", "1", "invcrawl:x", "0", "10"),
]


def render_acl(out: Path) -> None:
    subprocess.run(
        ["sh", str(START), "render", str(out)],
        env={**os.environ, **ENV},
        check=True,
        capture_output=True,
    )


def _servers() -> list[str]:
    """Every distinct redis-server at hand (Debian's 7.0, a wheel's 6.2...): the ACL
    file must load on each (compose runs 7.2)."""
    by_version: dict[str, str] = {}
    for binary in (system_redis_server(), shutil.which("redis-server")):
        if binary:
            version = subprocess.run(
                [binary, "--version"], capture_output=True, text=True, check=False
            ).stdout.split(" sha=")[0]
            by_version.setdefault(version, binary)
    return sorted(by_version.values()) or ["redis-server"]


@pytest.fixture(params=_servers())
def acl_redis(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LoggedRedisServer]:
    acl = tmp_path / "users.acl"
    render_acl(acl)
    assert oct(acl.stat().st_mode & 0o777) == "0o600"  # passwords: owner only
    binary = request.param
    if not shutil.which(binary):
        pytest.skip("needs redis-server")
    server = LoggedRedisServer(
        tmp_path / "redis", port=free_port(), binary=binary, extra=["--aclfile", str(acl)]
    )
    server.start()
    yield server
    server.stop()


def url(server: LoggedRedisServer, role: str) -> str:
    return f"redis://invcrawl-{role}:{PASSWORDS[role]}@127.0.0.1:{server.port}/0"


def client(server: LoggedRedisServer, role: str) -> redis.Redis:
    return redis.Redis.from_url(url(server, role), decode_responses=True)


def refused(conn: redis.Redis, *command: str) -> bool:
    try:
        conn.execute_command(*command)
    except (redis.exceptions.NoPermissionError, redis.exceptions.AuthenticationError):
        return True
    except redis.exceptions.ResponseError as exc:
        # Redis >= 7 refuses DEBUG before the ACL check when enable-debug-command is no
        text = str(exc)
        return "NOPERM" in text or "no permissions" in text or "not allowed" in text
    return False


def test_a_crawl_with_least_privilege_users(tmp_path: Path, acl_redis: LoggedRedisServer) -> None:
    site = build_site(tmp_path / "site", pages=8)
    work = tmp_path / "work"
    work.mkdir()
    with serve(site.root) as http:  # over HTTP: host permits and robots.txt go through Redis
        _crawl_and_check(tmp_path, work, site, acl_redis, http.url)


def _crawl_and_check(
    tmp_path: Path, work: Path, site: Site, acl_redis: LoggedRedisServer, site_url: str
) -> None:
    # Nobody gets in without a user: the default user is off.
    anonymous = redis.Redis(port=acl_redis.port)
    with pytest.raises(redis.exceptions.AuthenticationError):
        anonymous.ping()
    assert redis.Redis(port=acl_redis.port, username="invcrawl-health", password="x").ping()

    produced = invcrawl("produce", site_url, "--redis", url(acl_redis, "producer"), cwd=work)
    assert produced.code == 0, produced.stderr
    consumed = invcrawl(
        "consume", "--burst", "--redis", url(acl_redis, "consumer"), cwd=work, timeout=120
    )
    assert consumed.code == 0, consumed.stderr
    for args in (["status", "--json"], ["report", "--json"], ["dlq", "list", "--json"]):
        result = invcrawl(*args, "--redis", url(acl_redis, "reader"), cwd=work)
        assert result.code == 0, (args, result.stderr)
    shown = invcrawl("status", "--json", "--redis", url(acl_redis, "reader"), cwd=work)
    (status,) = json.loads(shown.stdout)["crawls"]
    assert status["state"] == "finished"
    exported = invcrawl(
        "export", "-o", "items.jsonl", "--redis", url(acl_redis, "reader"), cwd=work
    )
    assert exported.code == 0, exported.stderr
    keys = {json.loads(line)["key"] for line in (work / "items.jsonl").read_text().splitlines()}
    assert keys == site.keys

    # export --follow needs its consumer group: the reader is refused in one line, the
    # exporter follows the stream.
    denied = invcrawl("export", "--follow", "--redis", url(acl_redis, "reader"), cwd=work)
    assert denied.code == 1 and "Traceback" not in denied.stderr, denied.stderr
    assert "Redis refused a command to this user" in denied.stderr, denied.stderr
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "invcrawl",
            "export",
            "--follow",
            "-o",
            "follow.jsonl",
            "--redis",
            url(acl_redis, "exporter"),
        ],
        cwd=work,
        env=clean_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        followed = work / "follow.jsonl"
        while time.monotonic() < deadline:
            if followed.exists() and len(followed.read_text().splitlines()) >= len(site.keys):
                break
            assert follower.poll() is None, follower.stderr.read() if follower.stderr else ""
            time.sleep(0.1)
        assert len(followed.read_text().splitlines()) == len(site.keys)
    finally:
        follower.terminate()
        follower.wait(10)

    # `crawl` (produce --consume beside consumers) runs as the consumer user, which has
    # the producer's commands too.
    other = build_site(tmp_path / "other", pages=4, project="Other")
    crawled = invcrawl(
        "crawl", str(other.root), "--redis", url(acl_redis, "consumer"), "--consumers", "2",
        "-o", "other.jsonl", cwd=work,
    )  # fmt: skip
    assert crawled.code == 0, crawled.stderr
    assert "consumer-0123456789abcdef" not in crawled.stderr

    # What each user must not do.
    crawl_id = status["crawl_id"]
    items = f"invcrawl:{{{crawl_id}}}:items"
    meta = f"invcrawl:{{{crawl_id}}}:meta"
    for role in PASSWORDS:
        conn = client(acl_redis, role)
        assert conn.ping()
        for command in DANGEROUS:
            assert refused(conn, *command), (role, command)
        assert refused(conn, "GET", "other:key"), role  # outside the project's keys
        assert refused(conn, "SET", "other:key", "x"), role
        assert refused(conn, "PUBLISH", "invcrawl:channel", "x"), role
        assert not refused(conn, "HGET", meta, "state"), role
    for role in ("reader", "exporter"):
        conn = client(acl_redis, role)
        for command in (
            ("DEL", meta),
            ("XADD", items, "*", "key", "k", "data", "{}"),
            ("XDEL", items, "0-1"),
            ("EVAL", "return 1", "0"),
            ("EVALSHA", "0" * 40, "0"),
            ("SCRIPT", "LOAD", "return 1"),
            ("RENAME", meta, "invcrawl:x"),
            ("EXPIRE", meta, "1"),
        ):
            assert refused(conn, *command), (role, command)
    # Only the exporter trims (--retain-items exported) and marks the trim.
    reader = client(acl_redis, "reader")
    assert refused(reader, "HSET", meta, "state", "running")
    assert refused(reader, "XTRIM", items, "MAXLEN", "0")
    producer = client(acl_redis, "producer")
    # (it may XADD: a refresh's tombstones) but never trim or delete stream entries
    assert refused(producer, "XTRIM", items, "MAXLEN", "0")
    assert refused(producer, "XDEL", items, "0-1")
    # A writer may load scripts, but a script runs with its user's rights only.
    consumer = client(acl_redis, "consumer")
    for body in (
        "return redis.call('FLUSHALL')",
        "return redis.call('CONFIG', 'GET', '*')",
        "return redis.call('SET', 'other:key', 'x')",
        "return redis.call('XTRIM', KEYS[1], 'MAXLEN', 0)",
    ):
        sha = consumer.script_load(body)
        with pytest.raises(redis.exceptions.ResponseError):
            consumer.evalsha(sha, 1, items)
    assert consumer.xlen(items) == len(site.keys)
    assert consumer.hget(meta, "state") == "finished"

    # `invcrawl forget`: refused in one line to the reader; the producer user may.
    other_id = next(
        c for c in client(acl_redis, "reader").smembers("invcrawl:crawls") if c != crawl_id
    )
    denied = invcrawl("forget", other_id, "--yes", "--redis", url(acl_redis, "reader"), cwd=work)
    assert denied.code == 1 and "Redis refused a command to this user" in denied.stderr
    forgotten = invcrawl(
        "forget", other_id, "--yes", "--redis", url(acl_redis, "producer"), cwd=work
    )
    assert forgotten.code == 0, forgotten.stderr
    assert not client(acl_redis, "reader").exists(f"invcrawl:{{{other_id}}}:meta")
