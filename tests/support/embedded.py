"""The processes of an embedded Redis (localredis/embedded.py), found from outside as an
operator would: the service (``python -P -m invcrawl.localredis.embedded DATA_DIR ...``) and its
``redis-server`` (working directory: the data dir). Tests wait for none to be left."""

from __future__ import annotations

import os
from pathlib import Path

import redis

from support.crawl import wait_for


def server_processes(data_dir: Path) -> list[int]:
    """The pids of the data dir's service and redis-server."""
    where = str(data_dir.resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        service = b"invcrawl.localredis.embedded" in cmdline and where.encode() in cmdline
        if service or (comm == "redis-server" and cwd == where):
            found.append(int(entry.name))
    return found


def redis_pid(data_dir: Path) -> int | None:
    pids = [p for p in server_processes(data_dir) if comm(p) == "redis-server"]
    return pids[0] if pids else None


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def wait_stopped(data_dir: Path, timeout: float = 60) -> None:
    """Wait until neither the service nor redis-server of ``data_dir`` is left."""
    wait_for(
        lambda: not server_processes(data_dir),
        timeout,
        f"the embedded Redis of {data_dir} to stop",
        interval=0.1,
        diagnose=lambda: str(server_processes(data_dir)),
    )


def client(data_dir: Path) -> redis.Redis:
    """A client of the running embedded Redis, from its port and password files (as the
    redis-cli cookbook does; it is not a user: it keeps nothing running)."""
    port = int((data_dir / "port").read_text())
    secret = (data_dir / "password").read_text().strip()
    return redis.Redis(port=port, password=secret, decode_responses=True)


def raw_client(data_dir: Path) -> redis.Redis:
    """:func:`client` without decoding: for replies that hold items' binary (zstd) frames,
    as ``XINFO STREAM``'s first and last entries do."""
    port = int((data_dir / "port").read_text())
    return redis.Redis(port=port, password=password(data_dir))


def password(data_dir: Path) -> str:
    return (data_dir / "password").read_text().strip()
