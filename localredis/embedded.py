"""The embedded Redis: one private ``redis-server`` per data dir (``--data-dir``,
``./.invcrawl`` by default), a local service shared by every invcrawl command run on it
without ``--redis``, and open to its owner only.

**Shared.** Every command using it is a *user* for as long as it runs: it holds a
shared ``flock`` on ``users.lock``. The kernel drops that lock when the process exits,
however it exits (SIGKILL included), and a forked child (the producer of
``produce --consume``) holds it with its parent. The server is started and stopped by a
small *service* process (``python -P -m invcrawl.localredis.embedded``, in its own session, so no
signal for the terminal reaches it): it starts ``redis-server``, then checks every
0.2 s whether any user is left (an exclusive lock on ``users.lock`` is free only when
none is), and once none has been for ``IDLE_GRACE`` seconds it stops Redis (first compacting the AOF
when it replays commands: localredis/aof.py; then SIGTERM: the AOF is flushed and
fsynced) and exits. So the server outlives no user and no user
outlives the server, whatever signal ends a command, and a command started during the
grace reuses it. ``server.lock`` serialises joining, starting and stopping, so the
service's last check and a new user's registration never interleave.

``service.lock`` is held by the service and, through the inherited descriptor, by its
``redis-server``: while anything still holds it, the AOF may still be written, and no
second server is started on the data dir. If the service is SIGKILLed, its
``redis-server`` gets SIGTERM from the kernel (``PR_SET_PDEATHSIG`` on Linux).

**Private.** The data dir is made ``0700``; the password (``password``, 64 random hex
digits, mode ``0600``, created once and kept) reaches ``redis-server`` on its standard
input and clients through the URL this hands to the command (never on a command line:
``crawl`` lets its children join as users themselves). ``CONFIG``, ``DEBUG``,
``MODULE``, replication and ``MIGRATE`` are renamed to nothing for every client, on
every supported Redis version, so even the owner's clients cannot make the server write
files elsewhere. ``port`` holds the current port while the server runs; with
``password``, it is what ``bin/redis-cli`` (a wrapper written at each start) reads to
talk to this server (docs/redis-keys.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from invcrawl.localredis import aof
from invcrawl.localredis.server import (
    Connection,
    RedisServer,
    RedisServerError,
    ReplyError,
    find_redis_server,
    on_parent_death,
    ping,
)

IDLE_GRACE = 2.0  # seconds without a user before the service stops Redis
POLL = 0.2  # how often the service looks for users
JOIN_WAIT = 30.0  # how long a user waits for a server that is starting or stopping
# No client of the embedded server may run these: CONFIG SET dir/dbfilename + SAVE
# writes a file anywhere the server's user can; DEBUG and MODULE run code; the rest
# make the server copy its data to, or from, another one.
DISABLED = ("CONFIG", "DEBUG", "MODULE", "SLAVEOF", "REPLICAOF", "SYNC", "PSYNC", "MIGRATE")
FAILOVER = "FAILOVER"  # Redis 6.2 and later only

SERVER_LOCK, USERS_LOCK, SERVICE_LOCK = "server.lock", "users.lock", "service.lock"
PASSWORD, PORT = "password", "port"
Popen = subprocess.Popen[bytes]


def _lock(path: Path) -> int:
    """A descriptor of ``path`` (created ``0600``, never through a symlink) to flock."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)


