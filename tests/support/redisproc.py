"""A redis-server for the hardening tests: ACL files, passwords and TLS, where the
plain-text PING that ``frontier.server.RedisServer`` waits for is refused (NOAUTH) or
impossible (TLS only). Ready when its log says so."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from frontier.server import RedisServer, RedisServerError

READY = "Ready to accept connections"


def system_redis_server() -> str | None:
    """Debian's redis-server (built with TLS), not the one a wheel may put on PATH."""
    for candidate in ("/usr/bin/redis-server", "/usr/local/bin/redis-server"):
        if Path(candidate).exists():
            return candidate
    return shutil.which("redis-server")


class LoggedRedisServer(RedisServer):
    def start(self, timeout: float = 30.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.logfile.unlink(missing_ok=True)
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
                    f"redis-server exited with {self.process.returncode}: {self._log_tail()}"
                )
            if self.logfile.exists() and READY in self.logfile.read_text(errors="replace"):
                return
            time.sleep(0.02)
        self.kill()
        raise RedisServerError(f"redis-server not ready within {timeout:.0f}s")

    def stop(self, timeout: float = 30.0) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: a clean shutdown without AUTH
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
