"""The change feed: the item stream read as per-symbol events.

Every stream entry is one event, in stream order: ``added`` (a key's first item, or its
return after a removal), ``changed`` (its checksum changed) or ``removed`` (a tombstone:
the key left the inventory). An event's ``cursor`` is its stream entry id; reading again
``--since`` the last cursor printed resumes exactly after it. A refresh that finds
nothing changed appends nothing, so the feed is silent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, cast

from common.codec import item_json
from frontier.export import CHUNK, Entry, read_after
from frontier.session import CrawlSession

EVENT_OF_KIND = {"new": "added", "update": "changed", "removed": "removed"}


def change_event(entry_id: str, fields: dict[str, str]) -> dict[str, Any]:
    return {
        "event": EVENT_OF_KIND.get(fields.get("kind", ""), "changed"),
        "key": fields["key"],
        "cursor": entry_id,
        "item": json.loads(item_json(fields["data"])),
    }


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
        last = await session.redis.xrevrange(session.keys.items, count=1)
        cursor = str(last[0][0]) if last else "0-0"
    count = 0
    try:
        while True:
            batch = await read_after(session, "(" + cursor if cursor != "0-0" else "-", CHUNK)
            for entry_id, fields in batch:
                emit(change_event(entry_id, fields))
                cursor = entry_id
                count += 1
            if batch:
                continue
            if not follow:
                return count, cursor
            reply = await session.redis.xread(
                {session.keys.items: cursor}, count=CHUNK, block=block_ms
            )
            streams = cast(list[tuple[str, list[Entry]]], reply or [])
            for entry_id, fields in streams[0][1] if streams else []:
                emit(change_event(entry_id, fields))
                cursor = entry_id
                count += 1
    except (asyncio.CancelledError, KeyboardInterrupt):
        return count, cursor
