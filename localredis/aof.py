"""Compaction of the embedded Redis's AOF before it stops, so that the next cold start
loads an RDB image instead of replaying every command ever written.

A command-by-command AOF of a 72 MB index took 6 s to load; the same data as an RDB
preamble loads several times faster (``bench/small_commands.py`` measures both). Redis
rewrites its AOF by itself only past ``auto-aof-rewrite-min-size`` and after doubling
since the last rewrite, so a data dir that grows crawl by crawl, each run a short one,
can keep replaying commands for ever. The service (localredis/embedded.py) therefore
asks for ``BGREWRITEAOF`` when the AOF has no preamble or its tail of commands has
grown past :data:`GROWN_BYTES` (or half its base), and waits for it to finish before
SIGTERM; a rewrite that fails or outlasts :data:`REWRITE_WAIT` is given up (the AOF as
it was stays complete: Redis switches files only once a rewrite is done).

Redis 7 keeps a multi-part AOF (``appendonlydir/``: a base file, ``.base.rdb`` with a
preamble, and incremental ones listed in a manifest); Redis 6 one ``appendonly.aof``,
which starts with ``REDIS`` when it has a preamble.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

GROWN_BYTES = 32 * 1024 * 1024  # commands appended since the last rewrite worth compacting
REWRITE_WAIT = 20.0  # seconds (below embedded.JOIN_WAIT: users wait while the service stops)
RDB_MAGIC = b"REDIS"
AOF_DIR, AOF_FILE = "appendonlydir", "appendonly.aof"


def has_preamble(data_dir: Path) -> bool:
    """Whether the AOF of ``data_dir`` starts with an RDB image (its base, in Redis 7)."""
    folder = data_dir / AOF_DIR
    if folder.is_dir():
        manifest = folder / f"{AOF_FILE}.manifest"
        try:
            lines = manifest.read_text(errors="replace").splitlines()
        except OSError:
            return False
        for line in lines:
            words = line.split()
            fields = dict(zip(words[::2], words[1::2], strict=False))
            if fields.get("type") == "b" and "file" in fields:
                return _starts_with_rdb(folder / fields["file"])
        return False
    return _starts_with_rdb(data_dir / AOF_FILE)


def _starts_with_rdb(path: Path) -> bool:
    try:
        with open(path, "rb") as aof:
            return aof.read(len(RDB_MAGIC)) == RDB_MAGIC
    except OSError:
        return False


def needs_compaction(preamble: bool, current_size: int, base_size: int) -> bool:
    """Whether to rewrite before stopping: no preamble (a non-empty AOF), or a tail of
    commands past :data:`GROWN_BYTES` and half the base."""
    if current_size <= 0:
        return False
    if not preamble:
        return True
    grown = current_size - base_size
    return grown > max(GROWN_BYTES, base_size // 2)


def compact(client: Any, data_dir: Path, wait: float = REWRITE_WAIT) -> bool:
    """Rewrite the AOF of the server ``client`` (a ``server.Connection``) talks to, when
    :func:`needs_compaction` says so, and wait for the rewrite; whether one was done."""
    info = client.info("persistence")
    if not int(info.get("aof_enabled", 0)):
        return False
    current, base = int(info.get("aof_current_size", 0)), int(info.get("aof_base_size", 0))
    if not needs_compaction(has_preamble(data_dir), current, base):
        return False
    if not int(info.get("aof_rewrite_in_progress", 0)):
        client.bgrewriteaof()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.05)
        info = client.info("persistence")
        busy = int(info.get("aof_rewrite_in_progress", 0))
        if not busy and not int(info.get("aof_rewrite_scheduled", 0)):
            return str(info.get("aof_last_bgrewrite_status", "")) == "ok"
    return False
