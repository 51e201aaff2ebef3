"""Refresh rounds of a crawl, in Redis: start one (``refresh.lua``), hand the producer
what the last round left (the inventory and each page's validators), and write the
tombstones of item keys that left the inventory (``tombstone.lua``).

A refresh is the same production as a first crawl, run again on a finished crawl: every
page is enqueued once more, now carrying its validators (``common/validators.py``), so
that a consumer revalidates it with a conditional GET instead of extracting it again.
The item stream then gets only what changed: new and updated items through the usual
dedup rule of ``commit.lua``, and one tombstone per removed key from here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from invcrawl.common.items import key_digest
from invcrawl.common.search.postings import record_bucket
from invcrawl.common.tasks import Task, TaskStatus
from invcrawl.common.validators import conditional_headers, decode_validators
from invcrawl.frontier.connection import fresh_frontier
from invcrawl.frontier.scripts import KeyIndex
from invcrawl.frontier.session import CrawlSession, Frontier

log = logging.getLogger("invcrawl.refresh")

TOMBSTONE_BATCH = 500
VALIDATOR_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Round:
    started: bool  # a new round began (False: nothing to refresh yet, or resuming one)
    number: int


@dataclass(frozen=True, slots=True)
class StoredInventory:
    body: bytes | None
    etag: str | None
    last_modified: str | None

    def conditional_headers(self) -> dict[str, str]:
        if self.body is None:  # nothing to reuse on a 304: ask for the whole file
            return {}
        return conditional_headers(self.etag, self.last_modified)


class Refresh:
    """The refresh side of one crawl's keys (a thin layer over its session)."""

    def __init__(self, session: CrawlSession) -> None:
        self.session = session
        self.keys = session.keys
        self._commands = session.commands

    async def start_round(self) -> Round:
        k = self.keys
        started, number = await self.session.run(
            "refresh",
            k.bind("meta", "stats", "seen", "task", "tries", "reaped", "errors", "dlq", "dlq_why"),
            [],
        )
        if started:  # open again: consumers serving every open crawl pick it up
            await self.session.registry.activate(self.session.crawl_id)
        return Round(bool(started), int(number))

    async def stored_inventory(self) -> StoredInventory:
        # The one client decodes replies as UTF-8; the inventory is zlib bytes.
        body = await self.session.raw("GET", self.keys.inventory)
        etag, last_modified = await self._commands.hmget(
            self.keys.meta, ["inv_etag", "inv_last_modified"]
        )
        return StoredInventory(
            bytes(body) if body else None,
            _text(etag),
            _text(last_modified),
        )

    async def save_inventory(
        self, body: bytes, etag: str | None, last_modified: str | None
    ) -> None:
        """Keep the inventory this round was produced from: the next refresh diffs against
        it and reuses it when the server answers 304."""
        pipe = self.session.pipeline(transaction=True)
        pipe.set(self.keys.inventory, body)
        pipe.hset(
            self.keys.meta,
            mapping={"inv_etag": etag or "", "inv_last_modified": last_modified or ""},
        )
        await pipe.execute()

    async def with_validators(self, tasks: Sequence[Task]) -> list[Task]:
        """Each fetch task with the validators of its page's last fetch, when the page is
        to be extracted for the same entries as then (else it is fetched in full)."""
        out: list[Task] = []
        for start in range(0, len(tasks), VALIDATOR_BATCH):
            batch = tasks[start : start + VALIDATOR_BATCH]
            stored = await self._commands.hmget(self.keys.pages, [t.id for t in batch])
            for task, value in zip(batch, stored, strict=True):
                v = decode_validators(value) if task.status == TaskStatus.FETCH else None
                out.append(
                    replace(task, validators=v) if v and v.entries == task.entries_digest else task
                )
        return out

    async def tombstone(
        self, removed_keys: Iterable[str], removed_pages: Sequence[str], buckets: int
    ) -> int:
        """One tombstone per removed key that still has an item; returns how many."""
        k = self.keys
        keys = sorted(set(removed_keys))
        written = 0
        pages = list(removed_pages)
        for start in range(0, max(len(keys), 1), TOMBSTONE_BATCH):
            batch = keys[start : start + TOMBSTONE_BATCH]
            page_ids, pages = pages, []  # every removed page goes with the first batch
            fixed = k.bind("stats", "items", "pages", "svec", "slnk")
            index = KeyIndex(len(fixed))
            args: list[Any] = [len(page_ids), *page_ids]
            for key in batch:
                bucket, field = key_digest(key, buckets)
                record = k.search_record(record_bucket(field, buckets))
                args += [index.add(k.isum(bucket)), field, key, index.add(record)]
            if batch or page_ids:
                written += int(await self.session.run("tombstone", fixed, args, index.keys))
        return written

    async def mark_next(self, at_ms: int | None) -> None:
        """When the crawl supervisor's next scheduled refresh is due (``--every``)."""
        if at_ms is None:
            await self._commands.hdel(self.keys.meta, "next_refresh_at")
        else:
            await self._commands.hset(self.keys.meta, "next_refresh_at", at_ms)


async def record_next_refresh(
    frontier: Frontier, crawl_ids: Sequence[str], delay: float | None
) -> None:
    """Where ``status`` shows it: when each crawl's next scheduled refresh is due (in
    ``delay`` seconds by the server's clock; None: none is). A process whose one client
    lives on an event loop it does not run here (the ``crawl`` supervisor between its
    runs, any scheduler after its loop) passes a frontier on a connection of its own
    (``frontier/connection.fresh_frontier``)."""
    if not crawl_ids:
        return
    now = await frontier.crawl(crawl_ids[0]).server_ms()
    for crawl_id in crawl_ids:
        at = None if delay is None else now + int(delay * 1000)
        await Refresh(frontier.crawl(crawl_id)).mark_next(at)


async def clear_next_refresh(redis_url: str, cluster: bool, crawl_ids: Sequence[str]) -> None:
    """No scheduled refresh is due any more (the process that scheduled them stops; its
    own client is gone, so a connection of its own). A Redis that is gone too only
    leaves ``status`` showing a time that has passed: a warning, not an error."""
    try:
        async with fresh_frontier(redis_url, cluster) as frontier:
            await record_next_refresh(frontier, crawl_ids, None)
    except Exception as exc:
        log.warning("could not clear the next refresh time: %s", exc)


def _text(value: Any) -> str | None:
    if value is None or value in (b"", ""):
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
