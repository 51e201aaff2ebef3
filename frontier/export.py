"""Reading items back out of the stream (Redis reads only: the files are written by
``invcrawl/output/export.py``).

``iter_latest`` yields the latest version of every item once, in stream order, using
two passes over the stream (the first keeps only key -> last entry id, so memory is per
key, not per item body). ``StreamTail`` reads what was committed since its last read
(``invcrawl crawl`` writes its output while the crawl runs). Reading through a consumer
group (``export --follow``) is ``frontier/follow.py``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any, cast

from invcrawl.common.codec import item_bytes
from invcrawl.frontier.retention import trimmed_before
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.stream import (
    RAW,
    REMOVED,
    RawEntry,
    StreamEntry,
    read_range,
)

CHUNK = 1000
RAW_REMOVED = REMOVED.encode()


async def all_entries(session: CrawlSession) -> AsyncIterator[StreamEntry]:
    start = "-"
    while batch := await read_range(session, start, count=CHUNK):
        for entry in batch:
            yield entry
        start = "(" + batch[-1].id


async def latest_entry_ids(session: CrawlSession) -> dict[str, str]:
    latest: dict[str, str] = {}
    async for entry in all_entries(session):
        latest[entry.key] = entry.id
    return latest


async def iter_latest(session: CrawlSession) -> AsyncIterator[str]:
    """The JSON of the latest version of every live item, each once (a key whose latest
    entry is a tombstone is left out)."""
    updated, removed = await session.commands.hmget(
        session.keys.stats, ["items_updated", "items_removed"]
    )
    latest = await latest_entry_ids(session) if int(updated or 0) or int(removed or 0) else None
    async for entry in all_entries(session):
        if entry.removed:
            continue
        if latest is None or latest.get(entry.key) == entry.id:
            yield entry.item_json()


class HistoryTrimmed(Exception):
    """The stream no longer holds every item (``--retain-items exported``) and no earlier
    export to merge with was given."""


async def merged_with(
    session: CrawlSession, base: Iterable[str] | None
) -> tuple[dict[str, str], str]:
    """The latest JSON of every live item: ``base`` (the lines of an earlier complete
    export: one item each) updated by every entry the stream still holds, in stream
    order (newer versions replace, tombstones remove). Also the last entry id read."""
    latest: dict[str, str] = {}
    for line in base or ():
        latest[json.loads(line)["key"]] = line
    last = ""
    async for entry in all_entries(session):
        last = entry.id
        latest.pop(entry.key, None)  # (an item moves to the end: stream order)
        if not entry.removed:
            latest[entry.key] = entry.item_json()
    return latest, last


async def check_history(session: CrawlSession, have_base: bool, what: str) -> None:
    """Raise :class:`HistoryTrimmed` (ending with ``what``: the way out) when the stream
    no longer holds every item and no earlier export is at hand."""
    trimmed = await trimmed_before(session)
    if trimmed and not have_base:
        raise HistoryTrimmed(
            f"crawl {session.crawl_id} keeps its items only until they are exported "
            f"(--retain-items exported) and entries before {trimmed} were trimmed: {what}"
        )


class StreamTail:
    """What was committed since the last :meth:`pull`, as item JSON lines (UTF-8 bytes:
    read, decompressed and written without a round trip through text), for a file
    written while the crawl runs. ``stale`` turns true (and pulling stops) once a key
    shows up twice (an item updated by a re-crawl or a refresh) or a tombstone does:
    such a file must then be written from the latest versions instead."""

    def __init__(self, session: CrawlSession) -> None:
        self.session = session
        self.after = "-"
        self.keys: set[bytes] = set()
        self.stale = False

    @property
    def last_id(self) -> str:
        """The id of the last entry pulled ("" before any)."""
        return self.after[1:] if self.after != "-" else ""

    async def pull(self) -> list[bytes]:
        reply = (await pull_tails([self]))[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def queue_read(self, pipe: Any) -> None:
        """Queue the next read on ``pipe`` (a redis-py pipeline)."""
        items = self.session.keys.items
        pipe.execute_command("XRANGE", items, self.after, "+", "COUNT", CHUNK, **RAW)

    def take(self, batch: list[RawEntry], lines: list[bytes]) -> bool:
        """Append a batch's lines; whether the stream may hold more past it (a full batch)."""
        for _, fields in batch:
            key = fields[b"key"]
            if key in self.keys or fields.get(b"kind") == RAW_REMOVED:
                self.stale = True
                return False
            self.keys.add(key)
            lines.append(item_bytes(fields[b"data"]))
        if batch:
            self.after = "(" + batch[-1][0].decode("ascii")
        return len(batch) >= CHUNK


async def pull_tails(tails: Sequence[StreamTail]) -> list[list[bytes] | Exception]:
    """:meth:`StreamTail.pull` of every tail (all of one Redis client), in order: each
    tail's lines, or the error its read met (that tail is read again next time from
    where it stood). The reads of all the tails go in one pipelined round trip, not one
    each: the crawl supervisor of a fleet tails every crawl's stream every tick (on a
    Redis Cluster, redis-py sends one pipeline per shard). Tails whose batch was full
    are read again, together. A failure of the whole round trip (Redis unreachable) is
    raised."""
    lines: list[list[bytes] | Exception] = [[] for _ in tails]
    wanted = [i for i, tail in enumerate(tails) if not tail.stale]
    while wanted:
        pipe = tails[wanted[0]].session.pipeline(transaction=False)
        for i in wanted:
            tails[i].queue_read(pipe)
        replies = await pipe.execute(raise_on_error=False)
        more = []
        for i, reply in zip(wanted, replies, strict=True):
            pulled = lines[i]
            assert isinstance(pulled, list)
            if isinstance(reply, Exception):
                if not pulled:  # (else the lines taken are returned: the tail moved past them)
                    lines[i] = reply
                continue
            if tails[i].take(cast(list[RawEntry], reply), pulled):
                more.append(i)
        wanted = more
    return lines
