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
from common.export import IncrementalExport, export_items
from common.redisconn import connect
from common.status import crawl_status
from common.store import Store
from invcrawl.render import duration, progress_line

EXIT_DEAD_PAGES = 3
MAX_RESPAWNS = 20
# Options a child process inherits from this one (as explicit flags, so they win over
# any INVCRAWL_* variable the child might see).
PASSED = (
    "redis",
    "crawl_id",
    "concurrency",
    "lease",
    "task_deadline",
    "max_tries",
    "backoff_base",
    "backoff_max",
    "robots",
    "download_timeout",
    "user_agent",
    "log_level",
    "max_inflated_mb",
    "slots",
)


def child_argv(config: Config, command: str, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "invcrawl", command]
    for option in OPTIONS:
        if option.name not in PASSED or command not in option.commands:
            continue
        value = getattr(config, option.name)
        if option.is_switch:
            if option.name == "robots" and not value:
                argv.append("--no-robots")
            continue
        if value is not None:
            argv += [option.flag or "", str(value)]
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
        self.logs: dict[int, tuple[Path, int]] = {}  # index -> (log file, offset at spawn)
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
        redis = connect(self.config.redis or "")
        store = Store(redis, self.crawl_id)
        output = self.config.output or Path(f"{self.crawl_id}.jsonl")
        # Items are written out while the crawl runs (this process is otherwise idle),
        # so that the end of the crawl only has the last ones left to read.
        if str(output) != "-":
            self.export = IncrementalExport(store, output)
        try:
            # The first process produces and consumes (`produce --consume`: the producer
            # is forked from it once Scrapy is imported), one interpreter and Scrapy
            # start-up fewer than a separate producer command. The other consumers
            # start at once and attach when the crawl's metadata is written; completion
            # needs the producer done, so none can finish a half-enqueued crawl.
            for index in range(self.config.consumers):
                await self.spawn(index, produce=index == 0)
            status = await self.supervise(store)
            if self.failed is not None:
                return self.failed
            if self.interrupted:
                self.say("\ninterrupted: run the same command again to resume")
                return 130
            if self.export:
                written = await self.export.finish()
                self.export = None
            else:
                written = await export_items(store, output)
            status = await crawl_status(store, self.config.lease_ms)
        finally:
            if self.export:
                self.export.abandon()
            await redis.aclose()
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
        path = self.log_dir / f"consumer-{index}.log"
        log = open(path, "ab")  # noqa: SIM115
        self.logs[index] = (path, log.tell())
        if produce:
            self.producing = index
        self.procs[index] = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=log
        )
        log.close()

    async def supervise(self, store: Store) -> dict[str, Any]:
        last_line = 0.0
        status: dict[str, Any] = {}
        while self.procs:
            await self._wait_any(0.5)
            with contextlib.suppress(Exception):
                status = await crawl_status(store, self.config.lease_ms)
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
                produced = await self._produced(store, index)
                if not produced and proc.returncode > 0 and not self.interrupted:
                    # The producer's own error (an unreachable site, a bad inventory):
                    # show its one line and stop; retrying cannot fix it.
                    self._show_producer_error(index)
                    await self.stop_consumers()
                    self.failed = proc.returncode
                    return status
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

    async def _produced(self, store: Store, index: int) -> bool:
        """Whether the crawl no longer needs process ``index`` to produce it."""
        if self.producing != index:
            return True
        with contextlib.suppress(Exception):
            if (await store.meta()).get("producer") == "done":
                self.producing = None
                return True
        return False

    def _show_producer_error(self, index: int) -> None:
        path, offset = self.logs[index]
        with open(path, "rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        lines = [ln for ln in text.splitlines() if ln.startswith("invcrawl: error:")]
        print("\n".join(lines) or text.strip()[-2000:], file=sys.stderr)

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
