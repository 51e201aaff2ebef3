"""The output files of one ``invcrawl crawl`` run, one per crawl (``invcrawl/supervisor.py``
supervises the run).

Each file is appended while its crawl runs (:class:`~invcrawl.output.export.IncrementalExport`)
and is final (renamed from ``.part``, fsynced, its ``crawl-output`` group moved under
``--retain-items exported``) as soon as *this run* has finished that crawl: a two-site
run whose small site is done keeps that site's file whatever happens to the other one
(Ctrl-C, a crash of the run). A crawl an earlier run finished counts only once this
run's producer is done with it (``produced_at`` after the run started, both Redis
times): a re-run may add pages. Standard output (``-o -``) is written at the end only.

A write that fails (a full disk, the ``.part`` file removed by someone else) ends the
run with one line; the crawl stays in Redis and the same command writes the file. A
crawl forgotten while the run writes it (``forget --force``) keeps its ``.part`` file.
"""

from __future__ import annotations

import logging
import resource
from collections.abc import Callable, Iterable
from pathlib import Path

from invcrawl.common.itemfilter import NO_FILTER, ItemFilter
from invcrawl.errors import UserError
from invcrawl.frontier.export import HistoryTrimmed, pull_tails
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.states import CrawlState, ProducerState
from invcrawl.frontier.summary import CrawlSummary
from invcrawl.output.export import FilteredOnlyCopy, IncrementalExport, export_to
from invcrawl.output.files import PartFileLost, is_stdout
from invcrawl.output.paths import write_failed

KEPT = "the crawl is kept in Redis: run the same command again to write the file"
FILES_SPARE = 256  # open files beyond the outputs: Redis, logs, the event loop
log = logging.getLogger("invcrawl.crawl")


