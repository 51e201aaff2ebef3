"""``invcrawl crawl``: the all-in-one local run. Supervises N consumer processes (the
first also produces the crawl) and respawns crashed ones, shows progress, exports JSON
Lines and prints a summary. Running it again resumes: committed pages are never fetched again."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import Any

from common.config import OPTIONS, Config
from frontier.connection import connect
from frontier.export import IncrementalExport, export_items
from frontier.session import CrawlSession, Frontier
from frontier.states import ProducerState
from frontier.status import crawl_status
from invcrawl.errors import EXIT_DEAD_PAGES, EXIT_FAILED, EXIT_INTERRUPTED
from invcrawl.render import duration, progress_line

MAX_RESPAWNS = 20


def child_argv(config: Config, command: str, *extra: str) -> list[str]:
    """The command line of a child process: the options it inherits from this one, as
    explicit flags (so they win over any INVCRAWL_* variable the child might see)."""
    argv = [sys.executable, "-m", "invcrawl", command]
    for option in OPTIONS:
        if not option.inherited or command not in option.commands:
            continue
        value = getattr(config, option.name)
        if option.switch is not None:
            if value == option.switch:
                argv.append(option.flag)
        elif value is not None:
            argv += [option.flag, str(value)]
    return argv + list(extra)


def run_crawl(config: Config, site: str) -> int:
    return asyncio.run(CrawlRun(config, site).run())


class CrawlRun:
    def __init__(self, config: Config, site: str) -> None:
        self.config = config
        self.site = site
        assert config.crawl_id and config.redis
        self.crawl_id = config.crawl_id
        self.log_dir = config.data_dir / "logs" / self.crawl_id
        self.procs: dict[int, asyncio.subprocess.Process] = {}
        self.respawns = 0
        self.interrupted = False
        self.failed: int | None = None  # exit code when producing failed
        self.producing: int | None = None  # index of the process producing the crawl
        self.export: IncrementalExport | None = None
        mode = config.progress
        self.progress = ("bar" if sys.stderr.isatty() else "lines") if mode == "auto" else mode

    async def run(self) -> int:
        started = time.monotonic()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._interrupt)
        self.say(f"crawl {self.crawl_id}: reading the inventory of {self.site}")
        frontier = Frontier(connect(self.config.redis or ""))
        session = frontier.crawl(self.crawl_id)
        output = self.config.output or Path(f"{self.crawl_id}.jsonl")
        # Items are written out while the crawl runs (this process is otherwise idle),
        # so that the end of the crawl only has the last ones left to read.
        if str(output) != "-":
            self.export = IncrementalExport(session, output)
        try:
            # The first process produces and consumes (`produce --consume`: the producer
            # is forked from it once Scrapy is imported), one interpreter and Scrapy
            # start-up fewer than a separate producer command. The other consumers
            # start at once and attach when the crawl's metadata is written; completion
            # needs the producer done, so none can finish a half-enqueued crawl.
            for index in range(self.config.consumers):
                await self.spawn(index, produce=index == 0)
            status = await self.supervise(session)
            if self.failed is not None:
                return self.failed
            if self.interrupted:
                self.say("\ninterrupted: run the same command again to resume")
                return EXIT_INTERRUPTED
            if self.export:
                written = await self.export.finish()
                self.export = None
            else:
                written = await export_items(session, output)
            status = await crawl_status(session, self.config.lease_ms)
        finally:
            if self.export:
                self.export.abandon()
            await frontier.aclose()
        self.summary(status, written, output, time.monotonic() - started)
        if status["pages_dead"]:
            self.say(
                f"{status['pages_dead']} page(s) dead-lettered: see "
                f"`invcrawl dlq list --crawl-id {self.crawl_id}`; fix and "
                "`invcrawl dlq redrive --all`, then run this command again"
            )
            return EXIT_DEAD_PAGES
        return 0

    async def stop_consumers(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in self.procs.values():
            await proc.wait()
        self.procs.clear()

    async def spawn(self, index: int, produce: bool = False) -> None:
        if produce:
            argv = child_argv(self.config, "produce", self.site, "--consume")
        else:
            argv = child_argv(self.config, "consume", "--burst")
        log = open(self.log_dir / f"consumer-{index}.log", "ab")  # noqa: SIM115
        if produce:
            self.producing = index
        self.procs[index] = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=log
        )
        log.close()

    async def supervise(self, session: CrawlSession) -> dict[str, Any]:
        last_line = 0.0
        status: dict[str, Any] = {}
        while self.procs:
            await self._wait_any(0.5)
            with contextlib.suppress(Exception):
                status = await crawl_status(session, self.config.lease_ms)
                now = time.monotonic()
                if self.progress == "bar":
                    sys.stderr.write("\r" + progress_line(status).ljust(79))
                    sys.stderr.flush()
                elif self.progress == "lines" and now - last_line >= 5:
                    self.say(progress_line(status))
                    last_line = now
                if self.export:
                    await self.export.pull()
            for index, proc in list(self.procs.items()):
                if proc.returncode is None:
                    continue
                del self.procs[index]
                producer, error = await self._producer(session, index)
                if (
                    producer == ProducerState.FAILED
                    and proc.returncode > 0
                    and not self.interrupted
                ):
                    # The producer's own error (an unreachable site, a bad inventory), as
                    # it recorded it in Redis: show it and stop; retrying cannot fix it.
                    self.say(f"\ninvcrawl: error: {error}")
                    await self.stop_consumers()
                    self.failed = EXIT_FAILED
                    return status
                produced = producer == ProducerState.DONE
                if (
                    proc.returncode != 0
                    and not self.interrupted
                    and status.get("state") != "finished"
                    and self.respawns < MAX_RESPAWNS
                ):
                    self.respawns += 1
                    self.say(
                        f"\nconsumer {index} exited with {proc.returncode}; restarting "
                        f"it (log: {self.log_dir}/consumer-{index}.log)"
                    )
                    await self.spawn(index, produce=not produced)
        if self.progress == "bar":
            sys.stderr.write("\n")
        return status

    async def _producer(
        self, session: CrawlSession, index: int
    ) -> tuple[ProducerState | None, str | None]:
        """The state of the crawl's producer as seen when process ``index`` exited (done
        when that process was not the one producing), and its error line if it failed."""
        if self.producing != index:
            return ProducerState.DONE, None
        meta: dict[str, str] = {}
        with contextlib.suppress(Exception):
            meta = await session.meta()
        state = ProducerState(meta["producer"]) if meta.get("producer") else None
        if state == ProducerState.DONE:
            self.producing = None
        return state, meta.get("error")

    async def _wait_any(self, timeout: float) -> None:
        """Sleep until a consumer exits (the crawl is usually over then: export at once)
        or ``timeout`` passes (progress refresh)."""
        waits = [asyncio.ensure_future(proc.wait()) for proc in self.procs.values()]
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def _interrupt(self) -> None:
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

    def summary(self, s: dict[str, Any], written: int, output: Path, seconds: float) -> None:
        by = s["items_by_status"]
        self.say(
            f"crawl {self.crawl_id} {s['state']} in {duration(seconds)} "
            f"({seconds:.1f}s)\n"
            f"  entries  {s['entries_total']} on {s['pages_total']} pages; "
            f"{s['pages_done']} pages done, {s['pages_dead']} dead\n"
            f"  items    {s['items']}: " + ", ".join(f"{k} {v}" for k, v in by.items()) + "\n"
            f"  output   {written} items written to {output}"
        )

    def say(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)
