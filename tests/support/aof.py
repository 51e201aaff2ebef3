"""Read a Redis append-only file: the commands it holds, and which ran inside a
MULTI/EXEC transaction (Redis writes each Lua script's effects, and each command that
propagates several, that way).

Redis >= 7 keeps the AOF in ``appendonlydir/`` (a base file, then incremental files, in
the order of the manifest); Redis 6.2 in one ``appendonly.aof``. A base in RDB form (after
a rewrite with ``aof-use-rdb-preamble``) holds no commands and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

Command = tuple[bytes, ...]


@dataclass
class Aof:
    commands: list[Command] = field(default_factory=list)
    in_multi: list[Command] = field(default_factory=list)  # queued between MULTI and EXEC
    transactions: int = 0


def aof_files(data_dir: Path) -> list[Path]:
    """The AOF files of a data directory, in replay order."""
    multipart = data_dir / "appendonlydir"
    if multipart.is_dir():
        (manifest,) = multipart.glob("*.manifest")
        files = []
        for line in manifest.read_text().splitlines():
            words = line.split()
            name = words[words.index("file") + 1]
            kind = words[words.index("type") + 1]
            files.append((0 if kind == "b" else 1, int(words[words.index("seq") + 1]), name))
        return [multipart / name for _, _, name in sorted(files)]
    single = data_dir / "appendonly.aof"
    return [single] if single.exists() else []


def parse_commands(data: bytes) -> list[Command]:
    """The RESP arrays of an AOF file, as Redis writes them (``*N`` then N ``$len`` bulks)."""
    commands: list[Command] = []
    pos = 0
    while pos < len(data):
        if data[pos : pos + 1] != b"*":
            raise ValueError(f"not a RESP array at byte {pos}")
        end = data.index(b"\r\n", pos)
        count = int(data[pos + 1 : end])
        pos = end + 2
        args = []
        for _ in range(count):
            end = data.index(b"\r\n", pos)
            length = int(data[pos + 1 : end])
            pos = end + 2
            args.append(data[pos : pos + length])
            pos += length + 2
        commands.append(tuple(args))
    return commands


def read_aof(data_dir: Path) -> Aof:
    aof = Aof()
    for path in aof_files(data_dir):
        data = path.read_bytes()
        if data.startswith(b"REDIS"):  # an RDB base: data, not commands
            continue
        aof.commands.extend(parse_commands(data))
    queued: list[Command] | None = None
    for command in aof.commands:
        name = command[0].lower()
        if name == b"multi":
            queued = []
        elif name == b"exec":
            aof.in_multi.extend(queued or [])
            aof.transactions += 1
            queued = None
        elif queued is not None:
            queued.append(command)
    return aof


def command_name(command: Command) -> str:
    """``xgroup|setid`` for a container command, else the command's name, lower case."""
    name = command[0].decode().lower()
    if name in ("xgroup", "xinfo", "script", "client", "config", "object", "memory"):
        return f"{name}|{command[1].decode().lower()}"
    return name


def hset_values(data_dir: Path, key: str, field_name: str) -> list[int]:
    """Every value ``HSET key ... field VALUE ...`` wrote, in order, as integers: what a
    script decided and when, by the server's clock (a script's effects carry the values
    it computed, such as the server time it read)."""
    out = []
    wanted, name = key.encode(), field_name.encode()
    for command in read_aof(data_dir).commands:
        if command[0].lower() in (b"hset", b"hmset") and command[1] == wanted:
            pairs = command[2:]
            out += [int(pairs[i + 1]) for i in range(0, len(pairs) - 1, 2) if pairs[i] == name]
    return out
