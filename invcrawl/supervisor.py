"""``invcrawl crawl``: the all-in-one local run, for one site or many. Supervises N
consumer processes (the first also produces every crawl) and respawns crashed ones,
shows progress, writes one JSON Lines file per crawl as items arrive, and prints a
summary. Running it again resumes: committed pages are never fetched again.
``--refresh`` re-checks finished crawls (``frontier/refresh.py``); ``--every`` repeats
that on a period.

A site whose inventory cannot be read (404, not an inventory) is reported in one line
(the producer records the error in the crawl's meta, where this reads it) and the other
sites go on; the exit code then says that one failed."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from invcrawl import terminal
from invcrawl.adaptive import Sites, run_every
from invcrawl.children import (
    LogRelay,
    child_argv,
    child_env,
    consumers_for,
    crawl_ids_args,
    last_error,
    sites_args,
)
from invcrawl.common.settings.config import Config
from invcrawl.errors import (
    EXIT_DEAD_PAGES,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UserError,
)
from invcrawl.frontier.connection import connect
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.states import CrawlState, ProducerState
from invcrawl.frontier.status import crawl_summaries, crawl_summary
from invcrawl.frontier.summary import CrawlSummary, FleetTotals
from invcrawl.localredis.server import on_parent_death
from invcrawl.output.crawl_files import CrawlOutputs
from invcrawl.process import interrupts
from invcrawl.render import (
    crawl_json,
    crawl_seconds,
    duration,
    first_line,
    fleet_progress_line,
    generators_line,
    interrupted_note,
    progress_line,
    terminal_safe,
)

MAX_RESPAWNS = 20
log = logging.getLogger("invcrawl.crawl")


def run_crawl(config: Config, sites: list[tuple[str, str]], embedded: bool = False) -> int:
    """One crawl (or refresh) of every site; with ``--every``, then refresh rounds until
    a stop signal: of them all on that period (jittered by 10%), or with ``--every
    auto`` each crawl on its own interval (invcrawl/adaptive.py, on the round planner of
    common/rounds.py). ``embedded``: ``config.redis`` is the data dir's embedded Redis
    (see :func:`child_argv`)."""

    def run_once(config: Config, sites: Sites) -> int:
        return asyncio.run(CrawlRun(config, sites, embedded).run())

    if config.every is None:
        return run_once(config, sites)
    return run_every(config, sites, run_once)


class CrawlRun:
    def __init__(
        self, config: Config, sites: Sequence[tuple[str, str]], embedded: bool = False
    ) -> None:
        assert config.redis and sites
        self.config = config
        self.embedded = embedded
        self.sites = sites
        self.crawl_ids = [crawl_id for _, crawl_id in sites]
        name = self.crawl_ids[0]
        if len(sites) > 1:  # one log folder per set of crawls run together
            digest = hashlib.sha1(",".join(self.crawl_ids).encode()).hexdigest()[:8]
            name = f"{name}-and-{len(sites) - 1}-more-{digest}"
        self.log_dir = config.data_dir / "logs" / name
        self.procs: dict[int, asyncio.subprocess.Process] = {}
        self.respawns = 0
        self.interrupted = False
        self.producing: int | None = None  # index of the process producing the crawls
        self.reported: set[str] = set()  # crawls whose producer error was shown
        self.summaries: dict[str, CrawlSummary] = {}
        self.totals = FleetTotals()  # of the summaries, kept as each one changes
        self.sessions: dict[str, CrawlSession] = {}
        self.outputs = CrawlOutputs(self.sessions, self.output_of, self.say, config.item_filter)
        self.before: dict[str, dict[str, int]] = {}  # item counters before a refresh
        self.relay: LogRelay | None = None
        self.changes_seq: int | None = None  # the change journal read up to (None: not yet)
        self.line = ""  # the progress line, made again when a tick read a change
        mode = "none" if config.quiet else config.progress
        self.progress = ("bar" if sys.stderr.isatty() else "lines") if mode == "auto" else mode

    def output_of(self, crawl_id: str) -> Path:
        if self.config.output is not None:  # one site only (checked by the command)
            return self.config.output
        return self.config.out_dir / f"{crawl_id}.jsonl"

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        with interrupts.loop_handlers(loop, self._interrupt, interrupts.TERMINAL_SIGNALS):
            if (signum := interrupts.first()) is not None:  # came before these handlers
                self._interrupt(signum)
            return await self._run()

    async def _run(self) -> int:
        started = time.monotonic()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.say(first_line(self.sites, terminal.width(sys.stderr)))
        if self.config.verbose:  # the consumers' invcrawl records (invcrawl/children.py)
            self.relay = LogRelay(self.log_dir, self.say_record)
        frontier = Frontier(connect(self.config.redis or "", self.config.redis_cluster))
        self.sessions.update((c, frontier.crawl(c)) for c in self.crawl_ids)
        try:
            run_started_ms = await frontier.registry.server_ms()
            if self.config.refresh:
                await self.start_refresh(self.sessions)
            # Items are written out while the crawl runs (this process is otherwise idle),
            # so that the end of a crawl only has the last ones left to read.
            self.outputs.open(run_started_ms)
            # The first process produces and consumes (`produce --consume`: the producer
            # is forked from it once Scrapy is imported), one interpreter and Scrapy
            # start-up fewer than a separate producer command. The other consumers
            # start at once and attach when a crawl's metadata is written; completion
            # needs its producer done, so none can finish a half-enqueued crawl.
            for index in range(await self.consumer_count(frontier)):
                if self.interrupted:
                    break
                await self.spawn(index, produce=index == 0)
            try:
                await self.supervise(frontier)
            except UserError:  # the output cannot be written, a child refused: stop
                if self.progress == "bar":
                    sys.stderr.write("\n")
                await self.stop_consumers()
                raise
            self._record(self.crawl_ids, await crawl_summaries(frontier, self.crawl_ids))
            if self.interrupted:
                # every crawl this run finished keeps its file
                await self.outputs.finish(self.summaries, this_run_only=True, announce=False)
                for crawl_id in self.outputs.written:
                    self.summary(self.summaries[crawl_id], crawl_id, time.monotonic() - started)
                items = {c: s.items for c, s in self.summaries.items()}
                self.say(interrupted_note(self.crawl_ids, self.outputs.written, items))
                return interrupts.exit_code() or EXIT_INTERRUPTED
            await self.outputs.finish(self.summaries, this_run_only=False, announce=False)
        finally:
            self.outputs.abandon()
            await frontier.aclose()
        seconds = time.monotonic() - started
        code = self.conclude(seconds)
        if self.config.json:  # one line per run (per round with --every) on stdout
            written = self.outputs.written
            outputs = {c: str(self.output_of(c)) for c in written}
            report = crawl_json(self.summaries, written, outputs, self.before, seconds, code)
            print(json.dumps(report), flush=True)
        return code

    async def start_refresh(self, sessions: dict[str, CrawlSession]) -> None:
        """Start the refresh round of every finished crawl before any consumer starts (a
        consumer would otherwise see them finished and leave); the producer then resumes
        these rounds. Counters are remembered to report this round's changes."""
        for crawl_id, session in sessions.items():
            before = await crawl_summary(session)
            self.before[crawl_id] = before.counters
            round_ = await Refresh(session).start_round()
            if round_.started:
                self.say(f"crawl {crawl_id}: refresh round {round_.number}")

    async def consumer_count(self, frontier: Frontier) -> int:
        """``--consumers``, bounded by the CPUs and, for a resumed run, by the pages left
        (``invcrawl/children.consumers_for``), with a note when fewer start."""
        summaries = await crawl_summaries(frontier, self.crawl_ids)
        produced = all(s.producer == ProducerState.DONE for s in summaries)
        left = sum(max(0, s.pages_total - s.pages_settled) for s in summaries)
        count, note = consumers_for(
            self.config.consumers,
            os.cpu_count() or 1,
            left if produced and not self.config.refresh else None,
            self.config.concurrency,
        )
        if note:
            self.say(note)
        return count

    def conclude(self, seconds: float) -> int:
        failed = [c for c, s in self.summaries.items() if s.state != CrawlState.FINISHED]
        dead = sum(s.pages_dead for s in self.summaries.values())
        for crawl_id, s in self.summaries.items():
            if crawl_id in self.outputs.written:
                self.summary(s, crawl_id, seconds)
        if len(self.sites) > 1:
            self.say(
                f"{len(self.sites) - len(failed)} of {len(self.sites)} crawls finished in "
                f"{duration(seconds)} ({seconds:.1f}s); {len(failed)} failed"
            )
        for crawl_id in failed:
            if crawl_id not in self.reported:
                error = self.summaries[crawl_id].error or "did not finish"
                self.say(f"invcrawl: error: crawl {crawl_id}: {error}", always=True)
        if failed:
            return EXIT_FAILED
        if dead:
            for crawl_id, s in self.summaries.items():
                if s.pages_dead:
                    self.say(
                        f"{s.pages_dead} page(s) of crawl {crawl_id} dead-lettered: see "
                        f"`invcrawl dlq list --crawl-id {crawl_id}`; fix and `invcrawl dlq "
                        f"redrive --all --crawl-id {crawl_id}`, then run this command again"
                    )
            return EXIT_DEAD_PAGES
        return EXIT_OK

    async def stop_consumers(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in self.procs.values():
            await proc.wait()
        self.procs.clear()

    async def spawn(self, index: int, produce: bool = False) -> None:
        if produce:
            crawl_id = ["--crawl-id", self.crawl_ids[0]] if len(self.sites) == 1 else []
            sites = sites_args([site for site, _ in self.sites], self.log_dir)
            argv = child_argv("produce", *crawl_id, "--consume", *sites)
            command = "produce"
            self.producing = index
        else:
            pinned = crawl_ids_args(self.crawl_ids, self.log_dir)
            command, argv = "consume", child_argv("consume", "--burst", *pinned)
        log = open(self.log_dir / f"consumer-{index}.log", "ab")  # noqa: SIM115
        self.procs[index] = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
            env=child_env(self.config, command, self.embedded),
            # a SIGKILLed supervisor takes its consumers along (they stop cleanly)
            preexec_fn=on_parent_death(signal.SIGTERM),
        )
        log.close()

    async def supervise(self, frontier: Frontier) -> None:
        last_line, last_text = 0.0, ""
        while self.procs:
            await self._wait_any(0.5)
            if self.relay is not None:
                self.relay.relay()
            columns = (terminal.width(sys.stderr) or 80) - 1
            if (await self.tick(frontier) or not self.line) and self.summaries:
                self.line = self._progress_line(columns if self.progress == "bar" else None)
            now = time.monotonic()
            if self.progress == "bar":
                sys.stderr.write("\r" + self.line.ljust(columns))
                sys.stderr.flush()
            elif self.progress == "lines" and now - last_line >= 5 and self.line != last_text:
                self.say(self.line)  # (the same line again would say nothing new)
                last_line, last_text = now, self.line
            for index, proc in list(self.procs.items()):
                if proc.returncode is None:
                    continue
                del self.procs[index]
                if proc.returncode == 0 or self.interrupted or self._all_settled():
                    continue
                log = self.log_dir / f"consumer-{index}.log"
                why = last_error(log)
                if proc.returncode == EXIT_USAGE:  # it would refuse the same way again: stop
                    raise UserError(f"consumer {index} could not start: {why} (log: {log})")
                if self.respawns >= MAX_RESPAWNS:
                    self.say(
                        f"\nconsumer {index} exited with {proc.returncode} ({why}); not restarted"
                    )
                    continue
                self.respawns += 1
                produce = index == self.producing and not self._all_produced()
                self.say(
                    f"\nconsumer {index} exited with {proc.returncode} ({why}); restarting it "
                    f"(log: {log})"
                )
                await self.spawn(index, produce=produce)
        if self.progress == "bar":
            sys.stderr.write("\n")

    async def tick(self, frontier: Frontier) -> list[str]:
        """One tick's Redis work: read what changed since the last tick (the crawls of
        this run marked in the change journal, ``frontier/registry.py``; every crawl the
        first time): their summaries and producer errors; append their new items to the
        files, and make final the files of those this run finished. What a tick costs is
        what changed, not the number of crawls (a test counts its Redis commands at 10
        and at 1,000 crawls). Returns the crawls read."""
        changed: list[str] = []
        with contextlib.suppress(Exception):  # (Redis away: read again next tick)
            changed = await self._read_changes(frontier)
        await self.outputs.pull(changed)
        if self.outputs.exports:  # a crawl this run finished: its final file at once
            await self.outputs.finish(
                self.summaries,
                this_run_only=True,
                announce=len(self.crawl_ids) > 1,
                crawl_ids=changed,
            )
        return changed

    async def _read_changes(self, frontier: Frontier) -> list[str]:
        registry = frontier.registry
        if self.changes_seq is None:
            seq = await registry.changes_seq()
            changed = list(self.crawl_ids)
        else:
            ids, seq = await registry.changed_since(self.changes_seq)
            changed = [c for c in ids if c in self.sessions]
        if changed:
            self._record(changed, await crawl_summaries(frontier, changed))
            self._report_failed_producers(changed)
        self.changes_seq = seq  # (only once read: a failed tick reads them again)
        return changed

    def _record(self, crawl_ids: Sequence[str], summaries: Sequence[CrawlSummary]) -> None:
        for crawl_id, summary in zip(crawl_ids, summaries, strict=True):
            self.summaries[crawl_id] = summary
            self.totals.update(crawl_id, summary)

    def _progress_line(self, width: int | None) -> str:
        if len(self.summaries) == 1:
            return progress_line(next(iter(self.summaries.values())), width)
        return fleet_progress_line(self.totals, width)

    def _report_failed_producers(self, crawl_ids: Sequence[str]) -> None:
        """One line per site whose inventory could not be read, as soon as it is known;
        the other sites go on."""
        for crawl_id in crawl_ids:
            s = self.summaries[crawl_id]
            if s.producer_failed and crawl_id not in self.reported:
                self.reported.add(crawl_id)
                self.say(f"\ninvcrawl: error: crawl {crawl_id}: {s.error}", always=True)

    def _all_produced(self) -> bool:
        producers = {s.producer for s in self.summaries.values()}
        return len(self.summaries) == len(self.crawl_ids) and producers <= {
            ProducerState.DONE,
            ProducerState.FAILED,
        }

    def _all_settled(self) -> bool:
        states = {s.state for s in self.summaries.values()}
        return len(self.summaries) == len(self.crawl_ids) and states <= {
            CrawlState.FINISHED,
            CrawlState.FAILED,
        }

    async def _wait_any(self, timeout: float) -> None:
        """Sleep until a consumer exits (the crawl is usually over then: export at once)
        or ``timeout`` passes (progress refresh)."""
        waits = [asyncio.ensure_future(proc.wait()) for proc in self.procs.values()]
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def _interrupt(self, signum: int = signal.SIGINT) -> None:
        interrupts.record(signum)
        if self.interrupted:  # second signal: stop now
            for proc in self.procs.values():
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            return
        self.interrupted = True
        self.say("\nstopping consumers (they finish or release their pages)...")
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()

    def summary(self, s: CrawlSummary, crawl_id: str, run_seconds: float) -> None:
        seconds = crawl_seconds(s, run_seconds)  # this crawl's, not the run's
        by = s.items_by_status
        written, output = self.outputs.written[crawl_id], self.output_of(crawl_id)
        self.say(
            f"crawl {s.crawl_id} {s.state} in {duration(seconds)} "
            f"({seconds:.1f}s)\n"
            f"  entries  {s.entries_total} on {s.pages_total} pages; "
            f"{s.pages_done} pages done, {s.pages_dead} dead\n"
            f"  items    {s.items}: "
            + ", ".join(f"{k} {v}" for k, v in by.items())
            + "\n"
            + generators_line(s)
            + f"  output   {written} items written to {output}"
        )
        if s.crawl_id in self.before:
            was, now = self.before[s.crawl_id], s.counters
            changed = {
                event: now.get(counter, 0) - was.get(counter, 0)
                for event, counter in (
                    ("added", "items_new"),
                    ("changed", "items_updated"),
                    ("removed", "items_removed"),
                )
            }
            pages = s.counters
            self.say(
                "  refresh  "
                + ", ".join(f"{k} {v}" for k, v in changed.items())
                + f"; pages unchanged {pages.get('pages:unchanged', 0)}, "
                f"fetched {pages.get('pages:fetched', 0)} (`invcrawl changes` lists them)"
            )

    def say_record(self, text: str) -> None:
        """A consumer's log record (``-v``), on its own line above the progress bar."""
        if self.progress == "bar":
            sys.stderr.write("\r\x1b[K")
        self.say(text)

    def say(self, text: str, *, always: bool = False) -> None:
        if always or not terminal.quiet():
            print(terminal_safe(text), file=sys.stderr, flush=True)  # errors quote sites
