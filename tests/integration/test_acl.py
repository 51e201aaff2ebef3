"""Least-privilege Redis users: redis-server runs with the ACL file of deploy/redis
(rendered by deploy/redis/start.sh, as compose does), a crawl runs with those users
(producer, consumers, then the read-only tools and the exporter), and each user is
refused what it must not do: the dangerous commands, keys outside the project's, and
for the reader and exporter any write. And the data outlives a Redis restart: Redis >= 7
re-checks the ACL of every command of a MULTI/EXEC it loads from the AOF, as the
default user (docs/deploy.md, "Redis users")."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from invcrawl.localredis.server import free_port
from support.acl import INSPECTOR, PASSWORDS, render_acl, role_url
from support.aof import command_name, read_aof
from support.cli import clean_env, invcrawl
from support.crawl import Site, build_site
from support.httpserver import serve
from support.redisproc import LoggedRedisServer, system_redis_server
from support.synthsite import generate, module_name

pytestmark = pytest.mark.e2e

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


def _servers() -> list[str]:
    """Every distinct redis-server at hand (Debian's 7.0, a wheel's 6.2...), and those
    named in INVCRAWL_TESTS_REDIS_SERVERS (paths, ':'-separated, e.g. a 7.2 built from
    source): the ACL file must load and keep the data on each (compose runs 7.2)."""
    by_version: dict[str, str] = {}
    extra = [b for b in os.environ.get("INVCRAWL_TESTS_REDIS_SERVERS", "").split(":") if b]
    for binary in (system_redis_server(), shutil.which("redis-server"), *extra):
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
    return role_url(server.port, role)


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
    # The default user holds the AOF loader's writes, but nobody can log in as it: it is
    # off (and has no password), whatever password is given.
    for password in ["", "x", *PASSWORDS.values()]:
        as_default = redis.Redis(port=acl_redis.port, username="default", password=password)
        with pytest.raises(redis.exceptions.AuthenticationError):
            as_default.ping()
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
    # search reads the term logs and the vector log (GETRANGE) as the reader
    searched = invcrawl(
        "search", "read a page of items", "--json", "--redis", url(acl_redis, "reader"), cwd=work
    )
    assert searched.code == 0, searched.stderr

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


# -- the AOF reloads under the ACL file ------------------------------------------------------


@pytest.fixture(params=_servers())
def durable_acl_redis(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[LoggedRedisServer]:
    """The compose configuration: the rendered users, AOF with appendfsync always."""
    acl = tmp_path / "users.acl"
    render_acl(acl, inspector=True)  # a superuser for the test's looking (SCAN, DRYRUN)
    server = LoggedRedisServer(
        tmp_path / "redis",
        port=free_port(),
        binary=request.param,
        fsync="always",
        extra=["--aclfile", str(acl)],
    )
    server.start()
    yield server
    server.stop()


def inspector(server: LoggedRedisServer) -> redis.Redis:
    # Raw bytes: values are not all text (items are stored compressed).
    return redis.Redis(port=server.port, username=INSPECTOR[0], password=INSPECTOR[1])


def keyspace(conn: redis.Redis) -> dict[bytes, object]:
    """Every key without a TTL and its whole content (streams with their groups): what a
    restart must give back exactly. Keys with a TTL (slot owners, robots.txt cache) may
    expire in between and are left out."""
    snapshot: dict[bytes, object] = {}
    for key in conn.scan_iter(count=1000):
        if conn.pttl(key) != -1:
            continue
        kind = conn.type(key)
        value: object
        if kind == b"string":
            value = conn.get(key)
        elif kind == b"hash":
            value = conn.hgetall(key)
        elif kind == b"list":
            value = conn.lrange(key, 0, -1)
        elif kind == b"set":
            value = sorted(conn.smembers(key))
        elif kind == b"zset":
            value = conn.zrange(key, 0, -1, withscores=True)
        else:
            groups = conn.xinfo_groups(key)
            value = (
                conn.xrange(key),
                [(g["name"], g["last-delivered-id"], g["pending"]) for g in groups],
                [conn.xpending_range(key, g["name"], "-", "+", 10_000) for g in groups],
            )
        snapshot[key] = (kind, value)
    return snapshot


def _version(server: LoggedRedisServer) -> tuple[int, ...]:
    out = subprocess.run(
        [server.binary, "--version"], capture_output=True, text=True, check=True
    ).stdout
    return tuple(int(n) for n in out.split("v=")[1].split()[0].split("."))


@pytest.mark.timeout(400)
def test_the_aof_reloads_under_the_acl_file(
    tmp_path: Path, durable_acl_redis: LoggedRedisServer
) -> None:
    """Every kind of write the project makes (produce, consume, a dead page and its
    redrive, export --follow with retention, a refresh with a changed and a removed page,
    `crawl`), each as its own user; then Redis is SIGKILLed and restarted from its AOF:
    every key comes back, and no command of the AOF is refused. On Redis >= 7 every
    command the AOF holds inside MULTI/EXEC is also checked with ACL DRYRUN against the
    default user, the one Redis loads the AOF as."""
    server = durable_acl_redis
    work = tmp_path / "work"
    work.mkdir()
    root = tmp_path / "site"
    generate(root, pages=12, per_page=3)
    broken = f"/{module_name(5)}.html"
    failing = {"on": True}

    def fault(path: str) -> str | None:
        return "403" if failing["on"] and path == broken else None

    def run(role: str, *args: str) -> None:
        done = invcrawl(*args, "--redis", url(server, role), cwd=work, timeout=180)
        assert done.code in (0, 3), (role, args, done.stderr)

    def follow_until(count: int) -> None:
        """export --follow as the exporter until the stream's entries are all in its file
        (acknowledged, so that --retain-items exported trims them), then SIGTERM."""
        follower = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "export", "--follow", "-o", "follow.jsonl",
             "--crawl-id", "acl", "--redis", url(server, "exporter")],
            cwd=work, env=clean_env(), stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            followed = work / "follow.jsonl"
            while not followed.exists() or len(followed.read_text().splitlines()) < count:
                assert follower.poll() is None, follower.stderr.read() if follower.stderr else ""
                time.sleep(0.1)
        finally:
            follower.terminate()
            try:
                follower.wait(30)
            except subprocess.TimeoutExpired:  # where it is stuck (invcrawl/cli.py)
                follower.send_signal(signal.SIGUSR1)
                time.sleep(2)
                follower.kill()
                _, err = follower.communicate()
                pytest.fail(f"export --follow ignored SIGTERM for 30 s:\n{err[-6000:]}")

    with serve(root, fault, validators="etag") as http:  # a rewrite within a second is seen
        common = ("--crawl-id", "acl", "--max-tries", "1")
        run("producer", "produce", http.url, *common, "--retain-items", "exported")
        run("consumer", "consume", "--burst", "--crawl-id", "acl")
        look = inspector(server)
        entries = look.xlen("invcrawl:{acl}:items")
        assert look.zcard("invcrawl:{acl}:dlq") == 1
        follow_until(entries)
        failing["on"] = False
        run("producer", "dlq", "redrive", "--all", "--crawl-id", "acl")
        run("consumer", "consume", "--burst", "--crawl-id", "acl")
        # A refresh: one page changed, one removed from the site and its inventory.
        generate(root, pages=11, per_page=3, filler_bytes=4100)
        run("producer", "produce", http.url, "--refresh", *common)
        run("consumer", "consume", "--burst", "--crawl-id", "acl")
        written = len((work / "follow.jsonl").read_text().splitlines())
        follow_until(written + 1)
        other = build_site(tmp_path / "other", pages=4, project="Other")
        run("consumer", "crawl", str(other.root), "--consumers", "2", "-o", "other.jsonl")

    assert int(look.hget("invcrawl:{acl}:stats", "items_trimmed") or 0) > 0  # retention ran
    before = keyspace(look)
    assert sum(key.startswith(b"invcrawl:{acl}:") for key in before) > 5
    aof = read_aof(server.data_dir)
    assert aof.transactions > 0  # the scripts' effects, as MULTI/EXEC
    queued = {command_name(c) for c in aof.in_multi}
    print(f"{len(aof.commands)} AOF commands, {aof.transactions} transactions:", sorted(queued))

    if _version(server) >= (7,):
        # Each command of a transaction, as the AOF loader will run it, is allowed.
        pipe = look.pipeline(transaction=False)
        for command in aof.in_multi:
            pipe.execute_command("ACL", "DRYRUN", "default", *command)
        refusals = {
            command_name(c): answer
            for c, answer in zip(aof.in_multi, pipe.execute(raise_on_error=False), strict=True)
            if answer != b"OK"
        }
        assert not refusals, refusals

    server.kill()
    server.start()
    look = inspector(server)
    log = server.logfile.read_text(errors="replace")
    assert "NOPERM" not in log and "CRITICAL" not in log, log[-2000:]
    after = keyspace(look)
    assert after == before


@pytest.mark.parametrize("binary", _servers())
def test_a_runaway_script_of_a_writer(tmp_path: Path, binary: str) -> None:
    """The writers may load any Lua (docs/deploy.md says why that is accepted): a
    CPU-bound one blocks Redis. What the docs promise about it: other clients get BUSY
    (not a hang) once the busy threshold passes; the writer cannot SCRIPT KILL it (nor can
    any invcrawl user); SIGKILL and a restart bring back every acknowledged write and
    nothing of the script."""
    acl = tmp_path / "users.acl"
    render_acl(acl, inspector=True)
    server = LoggedRedisServer(
        tmp_path / "redis",
        port=free_port(),
        binary=binary,
        fsync="always",
        # busy-reply-threshold (its 6.2 name, which 7.x accepts): 5 s by default
        extra=["--aclfile", str(acl), "--lua-time-limit", "100"],
    )
    server.start()
    meta = "invcrawl:{runaway}:meta"
    try:
        client(server, "consumer").hset(meta, "state", "running")
        reader = client(server, "reader")
        assert reader.hget(meta, "state") == "running"
        others = {role: client(server, role) for role in PASSWORDS}
        for conn in others.values():
            conn.ping()  # logged in before Redis is busy
        runaway = client(server, "consumer")
        sha = runaway.script_load(
            "redis.call('HSET', KEYS[1], 'state', 'hijacked') while true do end"
        )

        def run() -> None:
            with contextlib.suppress(redis.RedisError):
                runaway.evalsha(sha, 1, meta)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        busy = ""
        while not busy:  # until the script has run past the threshold
            try:
                reader.hget(meta, "state")
            except redis.exceptions.ResponseError as exc:
                busy = str(exc)
            assert thread.is_alive()
            time.sleep(0.02)
        assert busy.startswith("BUSY"), busy
        for role, conn in others.items():
            assert refused(conn, "SCRIPT", "KILL"), role
            assert refused(conn, "SHUTDOWN", "NOSAVE"), role
    finally:
        server.kill()
    server.start()
    try:
        look = inspector(server)
        assert look.hget(meta, "state") == b"running"  # nothing of the script
        log = server.logfile.read_text(errors="replace")
        assert "NOPERM" not in log and "CRITICAL" not in log
    finally:
        server.stop()