@contextlib.contextmanager
def _held(path: Path) -> Iterator[None]:
    fd = _lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _free(fd: int) -> bool:
    """Whether nobody else holds a lock on ``fd``'s file (probed with an exclusive one)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _service_alive(data_dir: Path) -> bool:
    fd = _lock(data_dir / SERVICE_LOCK)
    try:
        return not _free(fd)
    finally:
        os.close(fd)


def private_dir(data_dir: Path) -> Path:
    """Create the data dir ``0700`` (or make it so); refuse one another user owns."""
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = data_dir.stat()
    except OSError as exc:
        raise RedisServerError(
            f"cannot create --data-dir {data_dir}: {(exc.strerror or str(exc)).lower()}"
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise RedisServerError(f"--data-dir {data_dir} is not a directory")
    if info.st_uid != os.geteuid():
        raise RedisServerError(
            f"--data-dir {data_dir} belongs to another user (uid {info.st_uid}): its "
            "embedded Redis is theirs; pass another --data-dir"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        data_dir.chmod(0o700)
    return data_dir


def password(data_dir: Path) -> str:
    """The server's password: created once (``0600``), then read."""
    path = data_dir / PASSWORD
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32) + "\n")
            out.flush()
            os.fsync(out.fileno())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise RedisServerError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd) as src:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise RedisServerError(f"{path} is not a file of yours: remove it")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(src.fileno(), 0o600)
        secret = src.read().strip()
    if not secret or not secret.isalnum():
        raise RedisServerError(f"{path} holds no usable password: remove it")
    return secret


def _read_port(data_dir: Path) -> int | None:
    try:
        return int((data_dir / PORT).read_text().strip())
    except (OSError, ValueError):
        return None


def url_of(port: int, secret: str) -> str:
    return f"redis://:{secret}@127.0.0.1:{port}/0"


@contextlib.contextmanager
def embedded_redis(data_dir: Path, fsync: str = "always") -> Iterator[str]:
    """Yield the URL (password included) of the data dir's Redis, registered as one of
    its users until the block ends; the server is started if none runs (or was started
    by :func:`prestart`: this then waits for it)."""
    data_dir = private_dir(Path(data_dir))
    starting = _STARTING.pop(data_dir.resolve(), None)
    if starting is not None:
        try:
            with starting:  # (server.lock held since prestart, released once it is up)
                port = _ready(starting.service, data_dir)
            yield url_of(port, starting.secret)
        finally:
            os.close(starting.users)
        return
    users = _lock(data_dir / USERS_LOCK)
    try:
        with _held(data_dir / SERVER_LOCK):
            fcntl.flock(users, fcntl.LOCK_SH)  # a user from now on
            secret = password(data_dir)
            port = _join(data_dir, secret) or _start(data_dir, secret, fsync)
        yield url_of(port, secret)
    finally:
        os.close(users)  # (a forked child holding it keeps the registration)


class _Starting:
    """A service :func:`prestart` started: ``server.lock`` held (closed on exit of the
    ``with``), this process registered as a user, the service's first line to read."""

    def __init__(self, server_lock: int, users: int, secret: str, service: Popen) -> None:
        self.server_lock, self.users, self.secret, self.service = (
            server_lock, users, secret, service
        )  # fmt: skip

    def __enter__(self) -> _Starting:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.server_lock)


_STARTING: dict[Path, _Starting] = {}  # data dir (resolved) -> its service, starting


