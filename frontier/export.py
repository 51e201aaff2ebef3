"""Reading items back out of the stream.

``export_items`` writes the latest version of every item once, in stream order, using
two passes over the stream (the first keeps only key -> last entry id, so memory is per
key, not per item body). ``follow_items`` reads through a consumer group: a downstream
pipeline receives new and updated items as they arrive and, after a restart, resumes
with what it had not acknowledged (at-least-once; dedupe by ``key`` + ``checksum``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, cast

from redis.exceptions import ResponseError

from common.codec import item_json
from frontier.session import CrawlSession

CHUNK = 1000
REMOVED = "removed"  # the stream ``kind`` of a tombstone (tombstone.lua)
Entry = tuple[str, dict[str, str]]  # stream entry id, fields


async def read_after(session: CrawlSession, after: str, count: int = CHUNK) -> list[Entry]:
    """Up to ``count`` item stream entries after ``after`` ("-": from the start;
    "(id": exclusive)."""
    batch = await session.redis.xrange(session.keys.items, min=after, max="+", count=count)
    return cast(list[Entry], batch)


async def stream_entries(session: CrawlSession) -> AsyncIterator[Entry]:
    start = "-"
    while batch := await read_after(session, start):
        for entry in batch:
            yield entry
        start = "(" + batch[-1][0]


async def latest_entry_ids(session: CrawlSession) -> dict[str, str]:
    latest: dict[str, str] = {}
    async for entry_id, fields in stream_entries(session):
        latest[fields["key"]] = entry_id
    return latest


async def iter_latest(session: CrawlSession) -> AsyncIterator[str]:
    """The JSON of the latest version of every live item, each once (a key whose latest
    entry is a tombstone is left out)."""
    updated, removed = await session.redis.hmget(
        session.keys.stats, ["items_updated", "items_removed"]
    )
    latest = await latest_entry_ids(session) if int(updated or 0) or int(removed or 0) else None
    async for entry_id, fields in stream_entries(session):
        if fields.get("kind") == REMOVED:
            continue
        if latest is None or latest.get(fields["key"]) == entry_id:
            yield item_json(fields["data"])


@contextlib.contextmanager
def open_output(output: Path | None) -> Iterator[IO[str]]:
    """Append to ``output`` (stdout for None or "-"), closing it afterwards."""
    out = _open(output, "a")
    try:
        yield out
    finally:
        if out is sys.stdout:
            out.flush()
        else:
            out.close()


def _open(output: Path | None, mode: str) -> IO[str]:
    if output is None or str(output) == "-":
        return sys.stdout
    output.parent.mkdir(parents=True, exist_ok=True)
    return open(output, mode, encoding="utf-8")


async def export_items(session: CrawlSession, output: Path | None) -> int:
    """Write the latest items atomically (temp file + rename); returns the count."""
    count = 0
    if output is None or str(output) == "-":
        async for data in iter_latest(session):
            sys.stdout.write(data + "\n")
            count += 1
        sys.stdout.flush()
        return count
    tmp = output.with_name(output.name + ".part")
    with _open(tmp, "w") as out:
        async for data in iter_latest(session):
            out.write(data + "\n")
            count += 1
    os.replace(tmp, output)
    return count


class IncrementalExport:
    """``export_items`` done while the crawl runs (``invcrawl crawl``): ``pull`` appends
    the items committed since its last call to ``output``'s ``.part`` file, so that once
    the crawl is complete only the tail is left to read. The result is the same file:
    if a key shows up twice (an item updated by a re-crawl or a refresh) or a tombstone
    does, ``finish`` falls back to the two-pass export, since the file must hold the
    latest version of the live items only."""

    def __init__(self, session: CrawlSession, output: Path) -> None:
        self.session = session
        self.output = output
        self.tmp = output.with_name(output.name + ".part")
        output.parent.mkdir(parents=True, exist_ok=True)
        self.out: IO[str] = open(self.tmp, "w", encoding="utf-8")  # noqa: SIM115
        self.after = "-"
        self.keys: set[str] = set()
        self.stale = False

    async def pull(self) -> int:
        """Append what was committed since the last call; returns how many items."""
        added = 0
        while not self.stale:
            batch = await read_after(self.session, self.after)
            if not batch:
                break
            for _, fields in batch:
                key = fields["key"]
                if key in self.keys or fields.get("kind") == REMOVED:
                    self.stale = True
                    break
                self.keys.add(key)
                self.out.write(item_json(fields["data"]) + "\n")
                added += 1
            self.after = "(" + batch[-1][0]
        return added

    async def finish(self) -> int:
        """Read the tail and move the file into place; returns the item count."""
        await self.pull()
        self.out.close()
        if self.stale:
            return await export_items(self.session, self.output)
        os.replace(self.tmp, self.output)
        return len(self.keys)

    def abandon(self) -> None:
        with contextlib.suppress(OSError):  # a full disk fails the final flush too
            self.out.close()
        self.tmp.unlink(missing_ok=True)


async def _adopt_pending(session: CrawlSession, group: str, consumer: str) -> None:
    """Take over the entries other consumers of the group received but never
    acknowledged (a follower that died on another host, or in a container with another
    hostname, would otherwise keep them pending forever); they are then re-read as our
    own pending entries. At-least-once: entries a live sibling follower is writing at
    this moment may be written twice."""
    start = "0-0"
    while True:
        # (redis-py drops the cursor from the reply when justid=True)
        reply = await session.redis.xautoclaim(
            session.keys.items, group, consumer, min_idle_time=0, start_id=start, count=CHUNK
        )
        start = reply[0]
        if start == "0-0":
            return


async def follow_items(
    session: CrawlSession, output: Path | None, group: str, block_ms: int = 1000
) -> int:
    """Append items to ``output`` as they arrive, acknowledging each batch after it is
    flushed and fsynced. Runs until interrupted."""
    key = session.keys.items
    try:
        await session.redis.xgroup_create(key, group, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
    consumer = f"{socket.gethostname()}-export"
    await _adopt_pending(session, group, consumer)
    count = 0
    pending_first = True
    out = _open(output, "a")
    try:
        while True:
            cursor = "0" if pending_first else ">"
            reply = await session.redis.xreadgroup(
                group,
                consumer,
                {key: cursor},
                count=CHUNK,
                block=None if pending_first else block_ms,
            )
            # RESP2 reply: [[stream key, [entry, ...]]] (the stubs describe RESP3's dict)
            streams = cast(list[tuple[str, list[Entry]]], reply)
            entries = streams[0][1] if streams else []
            if pending_first and not entries:
                pending_first = False
                continue
            if not entries:
                continue
            for _, fields in entries:
                out.write(item_json(fields["data"]) + "\n")
            out.flush()
            if out is not sys.stdout:
                os.fsync(out.fileno())
            await session.redis.xack(key, group, *[entry_id for entry_id, _ in entries])
            count += len(entries)
    except (asyncio.CancelledError, KeyboardInterrupt):
        return count
    finally:
        if out is not sys.stdout:
            out.close()
