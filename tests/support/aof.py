"""Read what a redis-server recorded: the commands of its append-only file.

Redis writes the effects of every script to its AOF (each script call as one
MULTI/EXEC of the commands it ran, with the values it computed, such as the server
time a lua script read), before it replies when ``appendfsync always``. So the AOF of
a test's own server is an exact log of what the frontier decided and when, by the
server's clock: the test reads host permits granted and blocks set from it instead of
timing requests at an HTTP server, which a loaded machine delays at random.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def aof_files(data_dir: Path) -> list[Path]:
    """The AOF files of a server's data dir, oldest first: Redis 7's multi-part
    ``appendonlydir`` (in its manifest's order) or Redis 6's one ``appendonly.aof``."""
    multi = data_dir / "appendonlydir"
    if multi.is_dir():
        (manifest,) = multi.glob("*.manifest")
        names = []
        for line in manifest.read_text().splitlines():
            fields = line.split()
            names.append((fields[5] if len(fields) > 5 else "", fields[1]))
        # base first, then the increments in their sequence order
        ordered = [n for kind, n in names if kind == "b"] + [n for kind, n in names if kind == "i"]
        return [multi / name for name in ordered]
    return [data_dir / "appendonly.aof"]


def commands(data_dir: Path) -> Iterator[list[bytes]]:
    """Every command of the server's AOF, in order (a torn last record is skipped)."""
    for path in aof_files(data_dir):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            if data[pos : pos + 1] != b"*":
                break  # an RDB preamble is not expected (aof-use-rdb-preamble on rewrite)
            end = data.index(b"\r\n", pos)
            count = int(data[pos + 1 : end])
            pos = end + 2
            args = []
            for _ in range(count):
                end = data.find(b"\r\n", pos)
                if end < 0:
                    return
                size = int(data[pos + 1 : end])
                args.append(data[end + 2 : end + 2 + size])
                pos = end + 2 + size + 2
            if pos > len(data):
                return
            yield args


def hset_values(data_dir: Path, key: str, field: str) -> list[int]:
    """Every value ``HSET key ... field VALUE ...`` wrote, in order, as integers."""
    out = []
    wanted, name = key.encode(), field.encode()
    for args in commands(data_dir):
        if args[0].upper() in (b"HSET", b"HMSET") and args[1] == wanted:
            pairs = args[2:]
            for i in range(0, len(pairs) - 1, 2):
                if pairs[i] == name:
                    out.append(int(pairs[i + 1]))
    return out
