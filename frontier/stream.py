"""The item stream's entries, read back (Redis reads only).

Every entry is one new, changed or removed item (``commit.lua``, ``tombstone.lua``):
fields ``key``, ``sum``, ``kind`` (new, update, removed), ``task`` and ``data``. ``data``
is binary, a zstd frame (``common/codec.py``), which the client's UTF-8 decoding of
replies would refuse: every read here asks for the reply undecoded (redis-py's
``NEVER_DECODE``) and decodes the text fields itself, into a :class:`StreamEntry`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, cast

import orjson
from redis.client import NEVER_DECODE
from redis.exceptions import NoPermissionError, ResponseError

from invcrawl.common.codec import item_bytes, item_json
from invcrawl.frontier.session import CrawlSession


class StreamKind(StrEnum):
    """An entry's ``kind``, as the scripts write it (``_prelude.lua``'s ``append_item``,
    ``tombstone.lua``)."""

    NEW = "new"  # a key's first item, or its return after a removal
    UPDATE = "update"  # a new checksum for a key already there
    REMOVED = "removed"  # a tombstone: the key left the inventory

    @classmethod
    def read(cls, raw: bytes) -> StreamKind | None:
        """The kind of a stored entry; None for one written without a known kind (by
        hand, or by a test), read as a change with nothing to compare it to."""
        return cls._value2member_map_.get(raw.decode("ascii"))  # type: ignore[return-value]


REMOVED = StreamKind.REMOVED
RAW = {NEVER_DECODE: True}
RawEntry = tuple[bytes, dict[bytes, bytes]]  # an entry as the undecoded reply holds it


@dataclass(frozen=True, slots=True)
class StreamEntry:
    id: str  # the stream entry id: the change feed's cursor
    key: str  # the item's key
    kind: StreamKind | None
    data: bytes  # the item as stored (common/codec.py), or a tombstone's JSON

    @property
    def removed(self) -> bool:
        return self.kind == REMOVED

    def item_json(self) -> str:
        """The item's JSON (a tombstone's: ``{"key": ..., "status": "removed"}``)."""
        return item_json(self.data)

    def item(self) -> dict[str, Any]:
        """The item, parsed."""
        item: dict[str, Any] = orjson.loads(item_bytes(self.data))
        return item


async def _call(session: CrawlSession, *args: Any) -> object:
    """One command, its reply undecoded."""
    return await session.raw(*args)


def stream_entry(raw: RawEntry) -> StreamEntry:
    entry_id, fields = raw
    return StreamEntry(
        id=entry_id.decode("ascii"),
        key=fields[b"key"].decode("utf-8"),
        kind=StreamKind.read(fields.get(b"kind", b"")),
        data=fields.get(b"data", b""),
    )


def stream_entries(raw: object) -> list[StreamEntry]:
    """The entries of an undecoded XRANGE-style reply (redis-py's stream list)."""
    return [stream_entry(entry) for entry in cast(list[RawEntry], raw or [])]


async def read_range(
    session: CrawlSession, start: str, end: str = "+", count: int | None = None
) -> list[StreamEntry]:
    """XRANGE: ``start``/``end`` as Redis takes them ("-", "+", "(id" exclusive)."""
    args: list[Any] = ["XRANGE", session.keys.items, start, end]
    if count is not None:
        args += ["COUNT", count]
    return stream_entries(await _call(session, *args))


async def read_ranges(session: CrawlSession, ids: list[str]) -> list[StreamEntry | None]:
    """The entries of ``ids`` in one pipelined round trip (None: no longer there)."""
    pipe = session.pipeline(transaction=False)
    for entry_id in ids:
        pipe.execute_command("XRANGE", session.keys.items, entry_id, entry_id, **RAW)
    found = [stream_entries(reply) for reply in await pipe.execute()]
    return [entries[0] if entries else None for entries in found]


async def first_id(session: CrawlSession) -> str | None:
    return _first_id(await _call(session, "XRANGE", session.keys.items, "-", "+", "COUNT", 1))


async def last_id(session: CrawlSession) -> str | None:
    return _first_id(await _call(session, "XREVRANGE", session.keys.items, "+", "-", "COUNT", 1))


def _first_id(reply: object) -> str | None:
    """The id of a stream list reply's first entry (its fields unread)."""
    entries = cast(list[RawEntry], reply or [])
    return entries[0][0].decode("ascii") if entries else None


def _streams(reply: object) -> list[StreamEntry]:
    """The entries of an undecoded XREAD / XREADGROUP reply on one stream (RESP2:
    ``[[stream key, [entry, ...]]]``; the stubs describe RESP3's dict)."""
    streams = cast(list[tuple[bytes, list[RawEntry]]], reply or [])
    return stream_entries(streams[0][1]) if streams else []


async def read_new(
    session: CrawlSession, after: str, count: int, block_ms: int
) -> list[StreamEntry]:
    """XREAD: entries after ``after`` (an id), waiting up to ``block_ms`` for one."""
    args = ["XREAD", "COUNT", count, "BLOCK", block_ms, "STREAMS", session.keys.items, after]
    return _streams(await _call(session, *args))


async def read_group(
    session: CrawlSession,
    group: str,
    consumer: str,
    cursor: str,
    *,
    count: int,
    block_ms: int | None,
) -> list[StreamEntry]:
    """XREADGROUP: ``cursor`` "0" re-reads the consumer's pending entries, ">" new ones
    (waiting up to ``block_ms``; None: not at all)."""
    args: list[Any] = ["XREADGROUP", "GROUP", group, consumer, "COUNT", count]
    if block_ms is not None:
        args += ["BLOCK", block_ms]
    args += ["STREAMS", session.keys.items, cursor]
    return _streams(await _call(session, *args))


async def claim_idle(
    session: CrawlSession, group: str, consumer: str, start: str, count: int
) -> str:
    """XAUTOCLAIM every pending entry of ``group`` from ``start`` for ``consumer``;
    returns the cursor to go on from ("0-0": done). (With ``JUSTID`` redis-py drops the
    cursor from the reply, hence whole entries, left undecoded.)"""
    args = ["XAUTOCLAIM", session.keys.items, group, consumer, 0, start, "COUNT", count]
    reply = await _call(session, *args)
    return cast(list[bytes], reply)[0].decode("ascii")


async def group_consumers(session: CrawlSession, group: str) -> list[tuple[str, int, int]]:
    """(name, entries pending, ms since it last read) of every consumer of ``group``
    (XINFO CONSUMERS; none when the stream or the group is gone, or when the Redis user
    may not look: an exporter of an ACL file older than this command)."""
    try:
        rows = await session.commands.xinfo_consumers(session.keys.items, group)
    except NoPermissionError:
        return []
    except ResponseError as exc:
        if "NOGROUP" in str(exc) or "no such key" in str(exc):
            return []
        raise
    return [(str(row["name"]), int(row["pending"]), int(row["idle"])) for row in rows]


async def drop_consumer(session: CrawlSession, group: str, consumer: str) -> None:
    """XGROUP DELCONSUMER (its pending entries, if any, would go with it); nothing when
    the Redis user may not (an older ACL file: the dead consumer just stays listed)."""
    with contextlib.suppress(NoPermissionError):
        await session.commands.xgroup_delconsumer(session.keys.items, group, consumer)