def room_for_files(count: int) -> None:
    """Raise this process's soft limit on open files to ``count`` (at most the hard
    limit; never lowered)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count if hard == resource.RLIM_INFINITY else min(count, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def kept(exc: OSError) -> str:
    """What the one line of a failed output write says was kept, and what to do."""
    if isinstance(exc, PartFileLost):
        return KEPT
    return KEPT.replace("run the same", "free some space and run the same")


class CrawlOutputs:
    def __init__(
        self,
        sessions: dict[str, CrawlSession],
        output_of: Callable[[str], Path],
        say: Callable[[str], None],
        item_filter: ItemFilter = NO_FILTER,
    ) -> None:
        self.sessions = sessions
        self.item_filter = item_filter  # what of each item the files hold
        self.output_of = output_of
        self.say = say
        self.exports: dict[str, IncrementalExport] = {}  # files not final yet
        self.written: dict[str, int] = {}  # crawls whose file is final: items in it
        self.run_started_ms = 0  # Redis time (as the crawls' produced_at)
        self.unread: set[str] = set()  # crawls whose last read failed: read again

    def open(self, run_started_ms: int) -> None:
        """Create the ``.part`` file of every crawl written to a file (each held open
        until final: the soft limit on open files is raised for them, up to the hard
        one, so that thousands of sites fit in the usual 1,024)."""
        self.run_started_ms = run_started_ms
        room_for_files(len(self.sessions) + FILES_SPARE)
        for crawl_id, session in self.sessions.items():
            output = self.output_of(crawl_id)
            if not is_stdout(output):
                try:
                    self.exports[crawl_id] = IncrementalExport(session, output, self.item_filter)
                except OSError as exc:
                    raise write_failed(output, exc, "nothing was crawled") from None

    async def pull(self, crawl_ids: Iterable[str]) -> None:
        """Append the items newly committed to these crawls (those changed since the last
        pull) to their files, read in one round trip (``frontier/export.pull_tails``). A
        write that fails ends the run with one line; Redis errors are retried next turn."""
        wanted = self.unread | set(crawl_ids)
        exports = [(c, self.exports[c]) for c in sorted(wanted) if c in self.exports]
        self.unread = set()
        if not exports:
            return
        try:
            pulled = await pull_tails([export.tail for _, export in exports])
        except Exception as exc:
            log.debug("export: %s", exc)
            self.unread = {crawl_id for crawl_id, _ in exports}
            return
        for (crawl_id, export), lines in zip(exports, pulled, strict=True):
            if isinstance(lines, Exception):
                log.debug("export of %s: %s", crawl_id, lines)
                self.unread.add(crawl_id)
                continue
            try:
                export.write(lines)
            except OSError as exc:
                raise write_failed(self.output_of(crawl_id), exc, kept(exc)) from None

    async def finish(
        self,
        summaries: dict[str, CrawlSummary],
        this_run_only: bool,
        announce: bool,
        crawl_ids: Iterable[str] | None = None,
    ) -> None:
        """Make final the file of every finished crawl whose file is not final yet
        (``crawl_ids``: of these only, the crawls changed since the last look).
        ``this_run_only``: only crawls this run finished (see the module docstring);
        otherwise (the consumers all gone) every crawl in state ``finished``, and the
        others lose their ``.part`` file. ``announce``: say so, one line per crawl."""
        for crawl_id in self.sessions if crawl_ids is None else crawl_ids:
            if crawl_id in self.written:
                continue
            if this_run_only and crawl_id not in self.exports:
                continue  # (standard output: written at the end only)
            if await self._finished(summaries.get(crawl_id), crawl_id, this_run_only):
                await self._write(crawl_id)
                if announce:
                    output = self.output_of(crawl_id)
                    self.say(
                        f"\ncrawl {crawl_id} finished: {self.written[crawl_id]} items in {output}"
                    )
            elif not this_run_only and crawl_id in self.exports:
                await self._unfinished(crawl_id, self.exports.pop(crawl_id))

    async def _unfinished(self, crawl_id: str, export: IncrementalExport) -> None:
        """The file of a crawl that did not finish, once its consumers are gone: none for
        a failed crawl (nothing was crawled); a crawl forgotten while it ran (``forget
        --force``) keeps what was written, in its ``.part`` file (output files are kept:
        the crawl is gone from Redis, so that file is all that is left of it)."""
        if await self.sessions[crawl_id].exists():
            export.abandon()
            return
        written = export.part.keep()
        self.say(
            f"\ncrawl {crawl_id} was forgotten: the {written} items written so far are kept "
            f"in {export.part.path}"
        )

    async def _finished(
        self, summary: CrawlSummary | None, crawl_id: str, this_run_only: bool
    ) -> bool:
        if not summary or summary.state != CrawlState.FINISHED:
            return False
        if not this_run_only:
            return True
        if summary.producer != ProducerState.DONE:
            return False
        meta = await self.sessions[crawl_id].meta()
        return meta.produced_at >= self.run_started_ms

    async def _write(self, crawl_id: str) -> None:
        """Move the crawl's file into place (or write it, for standard output)."""
        output = self.output_of(crawl_id)
        export = self.exports.pop(crawl_id, None)
        try:
            if export:
                self.written[crawl_id] = await _finish_export(export)
            else:
                self.written[crawl_id] = await export_to(
                    self.sessions[crawl_id], output, item_filter=self.item_filter
                )
        except OSError as exc:
            if export:
                export.abandon()
            if isinstance(exc, BrokenPipeError):
                raise
            raise write_failed(output, exc, kept(exc)) from None

    def abandon(self) -> None:
        """Remove the ``.part`` files not made final."""
        for export in self.exports.values():
            export.abandon()
        self.exports.clear()


async def _finish_export(export: IncrementalExport) -> int:
    try:
        return await export.finish()
    except (HistoryTrimmed, FilteredOnlyCopy) as exc:
        export.abandon()
        raise UserError(f"{exc}; the crawl is kept in Redis") from None
