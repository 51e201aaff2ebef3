"""Following one crawl's item stream through a consumer group (``export --follow``): a
downstream pipeline receives new, updated and removed items as they arrive, writes each
batch durably, then acknowledges it; restarted, it resumes with what it had not
acknowledged (at-least-once across a killed follower: deduplicate by ``key`` +
``checksum``).

A running follower loses and repeats nothing whatever Redis does meanwhile:

* **Redis restarts or drops the connection** (``frontier/retry.py``): every call is
  tried again with backoff. A read whose reply was lost may have delivered its entries
  to this follower all the same, so after any error the follower reads its own pending
  entries first (``XREADGROUP ... 0``), then new ones; an acknowledgement is tried again
  until it lands (``XACK`` is idempotent) before anything more is read, so its pending
  entries are exactly those delivered and not yet written.
* **The crawl is forgotten** (``invcrawl forget``: its stream and group deleted under a
  blocked read, ``UNBLOCKED`` or ``NOGROUP``): :class:`CrawlGone` is raised once, and the
  follower waits for the crawl to exist again (crawled anew: read from its start). It
  never creates the stream of a crawl that does not exist. A group deleted on a stream
  that is still there is created again after the last entry acknowledged.
* **A second follower on the same group**: each entry goes to one of them (Redis
  consumer groups share the work), so each output gets a share. That is not what an
  export is for: the follower that starts second says so in one line (``note``), once it
  has seen the other one read within the last seconds (two looks, ``LOOK_AGAIN_S``
  apart: a follower killed just before is not taken for a live one). Each follower
  process reads as a consumer of its own (``<host>-<pid>-<hex>-export``), and adopts the
  entries dead followers left pending when it starts.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time

from redis.exceptions import ResponseError

from invcrawl.frontier.retention import retains_all, trim_exported
from invcrawl.frontier.retry import Note, Retry, reconnect
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.stream import (
    StreamEntry,
    claim_idle,
    drop_consumer,
    group_consumers,
    read_group,
)

CHUNK = 1000
ALIVE_S = 1.0  # a follower reads its pending entries at least this often (its heartbeat)
LOOK_AGAIN_S = 3.0  # the second look at the group's other consumers, after the first
DEAD_CONSUMER_MS = 600_000  # a group consumer idle this long and holding nothing is removed


class CrawlGone(Exception):
    """The followed crawl was forgotten: its stream and group are gone."""


def follower_name() -> str:
    """A consumer name of its own for this process: the host, the pid, 4 random hex."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}-export"


def _gone(exc: ResponseError) -> bool:
    """The stream or the group was deleted (under a blocked read, or before a call)."""
    return str(exc).startswith(("NOGROUP", "UNBLOCKED"))


