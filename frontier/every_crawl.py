"""``export``, ``changes``, ``report`` and ``dlq`` over every crawl of a Redis, for the
commands run without ``--crawl-id`` (what they read: the files are written in
``invcrawl/output/export.py``). Each line they write names its crawl: an item has
its ``crawl`` field, a change event gets one, a dead letter its ``crawl_id``.

The change feed of several crawls resumes from a *composite cursor*: each crawl's
position in its own item stream, ``CRAWL=ID,CRAWL=ID`` (crawl ids never hold ``=`` or
``,``), sorted by crawl. A crawl the cursor does not name is read from its start: it
was created after the cursor was printed, or had no event then (those are left out, so
the cursor stays as short as the crawls that had events). A plain entry id instead
(``--since 1732400000000-0``) means the same position in every crawl: the events after
that time, by the Redis clock of each crawl (on a Redis Cluster, each shard's). Streams
of different crawls may live on different shards, so nothing orders events across
crawls but time; within a crawl, the order is the stream's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from invcrawl.frontier.admin import dead_tasks, redrive
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.export import HistoryTrimmed, iter_latest
from invcrawl.frontier.report import coverage
from invcrawl.frontier.retention import entry_before, trimmed_before
from invcrawl.frontier.retry import Note, reconnect
from invcrawl.frontier.session import Frontier

START = "0-0"
DISCOVER_EVERY = 1.0  # seconds between two looks for new crawls while following


class CursorTrimmed(Exception):
    """A crawl keeps its items only until exported, and the cursor is older than its trim."""


# -- the composite cursor ------------------------------------------------------------------


def parse_cursor(since: str | None) -> tuple[dict[str, str], str]:
    """(each named crawl's position, the position of every other crawl)."""
    if not since or since == "0":
        return {}, START
    if "=" not in since:
        return {}, since  # "$" or one entry id: the same for every crawl
    positions = {}
    for part in since.split(","):
        crawl_id, _, entry_id = part.partition("=")
        positions[crawl_id] = entry_id
    return positions, START


def format_cursor(positions: dict[str, str]) -> str:
    """The composite cursor of ``positions`` (crawls still at their start left out)."""
    named = [f"{c}={p}" for c, p in sorted(positions.items()) if p not in (START, "0")]
    return ",".join(named) or "0"


# -- changes -------------------------------------------------------------------------------


async def check_not_trimmed(frontier: Frontier, crawl_id: str, position: str) -> None:
    """Refuse a position older than what a crawl that keeps its items only until they
    are exported still holds (``--retain-items exported``)."""
    trimmed = await trimmed_before(frontier.crawl(crawl_id))
    if trimmed and position != "$" and entry_before(position, trimmed):
        what = "the start of the feed" if position == START else f"position {position}"
        raise CursorTrimmed(
            f"crawl {crawl_id} keeps its items only until they are exported "
            f"(--retain-items exported): events before {trimmed} were trimmed, {what} is "
            f"older; read from {crawl_id}={trimmed} or from the export files"
        )


async def read_all_changes(
    frontier: Frontier,
    since: str | None,
    emit: Callable[[dict[str, Any]], None],
    follow: bool = False,
    block_ms: int = 1000,
    *,
    note: Note | None = None,
) -> tuple[int, str]:
    """Emit the events of every crawl after ``since`` (crawl by crawl; with ``follow``,
    then as they come, from crawls created meanwhile too, until cancelled, through Redis
    outages: ``note`` gets one line per outage, and one when a crawl is forgotten, whose
    reader stops and which leaves the cursor). Returns (events, composite cursor to
    resume from)."""
    positions, default = parse_cursor(since)
    known = await frontier.registry.known()
    for crawl_id in known:
        await check_not_trimmed(frontier, crawl_id, positions.get(crawl_id, default))
    count = 0
    redis = reconnect("changes --follow", note) if follow else None

    def emitter(crawl_id: str) -> Callable[[dict[str, Any]], None]:
        def emit_one(event: dict[str, Any]) -> None:
            nonlocal count
            emit({"event": event["event"], "crawl": crawl_id, **event})
            positions[crawl_id] = event["cursor"]
            count += 1

        return emit_one

    async def read(crawl_id: str, start: str) -> None:
        session = frontier.crawl(crawl_id)
        _, cursor = await read_changes(
            session, start, emitter(crawl_id), follow, block_ms, reconnect_with=redis
        )
        positions[crawl_id] = cursor

    if redis is None:
        for crawl_id in known:
            await read(crawl_id, positions.get(crawl_id, default))
        return count, format_cursor({c: p for c, p in positions.items() if c in known})
    readers: dict[str, asyncio.Task[None]] = {}
    at_start = set(known)
    gone: set[str] = set()  # forgotten while followed
    try:
        while True:
            for crawl_id in known:
                if crawl_id not in readers:  # a crawl created while following: all of it
                    start = positions.get(crawl_id, default if crawl_id in at_start else START)
                    if crawl_id in gone:  # crawled again since it was forgotten
                        gone.discard(crawl_id)
                        start = START
                    readers[crawl_id] = asyncio.ensure_future(read(crawl_id, start))
            for crawl_id in sorted(set(readers) - set(known)):  # forgotten
                readers.pop(crawl_id).cancel()
                gone.add(crawl_id)
                if note is not None:
                    note(
                        f"crawl {crawl_id} was forgotten: its events end here, and the "
                        "cursor no longer names it"
                    )
            done = [t for t in readers.values() if t.done() and t.exception()]
            if done:
                raise done[0].exception()  # type: ignore[misc]
            await asyncio.sleep(DISCOVER_EVERY)
            known = await redis.call(frontier.registry.known)
    except (asyncio.CancelledError, KeyboardInterrupt):
        pass
    finally:
        for task in readers.values():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
            await asyncio.gather(*readers.values(), return_exceptions=True)
    return count, format_cursor({c: p for c, p in positions.items() if c in readers})


# -- export --------------------------------------------------------------------------------


async def check_exportable(frontier: Frontier, crawl_ids: Sequence[str]) -> None:
    """A crawl whose stream was trimmed (``--retain-items exported``) cannot be exported
    with the others: its earlier export is needed (``export --crawl-id C --base FILE``)."""
    for crawl_id in crawl_ids:
        trimmed = await trimmed_before(frontier.crawl(crawl_id))
        if trimmed:
            raise HistoryTrimmed(
                f"crawl {crawl_id} keeps its items only until they are exported "
                f"(--retain-items exported) and entries before {trimmed} were trimmed: "
                f"export it alone, with --crawl-id {crawl_id} --base FILE"
            )


async def iter_latest_all(frontier: Frontier, crawl_ids: Sequence[str]) -> AsyncIterator[str]:
    """The latest version of every live item of every crawl, crawl after crawl."""
    for crawl_id in crawl_ids:
        async for data in iter_latest(frontier.crawl(crawl_id)):
            yield data


# -- report and dead letters -----------------------------------------------------------------


async def coverage_all(frontier: Frontier, crawl_ids: Sequence[str]) -> list[dict[str, Any]]:
    return [await coverage(frontier.crawl(crawl_id)) for crawl_id in crawl_ids]


async def dead_letters_all(frontier: Frontier, crawl_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every dead letter of every crawl (``dlq list`` rows with their ``crawl_id``),
    crawl by crawl, oldest first within each."""
    rows: list[dict[str, Any]] = []
    for crawl_id in crawl_ids:
        rows += [
            {"crawl_id": crawl_id, **row} for row in await dead_tasks(frontier.crawl(crawl_id))
        ]
    return rows


async def redrive_all(
    frontier: Frontier, crawl_ids: Sequence[str], task_ids: Sequence[str] | None
) -> dict[str, int]:
    """Redrive the given dead tasks wherever they are (every dead task of every crawl
    when ``task_ids`` is None); returns the count per crawl that had any."""
    out = {}
    for crawl_id in crawl_ids:
        session = frontier.crawl(crawl_id)
        if task_ids is None:
            wanted = None
        else:
            pipe = session.pipeline(transaction=False)
            for task_id in task_ids:
                pipe.zscore(session.keys.dlq, task_id)
            scores = await pipe.execute()
            wanted = [t for t, s in zip(task_ids, scores, strict=True) if s is not None]
            if not wanted:
                continue
        count = await redrive(session, wanted)
        if count:
            out[crawl_id] = count
    return out
