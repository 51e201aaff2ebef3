"""A redis-server for the hardening tests: ACL files, passwords and TLS, where the
plain-text PING that ``invcrawl.localredis.server.RedisServer`` waits for is refused (NOAUTH) or
impossible (TLS only). Ready when its log says so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from invcrawl.localredis.server import RedisServer

READY = "Ready to accept connections"


def system_redis_server() -> str | None:
    """Debian's redis-server (built with TLS), not the one a wheel may put on PATH."""
    for candidate in ("/usr/bin/redis-server", "/usr/local/bin/redis-server"):
        if Path(candidate).exists():
            return candidate
    return shutil.which("redis-server")


class LoggedRedisServer(RedisServer):
    def start(self, timeout: float = 30.0) -> None:
        self.logfile.unlink(missing_ok=True)
        super().start(timeout)

    def ready(self) -> bool:
        # PING is refused (NOAUTH) or impossible (TLS only): the log says when it is up.
        return self.logfile.exists() and READY in self.logfile.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: a clean shutdown without AUTH
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