class GroupReader:
    r"""The item stream read through consumer group ``group``: first what this follower
    holds pending, then new entries as they arrive. The caller writes each batch
    durably, then :meth:`ack`\ s it. Its Redis calls go through ``reconnect`` (share one
    per process); ``note`` gets the one-line notes (a second follower)."""

    def __init__(
        self,
        session: CrawlSession,
        group: str,
        block_ms: int = 1000,
        *,
        reconnect_with: Retry | None = None,
        note: Note | None = None,
    ) -> None:
        self.session = session
        self.group = group
        self.block_ms = block_ms
        self.reconnect = reconnect_with or reconnect("export --follow")
        self.note = note or (lambda text: None)
        self.consumer = follower_name()
        self.started = False
        self.pending_first = True
        self.trim = False
        self.last_acked = ""  # the last entry id acknowledged ("": none yet)
        self._pending_read_at = -float("inf")
        self._others: dict[str, int] | None = None  # other consumers at the first look
        self._looked_at = 0.0
        self._warned = False

    @property
    def key(self) -> str:
        return self.session.keys.items

    async def start(self) -> bool:
        """Join the group (created at the stream's start if it is new) and adopt what dead
        followers left pending; False while the crawl does not exist (its stream is not
        created for it)."""
        redis = self.session.commands
        if not await redis.exists(self.key) and not await self.session.exists():
            return False
        try:  # MKSTREAM: a crawl produced, with no item committed yet
            await redis.xgroup_create(self.key, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        await self._adopt_pending()
        consumers = await group_consumers(self.session, self.group)
        for name, pending, idle in consumers:
            if name != self.consumer and not pending and idle > DEAD_CONSUMER_MS:
                await drop_consumer(self.session, self.group, name)
        self._others = {n: idle for n, _, idle in consumers if n != self.consumer}
        self._looked_at = time.monotonic()
        self.trim = not await retains_all(self.session)  # --retain-items exported
        self.started = True
        self.pending_first = True
        return True

    async def _adopt_pending(self) -> None:
        """Take over the entries other followers of the group received but never
        acknowledged (one that died on another host, or in a container with another
        hostname, would otherwise keep them pending forever); they are then re-read as
        this follower's own. At-least-once: entries a live follower of the same group
        is writing at this moment may be written twice (and it is warned about)."""
        start = "0-0"
        while True:
            start = await claim_idle(self.session, self.group, self.consumer, start, CHUNK)
            if start == "0-0":
                return

    async def read(self) -> list[StreamEntry]:
        """The next batch (empty when none came within ``block_ms``, or while the crawl
        does not exist). :class:`CrawlGone` once when the crawl is forgotten."""
        try:
            if not self.started and not await self.reconnect.call(self.start):
                await asyncio.sleep(self.block_ms / 1000)
                return []
            await self._look_for_others()
            return await self.reconnect.call(self._read)
        except ResponseError as exc:
            if not _gone(exc):
                raise
        self.started = False
        if not await self.reconnect.call(self.session.exists):
            raise CrawlGone(self.session.crawl_id)
        # The group alone was deleted: again, after what this follower acknowledged.
        await self.reconnect.call(self._recreate_group)
        return []

    async def _read(self) -> list[StreamEntry]:
        while True:
            pending = self.pending_first or time.monotonic() - self._pending_read_at >= ALIVE_S
            # Until this read's reply is in hand: a read whose reply was lost may have
            # delivered its entries, which then wait among this follower's pending ones.
            self.pending_first = True
            entries = await read_group(
                self.session,
                self.group,
                self.consumer,
                "0" if pending else ">",
                count=CHUNK,
                block_ms=None if pending else self.block_ms,
            )
            if pending:
                self._pending_read_at = time.monotonic()
            self.pending_first = pending and bool(entries)
            if entries or not pending:
                return entries

    async def ack(self, entries: list[StreamEntry]) -> None:
        """The batch is written: acknowledge it (tried until it lands), and trim what
        every group now holds."""
        ids = [entry.id for entry in entries]
        if not ids:
            return
        await self.reconnect.call(lambda: self.session.commands.xack(self.key, self.group, *ids))
        self.last_acked = ids[-1]
        if self.trim:
            await self.reconnect.call(lambda: trim_exported(self.session))

    async def _recreate_group(self) -> None:
        try:
            await self.session.commands.xgroup_create(
                self.key, self.group, id=self.last_acked or "0", mkstream=False
            )
        except ResponseError as exc:  # created meanwhile, or the stream went too
            if "BUSYGROUP" not in str(exc) and "requires the key to exist" not in str(exc):
                raise

    async def _look_for_others(self) -> None:
        """Warn once when another follower reads through the same group: one seen at the
        first look that has read again since (its idle time is shorter than the time
        between the looks)."""
        if self._others is None or time.monotonic() - self._looked_at < LOOK_AGAIN_S:
            return
        others, self._others = self._others, None
        since_ms = (time.monotonic() - self._looked_at) * 1000
        consumers = await self.reconnect.call(lambda: group_consumers(self.session, self.group))
        active = sorted(n for n, _, idle in consumers if n in others and idle < since_ms)
        if active and not self._warned:
            self._warned = True
            self.note(
                f"warning: group {self.group} of crawl {self.session.crawl_id} already has "
                f"an active follower ({active[0]}): each item goes to one of them, so each "
                "output gets a share; give each follower its own --group to get every item "
                "in each"
            )
