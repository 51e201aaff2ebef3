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
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import IO, cast

from redis.exceptions import ResponseError

from common.codec import item_json
from frontier.retention import acknowledge_output, retains_all, trim_exported, trimmed_before
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


class HistoryTrimmed(Exception):
    """The stream no longer holds every item (``--retain-items exported``) and no earlier
    export to merge with was given."""


async def merged_with(session: CrawlSession, base: Path | None) -> tuple[dict[str, str], str]:
    """The latest JSON of every live item: ``base`` (an earlier complete export: one
    item per line) updated by every entry the stream still holds, in stream order
    (newer versions replace, tombstones remove). Also the last entry id read."""
    latest: dict[str, str] = {}
    if base is not None:
        with open(base, encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    latest[json.loads(line)["key"]] = line.rstrip("\n")
    last = ""
    async for entry_id, fields in stream_entries(session):
        last = entry_id
        if fields.get("kind") == REMOVED:
            latest.pop(fields["key"], None)
        else:
            latest.pop(fields["key"], None)  # moves to the end: stream order
            latest[fields["key"]] = item_json(fields["data"])
    return latest, last


async def _needs_base(session: CrawlSession, base: Path | None, what: str) -> None:
    trimmed = await trimmed_before(session)
    if trimmed and (base is None or not base.exists()):
        raise HistoryTrimmed(
            f"crawl {session.crawl_id} keeps its items only until they are exported "
            f"(--retain-items exported) and entries before {trimmed} were trimmed: {what}"
        )


async def export_items(session: CrawlSession, output: Path | None, base: Path | None = None) -> int:
    """Write the latest items atomically (temp file + rename); returns the count. With
    ``base`` (an earlier complete export of a crawl that keeps only unexported items):
    that export updated by what the stream still holds."""
    await _needs_base(session, base, "give its earlier complete export with --base FILE")
    if base is not None and base.exists():
        latest, _ = await merged_with(session, base)
        return _write_all(latest.values(), output)
    if output is None or str(output) == "-":
        count = 0
        async for data in iter_latest(session):
            sys.stdout.write(data + "\n")
            count += 1
        sys.stdout.flush()
        return count
    count = 0
    tmp = output.with_name(output.name + ".part")
    with _open(tmp, "w") as out:
        async for data in iter_latest(session):
            out.write(data + "\n")
            count += 1
    os.replace(tmp, output)
    return count


def _write_all(lines: Iterable[str], output: Path | None, durable: bool = False) -> int:
    """Write ``lines`` to ``output`` atomically (stdout for None or "-"); ``durable``:
    fsynced before it replaces the old file (it is about to be the only copy)."""
    count = 0
    if output is None or str(output) == "-":
        for data in lines:
            sys.stdout.write(data + "\n")
            count += 1
        sys.stdout.flush()
        return count
    tmp = output.with_name(output.name + ".part")
    with _open(tmp, "w") as out:
        for data in lines:
            out.write(data + "\n")
            count += 1
        out.flush()
        if durable:
            os.fsync(out.fileno())
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
        if await retains_all(self.session):
            self.out.close()
            if self.stale:
                return await export_items(self.session, self.output)
            os.replace(self.tmp, self.output)
            return len(self.keys)
        # --retain-items exported: once acknowledged, the file is the only copy of the
        # items: complete (merged with the previous output after a refresh) and fsynced
        # before the group moves on and the stream is trimmed.
        if self.stale or await trimmed_before(self.session):
            self.out.close()
            await _needs_base(
                self.session,
                self.output,
                f"its earlier output {self.output} is gone (merge a copy of it with "
                "`invcrawl export --base FILE`)",
            )
            latest, last = await merged_with(
                self.session, self.output if self.output.exists() else None
            )
            count = _write_all(latest.values(), self.output, durable=True)
        else:
            self.out.flush()
            os.fsync(self.out.fileno())
            self.out.close()
            os.replace(self.tmp, self.output)
            count, last = len(self.keys), self.after[1:] if self.after != "-" else ""
        if last:
            await acknowledge_output(self.session, last)
        return count

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
    session: CrawlSession,
    output: Path | None,
    group: str,
    block_ms: int = 1000,
    stream: IO[str] | None = None,
) -> int:
    """Append items to ``output`` as they arrive, acknowledging each batch after it is
    flushed and fsynced. Runs until interrupted. ``stream``: ``output`` already open
    (several crawls followed into one file), left open."""
    key = session.keys.items
    try:
        await session.redis.xgroup_create(key, group, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
    consumer = f"{socket.gethostname()}-export"
    await _adopt_pending(session, group, consumer)
    trim = not await retains_all(session)  # --retain-items exported
    count = 0
    pending_first = True
    out = stream or _open(output, "a")
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
            if trim:  # what every export group now holds leaves Redis
                await trim_exported(session)
    except (asyncio.CancelledError, KeyboardInterrupt):
        return count
    finally:
        if out is not sys.stdout and stream is None:
            out.close()
