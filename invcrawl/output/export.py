"""The output files of ``export`` and ``crawl``: what ``frontier/export.py`` reads from
the item stream, written through ``invcrawl/output/files.py`` (``.part`` file, fsync, atomic
rename).

* :func:`export_to`: the latest version of every live item (``invcrawl export``, and
  ``crawl -o -``).
* :class:`IncrementalExport`: ``invcrawl crawl``'s file, appended while the crawl runs,
  so that once it is complete only the tail is left to read; moved into place by
  :meth:`IncrementalExport.finish` as soon as that crawl is finished.
* :func:`follow_to`: ``export --follow``, each batch acknowledged once it is fsynced;
  through Redis outages and the crawl's forgetting (:class:`Follower`).
* :func:`export_all_to`, :func:`follow_all_to`: the same for every crawl at once (``export``
  without ``--crawl-id``), one output whose items name their crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import IO, Any

from invcrawl.common.itemfilter import NO_FILTER, ItemFilter
from invcrawl.frontier.every_crawl import DISCOVER_EVERY, check_exportable, iter_latest_all
from invcrawl.frontier.export import (
    StreamTail,
    check_history,
    iter_latest,
    merged_with,
)
from invcrawl.frontier.follow import CrawlGone, GroupReader
from invcrawl.frontier.retention import acknowledge_output, retains_all, trimmed_before
from invcrawl.frontier.retry import Note, Retry, reconnect
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.stream import StreamEntry
from invcrawl.output.files import (
    PartFile,
    appending,
    durable_flush,
    read_lines,
    write_lines,
    write_lines_async,
)


class FilteredOnlyCopy(Exception):
    """A crawl whose output is the only copy of its items cannot be written filtered."""


def say_nothing(text: str) -> None:
    """The default ``note``: silent."""


async def export_to(
    session: CrawlSession,
    output: Path | None,
    base: Path | None = None,
    item_filter: ItemFilter = NO_FILTER,
) -> int:
    """Write the latest items (atomically, unless to standard output), those
    ``item_filter`` keeps, as it shapes them; the count. With ``base`` (an earlier
    complete export of a crawl that keeps only unexported items): that export updated by
    what the stream still holds."""
    have_base = base is not None and base.exists()
    await check_history(session, have_base, "give its earlier complete export with --base FILE")
    if base is not None and have_base:
        latest, _ = await merged_with(session, read_lines(base))
        return write_lines(item_filter.texts(latest.values()), output)
    return await write_lines_async(item_filter.texts_async(iter_latest(session)), output)


class IncrementalExport:
    """The items committed since the last :meth:`pull`, appended to ``output``'s
    ``.part`` file. The result is the file :func:`export_to` writes: if a key shows up
    twice (an item updated by a re-crawl or a refresh) or a tombstone does,
    :meth:`finish` falls back to it, since the file holds the latest version of the live
    items only."""

    def __init__(
        self, session: CrawlSession, output: Path, item_filter: ItemFilter = NO_FILTER
    ) -> None:
        self.session = session
        self.output = output
        self.item_filter = item_filter
        self.tail = StreamTail(session)
        self.part = PartFile(output)

    async def pull(self) -> int:
        """Append what was committed since the last call; returns how many items.
        :class:`~invcrawl.output.files.PartFileLost` if the ``.part`` file is gone."""
        return self.write(await self.tail.pull())

    def write(self, lines: list[bytes]) -> int:
        """Append lines its tail pulled (:func:`~invcrawl.frontier.export.pull_tails`); how many.
        :class:`~invcrawl.output.files.PartFileLost` if the ``.part`` file is gone."""
        self.part.check()
        kept = self.item_filter.lines(lines)
        self.part.write_lines(kept)
        return len(kept)

    async def finish(self) -> int:
        """Read the tail and move the file into place; returns the item count (what the
        file holds)."""
        await self.pull()
        if await retains_all(self.session):
            if self.tail.stale:
                self.part.abandon()
                return await export_to(self.session, self.output, item_filter=self.item_filter)
            return self.part.commit()
        if not self.item_filter.empty:
            # acknowledged, the file would be the only copy: what a filter left out lost
            self.part.abandon()
            raise FilteredOnlyCopy(
                f"crawl {self.session.crawl_id} keeps only unexported items (--retain-items "
                "exported): its output is their only copy and must hold them whole; crawl "
                "it without --domain/--role/--status/--fields/--omit-page-text and filter "
                "with `invcrawl export --base`"
            )
        # --retain-items exported: once acknowledged, the file is the only copy of the
        # items: complete (merged with the previous output after a refresh), fsynced and
        # in place before the group moves on and the stream is trimmed.
        if self.tail.stale or await trimmed_before(self.session):
            self.part.abandon()
            await check_history(
                self.session,
                self.output.exists(),
                f"its earlier output {self.output} is gone (merge a copy of it with "
                "`invcrawl export --base FILE`)",
            )
            base = read_lines(self.output) if self.output.exists() else None
            latest, last = await merged_with(self.session, base)
            count = write_lines(latest.values(), self.output)
        else:
            count, last = self.part.commit(), self.tail.last_id
        if last:
            await acknowledge_output(self.session, last)
        return count

    def abandon(self) -> None:
        self.part.abandon()


# How long a stopping follower waits for Redis to take the acknowledgement of the batch
# it has just written.
ACK_ON_EXIT_SECONDS = 5.0


async def follow_to(
    session: CrawlSession,
    output: Path | None,
    group: str,
    note: Note = say_nothing,
    item_filter: ItemFilter = NO_FILTER,
) -> int:
    """Append items to ``output`` as they arrive, acknowledging each batch after it is
    flushed and fsynced. Runs until interrupted, through Redis outages and the crawl's
    forgetting (``frontier/follow.py``), saying each in one line (``note``); returns the
    count."""
    with appending(output) as out:
        try:
            follower = Follower(reconnect("export --follow", note), note, item_filter)
            return await follower.follow(session, out, group)
        except (asyncio.CancelledError, KeyboardInterrupt):
            return 0


class Follower:
    """What the followers of one ``export --follow`` share: one :class:`Retry` (an
    outage is said once, not once per crawl), the notes, the count of items written."""

    def __init__(
        self, reconnect_with: Retry, note: Note, item_filter: ItemFilter = NO_FILTER
    ) -> None:
        self.reconnect = reconnect_with
        self.note = note
        self.item_filter = item_filter
        self.count = 0
        self.gone: set[str] = set()  # crawls said to be forgotten
        self._warned = False

    def crawl_gone(self, crawl_id: str) -> None:
        """Say once that a followed crawl was forgotten (seen by its follower, or gone
        from the registry)."""
        if crawl_id not in self.gone:
            self.gone.add(crawl_id)
            self.note(
                f"crawl {crawl_id} was forgotten (its items left Redis; the output keeps "
                "those written): followed again if it is crawled again"
            )

    def warn_once(self, text: str) -> None:
        if not self._warned:
            self._warned = True
            self.note(text)

    async def follow(self, session: CrawlSession, out: IO[str], group: str) -> int:
        """Follow one crawl's stream through ``group`` into ``out`` (which other
        followers may share: each batch is written and flushed with no await in between,
        so batches of several crawls never interleave inside a line). Runs until
        cancelled; returns the items it wrote."""
        reader = GroupReader(session, group, reconnect_with=self.reconnect, note=self.warn_once)
        count = 0
        unacknowledged: list[StreamEntry] = []  # written and fsynced, not yet acknowledged
        try:
            while True:
                try:
                    entries = await reader.read()
                except CrawlGone:
                    self.crawl_gone(session.crawl_id)
                    continue
                if not entries:
                    continue
                self.gone.discard(session.crawl_id)
                for entry in entries:
                    line = self.item_filter.text(entry.item_json())
                    if line is not None:
                        out.write(line + "\n")
                durable_flush(out)
                unacknowledged = entries
                count += len(entries)
                self.count += len(entries)
                await reader.ack(entries)
                unacknowledged = []
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Stopped between writing a batch and acknowledging it: the batch is in the
            # file, so acknowledge it (and trim) on the way out, unless Redis does not
            # answer within the grace period (then it is delivered again next time:
            # at-least-once, never lost).
            if unacknowledged:
                await _finish(reader.ack(unacknowledged), ACK_ON_EXIT_SECONDS)
            return count


async def _finish(work: Coroutine[Any, Any, None], grace: float) -> None:
    """Run ``work`` to its end, or for ``grace`` seconds, through the cancellations a
    stopping command repeats (invcrawl/scope.py cancels its job again every second);
    its errors are dropped: this is the way out."""
    task = asyncio.ensure_future(work)
    deadline = asyncio.get_running_loop().time() + grace
    while not task.done():
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            task.cancel()
            break
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({task}, timeout=left)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: not logged as never retrieved


async def export_all_to(
    frontier: Frontier,
    crawl_ids: Sequence[str],
    output: Path | None,
    item_filter: ItemFilter = NO_FILTER,
) -> int:
    """The latest version of every live item of every crawl (those ``item_filter``
    keeps), in one file written atomically (or on standard output); the count."""
    await check_exportable(frontier, crawl_ids)
    lines = item_filter.texts_async(iter_latest_all(frontier, crawl_ids))
    return await write_lines_async(lines, output)


async def follow_all_to(
    frontier: Frontier,
    output: Path | None,
    group: str,
    note: Note = say_nothing,
    item_filter: ItemFilter = NO_FILTER,
) -> int:
    """``export --follow`` of every crawl, and of every crawl created meanwhile: one
    follower per crawl (each its own consumer group ``group`` on its stream), all writing
    to one output; the follower of a crawl that left the registry (forgotten) stops.
    Runs until cancelled, through Redis outages; returns the items written."""
    follower = Follower(reconnect("export --follow", note), note, item_filter)
    followers: dict[str, asyncio.Task[int]] = {}
    with appending(output) as out:
        try:
            while True:
                known = await follower.reconnect.call(frontier.registry.known)
                for crawl_id in known:
                    if crawl_id not in followers:
                        follower.gone.discard(crawl_id)
                        following = follower.follow(frontier.crawl(crawl_id), out, group)
                        followers[crawl_id] = asyncio.ensure_future(following)
                for crawl_id in sorted(set(followers) - set(known)):
                    follower.crawl_gone(crawl_id)
                    followers.pop(crawl_id).cancel()
                failed = [t for t in followers.values() if t.done() and t.exception()]
                if failed:
                    raise failed[0].exception()  # type: ignore[misc]
                await asyncio.sleep(DISCOVER_EVERY)
        except (asyncio.CancelledError, KeyboardInterrupt):
            pass
        finally:
            for task in followers.values():
                task.cancel()
            await asyncio.gather(*followers.values(), return_exceptions=True)
    return follower.count
