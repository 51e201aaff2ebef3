"""The change feed: the item stream read as per-symbol events.

Every stream entry is one event, in stream order: ``added`` (a key's first item, or its
return after a removal), ``changed`` (its checksum changed) or ``removed`` (a tombstone:
the key left the inventory). An event's ``cursor`` is its stream entry id; reading again
``--since`` the last cursor printed resumes exactly after it. A refresh that finds
nothing changed appends nothing, so the feed is silent.

A ``changed`` event also carries the typed ``changes`` and the ``breaking`` flag of
``invcrawl diff`` (``common/apidiff/diff.py``), computed against the item it replaces: the
key's previous entry in the stream. The feed keeps the entry id of each key's latest
entry as it reads; a key whose earlier entries lie before ``--since`` is found by one
pass over that part of the stream, made once and only when such an event comes. An
event whose previous item is no longer in the stream (``--retain-items exported``
trimmed it) has no ``changes``.

Following (``changes --follow``) rides out Redis restarts and dropped connections
(``frontier/retry.py``): a batch whose reads failed is read again from the same
cursor, so no event is lost or emitted twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

from invcrawl.common.apidiff import SymbolChange, item_changes
from invcrawl.common.items import Item
from invcrawl.frontier.export import CHUNK
from invcrawl.frontier.retention import entry_before
from invcrawl.frontier.retry import Calls, Note, Once, Retry, reconnect
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.stream import (
    StreamEntry,
    StreamKind,
    last_id,
    read_new,
    read_range,
    read_ranges,
)

EVENT_OF_KIND = {
    StreamKind.NEW: SymbolChange.ADDED,
    StreamKind.UPDATE: SymbolChange.CHANGED,
    StreamKind.REMOVED: SymbolChange.REMOVED,
}


def change_event(entry: StreamEntry) -> dict[str, Any]:
    return {
        "event": (EVENT_OF_KIND[entry.kind] if entry.kind else SymbolChange.CHANGED).value,
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
        self.prefix_read = True

    async def events(self, batch: list[StreamEntry]) -> list[dict[str, Any]]:
        """The events of a batch of entries (in order), ``changed`` ones with their typed
        changes; the previous items of the batch are fetched in one pipeline. Nothing is
        remembered of a batch whose reads failed: it can be asked for again."""
        wanted: list[str | None] = []
        read: dict[str, str] = {}  # this batch's keys -> their entry ids
        for entry in batch:
            update = entry.kind is StreamKind.UPDATE
            known = entry.key in read or entry.key in self.latest
            if update and not known and not self.prefix_read:
                await self._read_prefix()
            previous = read.get(entry.key) or self.latest.get(entry.key)
            wanted.append(previous if update else None)
            read[entry.key] = entry.id
        previous_items = await self._fetch([w for w in wanted if w])
        self.latest.update(read)
        out = []
        for entry, prev_id in zip(batch, wanted, strict=True):
            event = change_event(entry)
            old = previous_items.get(prev_id) if prev_id else None
            if event["event"] == "changed" and old is not None:
                changes = item_changes(old, event["item"])
                event["changes"] = [c.to_json() for c in changes]
                event["breaking"] = any(c.breaking for c in changes)
            out.append(event)
        return out

    async def _fetch(self, ids: list[str]) -> dict[str, Item]:
        if not ids:
            return {}
        found = await read_ranges(self.session, ids)
        return {  # not tombstones: whole items
            entry.id: cast(Item, entry.item()) for entry in found if entry and not entry.removed
        }


async def read_changes(
    session: CrawlSession,
    since: str | None,
    emit: Callable[[dict[str, Any]], None],
    follow: bool = False,
    block_ms: int = 1000,
    *,
    reconnect_with: Retry | None = None,
    note: Note | None = None,
) -> tuple[int, str]:
    """Emit every event after ``since`` (None or "0": from the start); with ``follow``,
    keep waiting for new ones until cancelled, through Redis outages (``reconnect_with``,
    or one of its own saying so to ``note``), and, given ``note``, say in one line when
    the crawl is forgotten (its events end there; those of a crawl of the same id
    crawled again follow). Returns (events, cursor to resume from)."""
    redis: Calls = Once()
    if follow:
        redis = reconnect_with or reconnect("changes --follow", note)
    cursor = since if since and since != "0" else "0-0"
    if cursor == "$":  # only what comes next
        last: str | None = await redis.call(lambda: last_id(session))
        cursor = last or "0-0"
    previous = Previous(session, cursor)
    present = True
    count = 0

    async def events_after(read: Callable[[str], Awaitable[list[StreamEntry]]]) -> int:
        """Read the entries after the cursor and emit their events; how many."""
        nonlocal cursor, count

        async def step() -> list[dict[str, Any]]:
            return await previous.events(await read(cursor))

        events = await redis.call(step)
        for event in events:
            emit(event)
            cursor = event["cursor"]
            count += 1
        return len(events)

    def stored(after: str) -> Awaitable[list[StreamEntry]]:
        return read_range(session, "(" + after if after != "0-0" else "-", count=CHUNK)

    def coming(after: str) -> Awaitable[list[StreamEntry]]:
        return read_new(session, after, CHUNK, block_ms)

    try:
        while True:
            if await events_after(stored):
                continue
            if not follow:
                return count, cursor
            if await events_after(coming) or note is None:
                continue
            exists = await redis.call(session.exists)
            if present and not exists:
                note(
                    f"crawl {session.crawl_id} was forgotten: its events end here (those of "
                    "the crawl crawled again under this id follow)"
                )
            present = exists
    except (asyncio.CancelledError, KeyboardInterrupt):
        return count, cursor
