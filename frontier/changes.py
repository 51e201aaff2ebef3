"""The change feed: the item stream read as per-symbol events.

Every stream entry is one event, in stream order: ``added`` (a key's first item, or its
return after a removal), ``changed`` (its checksum changed) or ``removed`` (a tombstone:
the key left the inventory). An event's ``cursor`` is its stream entry id; reading again
``--since`` the last cursor printed resumes exactly after it. A refresh that finds
nothing changed appends nothing, so the feed is silent.

A ``changed`` event also carries the typed ``changes`` and the ``breaking`` flag of
``invcrawl diff`` (``common/apidiff.py``), computed against the item it replaces: the
key's previous entry in the stream. The feed keeps the entry id of each key's latest
entry as it reads; a key whose earlier entries lie before ``--since`` is found by one
pass over that part of the stream, made once and only when such an event comes. An
event whose previous item is no longer in the stream (``--retain-items exported``
trimmed it) has no ``changes``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from common.apidiff import item_changes
from frontier.export import CHUNK
from frontier.retention import entry_before
from frontier.session import CrawlSession
from frontier.stream import StreamEntry, last_id, read_new, read_range, read_ranges

EVENT_OF_KIND = {"new": "added", "update": "changed", "removed": "removed"}


def change_event(entry: StreamEntry) -> dict[str, Any]:
    return {
        "event": EVENT_OF_KIND.get(entry.kind, "changed"),
        "key": entry.key,
        "cursor": entry.id,
        "item": entry.item(),
    }


class Previous:
    """Where each key's latest entry is, up to the entry being read: what a ``changed``
    event is compared with."""

    def __init__(self, session: CrawlSession, since: str) -> None:
        self.session = session
        self.since = since  # entries up to here were not read by the feed
        self.latest: dict[str, str] = {}  # key -> id of its latest entry read so far
        self.prefix_read = since == "0-0"

    async def _read_prefix(self) -> None:
        """Index the entries before ``since`` (the feed's keys first seen later win)."""
        self.prefix_read = True
        before: dict[str, str] = {}
        after = "-"
        while batch := await read_range(self.session, after, count=CHUNK):
            for entry in batch:
                if entry_before(self.since, entry.id):
                    break
                before[entry.key] = entry.id
            else:
                after = "(" + batch[-1].id
                continue
            break
        self.latest = {**before, **self.latest}

    async def events(self, batch: list[StreamEntry]) -> list[dict[str, Any]]:
        """The events of a batch of entries (in order), ``changed`` ones with their typed
        changes; the previous items of the batch are fetched in one pipeline."""
        wanted: list[str | None] = []
        for entry in batch:
            update = entry.kind == "update"
            if update and entry.key not in self.latest and not self.prefix_read:
                await self._read_prefix()
            wanted.append(self.latest.get(entry.key) if update else None)
            self.latest[entry.key] = entry.id
        previous = await self._fetch([w for w in wanted if w])
        out = []
        for entry, prev_id in zip(batch, wanted, strict=True):
            event = change_event(entry)
            old = previous.get(prev_id) if prev_id else None
            if event["event"] == "changed" and old is not None:
                changes = item_changes(old, event["item"])
                event["changes"] = changes
                event["breaking"] = any(c["breaking"] for c in changes)
            out.append(event)
        return out

    async def _fetch(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        found = await read_ranges(self.session, ids)
        return {entry.id: entry.item() for entry in found if entry and not entry.removed}


async def read_changes(
    session: CrawlSession,
    since: str | None,
    emit: Callable[[dict[str, Any]], None],
    follow: bool = False,
    block_ms: int = 1000,
) -> tuple[int, str]:
    """Emit every event after ``since`` (None or "0": from the start); with ``follow``,
    keep waiting for new ones until cancelled. Returns (events, cursor to resume from)."""
    cursor = since if since and since != "0" else "0-0"
    if cursor == "$":  # only what comes next
        cursor = await last_id(session) or "0-0"
    previous = Previous(session, cursor)
    count = 0
    try:
        while True:
            batch = await read_range(session, "(" + cursor if cursor != "0-0" else "-", count=CHUNK)
            for event in await previous.events(batch):
                emit(event)
                cursor = event["cursor"]
                count += 1
            if batch:
                continue
            if not follow:
                return count, cursor
            for event in await previous.events(await read_new(session, cursor, CHUNK, block_ms)):
                emit(event)
                cursor = event["cursor"]
                count += 1
    except (asyncio.CancelledError, KeyboardInterrupt):
        return count, cursor