def prestart(data_dir: Path, fsync: str = "always") -> None:
    """Start the data dir's service now if none runs, without waiting for it: a command
    calls this before its imports, which then run while redis-server loads the AOF
    (~0.4 s of a cold ``versions``, issue 47, 5); :func:`embedded_redis` then waits for
    it. ``server.lock`` stays held until then, as while any user starts the server, and
    this process is a user from now on (a process that exits first leaves a service
    that stops after ``IDLE_GRACE``). Nothing when a service runs, another process holds
    ``server.lock`` (joining, starting or stopping), or a legacy server may run: the
    usual path then (and its errors, in one line)."""
    data_dir = Path(data_dir)
    if data_dir.resolve() in _STARTING or (data_dir / "server.json").exists():
        return
    data_dir = private_dir(data_dir)
    server_lock = _lock(data_dir / SERVER_LOCK)
    try:
        fcntl.flock(server_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(server_lock)
        return
    users = -1
    try:
        if _service_alive(data_dir):
            os.close(server_lock)
            return
        users = _lock(data_dir / USERS_LOCK)
        fcntl.flock(users, fcntl.LOCK_SH)
        secret = password(data_dir)
        service = _spawn(data_dir, fsync)
    except BaseException:
        os.close(server_lock)
        if users >= 0:
            os.close(users)
        raise
    _STARTING[data_dir.resolve()] = _Starting(server_lock, users, secret, service)


def let_go() -> None:
    """Forget the services :func:`prestart` started that no :func:`embedded_redis` joined:
    ``server.lock`` released, no longer a user (each stops after ``IDLE_GRACE``)."""
    while _STARTING:
        _, starting = _STARTING.popitem()
        with starting:
            os.close(starting.users)
        if starting.service.stdout is not None:
            starting.service.stdout.close()


def _join(data_dir: Path, secret: str) -> int | None:
    """The port of the running server, or None when none runs (``server.lock`` held).
    A service still alive without an answering server is starting up or going away:
    wait for either."""
    deadline = time.monotonic() + JOIN_WAIT
    while _service_alive(data_dir):
        port = _read_port(data_dir)
        if port is not None and ping(port, password=secret):
            return port
        if time.monotonic() > deadline:
            raise RedisServerError(
                f"the embedded Redis of {data_dir} does not answer; see {data_dir}/redis.log"
            )
        time.sleep(0.05)
    return None


def _start(data_dir: Path, secret: str, fsync: str) -> int:
    """Start the service (``server.lock`` held) and wait for its first line: ``ready
    PORT`` or ``error MESSAGE``."""
    return _ready(_spawn(data_dir, fsync), data_dir)


def _spawn(data_dir: Path, fsync: str) -> Popen:
    """The service process, started (``server.lock`` held)."""
    binary = find_redis_server()
    _refuse_a_legacy_server(data_dir)
    (data_dir / PORT).unlink(missing_ok=True)
    where = str(data_dir.resolve())
    # -P: the working directory is not put on the import path (a folder holding a
    # `frontier/` of its own must not replace this one)
    argv = [sys.executable, "-P", "-m", "invcrawl.localredis.embedded", where, fsync, binary]
    with open(data_dir / "service.log", "ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,  # no Ctrl-C, no SIGHUP of the terminal
        )


def _ready(service: Popen, data_dir: Path) -> int:
    """The port in the service's first line (``ready PORT``), or its ``error MESSAGE``
    raised."""
    assert service.stdout is not None
    with service.stdout:
        line = service.stdout.readline().decode(errors="replace").strip()
    kind, _, detail = line.partition(" ")
    if kind == "ready" and detail.isdigit():
        return int(detail)
    service.wait()
    raise RedisServerError(
        detail
        if kind == "error"
        else f"the embedded Redis did not start; see {data_dir / 'service.log'}"
    )


def _refuse_a_legacy_server(data_dir: Path) -> None:
    """Earlier versions recorded their server in ``server.json`` and knew no service:
    a second server must never write the same AOF."""
    legacy = data_dir / "server.json"
    try:
        pid = int(json.loads(legacy.read_text()).get("pid") or 0)
    except (OSError, ValueError, AttributeError):
        return
    try:
        running = pid > 0 and b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        running = False
    if running:
        raise RedisServerError(
            f"a redis-server started by an earlier invcrawl (pid {pid}) still runs on "
            f"{data_dir}: stop it (kill {pid}) and run the command again"
        )
    legacy.unlink(missing_ok=True)


# -- the service process --------------------------------------------------------------


class _Stop(Exception):
    """SIGTERM to the service: stop Redis now."""


def _stop_now(signum: int, frame: Any) -> None:
    raise _Stop


def serve(data_dir: Path, fsync: str, binary: str) -> int:
    """The service: start Redis, say ``ready PORT`` on standard output (then detach
    from it), and stop Redis once no user has been left for ``IDLE_GRACE`` seconds (or
    on SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.umask(0o077)  # the AOF and the log: the owner's only
    alive = _lock(data_dir / SERVICE_LOCK)
    if not _free(alive):
        _say("error another embedded Redis service runs on this data dir")
        return 1
    fcntl.flock(alive, fcntl.LOCK_EX)
    disabled = DISABLED + ((FAILOVER,) if _knows_failover(binary) else ())
    server = RedisServer(
        data_dir, fsync=fsync, binary=binary, password=password(data_dir), disabled=disabled
    )
    try:
        # (the lock's descriptor goes with it: held while redis-server runs)
        server.start(
            start_new_session=False,
            pass_fds=(alive,),
            preexec_fn=on_parent_death(signal.SIGTERM),
        )
    except RedisServerError as exc:
        _say(f"error {exc}")
        return 1
    _write_port(data_dir, server.port)
    _write_cli(data_dir)
    _say(f"ready {server.port}")
    signal.signal(signal.SIGTERM, _stop_now)
    users = _lock(data_dir / USERS_LOCK)
    try:
        _wait_for_no_user(data_dir, server, users)
    except _Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with _held(data_dir / SERVER_LOCK):
            _stop(data_dir, server)
    return 0


def _say(line: str) -> None:
    """The one line the starting user waits for; then standard output goes away, so
    that it reads no more."""
    with contextlib.suppress(OSError):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def _wait_for_no_user(data_dir: Path, server: RedisServer, users: int) -> None:
    """Return once Redis is stopped: no user for ``IDLE_GRACE`` seconds (checked again,
    and Redis stopped, under ``server.lock``, so that no user joins in between), or
    redis-server died by itself."""
    idle_since: float | None = None
    while server.process is not None and server.process.poll() is None:
        if not _free(users):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= IDLE_GRACE:
            with _held(data_dir / SERVER_LOCK):
                if _free(users):
                    _stop(data_dir, server)
                    return
            idle_since = None
        time.sleep(POLL)
    # redis-server died under its users (they see connection errors). Not under
    # server.lock: a user holding it waits for this service to go.
    (data_dir / PORT).unlink(missing_ok=True)


def _stop(data_dir: Path, server: RedisServer) -> None:
    (data_dir / PORT).unlink(missing_ok=True)
    _compact(data_dir, server)
    server.stop()


def _compact(data_dir: Path, server: RedisServer) -> None:
    """Leave an AOF the next start loads fast (localredis/aof.py); a failure is only
    logged (service.log): the AOF as it is stays complete."""
    if server.process is None or server.process.poll() is not None:
        return
    try:
        client = Connection(server.port, server.password)
    except OSError as exc:
        print(f"invcrawl: AOF not compacted: {exc}", file=sys.stderr, flush=True)
        return
    try:
        aof.compact(client, data_dir)
    except (ReplyError, OSError) as exc:
        print(f"invcrawl: AOF not compacted: {exc}", file=sys.stderr, flush=True)
    finally:
        client.close()


def _knows_failover(binary: str) -> bool:
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
        major, minor = (int(x) for x in out.split("v=", 1)[1].split(".")[:2])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return False
    return (major, minor) >= (6, 2)


CLI = """#!/bin/sh
# redis-cli for the embedded Redis of this data dir (written by invcrawl at each start):
# its port and password are read from the files beside this folder at every call; the
# password goes in REDISCLI_AUTH, never on a command line.
D=$(dirname "$0")/..
REDISCLI_AUTH=$(cat "$D/password") && export REDISCLI_AUTH
exec {binary} -p "$(cat "$D/port")" "$@"
"""


def _write_cli(data_dir: Path) -> None:
    """``bin/redis-cli`` of the data dir (docs/redis-keys.md), when a redis-cli exists."""
    binary = shutil.which("redis-cli") or ""
    if not binary:
        return
    folder = data_dir / "bin"
    folder.mkdir(mode=0o700, exist_ok=True)
    tmp = folder / "redis-cli.tmp"
    tmp.write_text(CLI.format(binary=shlex.quote(binary)))
    tmp.chmod(0o700)
    os.replace(tmp, folder / "redis-cli")


def _write_port(data_dir: Path, port: int) -> None:
    tmp = data_dir / f"{PORT}.tmp"
    tmp.write_text(f"{port}\n")
    os.replace(tmp, data_dir / PORT)


def main(argv: list[str]) -> int:
    data_dir, fsync, binary = Path(argv[0]), argv[1], argv[2]
    return serve(data_dir, fsync, binary)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
