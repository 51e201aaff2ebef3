"""Crawl harness shared by the e2e and fault suites.

* :func:`build_site` writes a small synthetic Sphinx site (an ``objects.inv`` and
  alabaster-like HTML pages) whose inventory keys are known in advance: a few hundred
  pages build in milliseconds, so tests can crawl sites large enough to outlast
  consumer membership changes.
* :class:`Throttle` is a fault policy for :func:`support.httpserver.serve`: a per-request
  delay that the test can change while the crawl runs (slow the crawl down while
  consumers join and leave, then let it finish), and per-path actions.
* :class:`Harness` runs the real CLI as subprocesses against one Redis and one crawl:
  ``produce``, N ``consume`` processes (each a :class:`Proc` you can SIGTERM, SIGKILL,
  SIGSTOP), ``status``/``export``/``reshard``..., with waits on the crawl's state. It
  only ever signals processes it started, by pid.
* :func:`check_accounting` (re-exported from :mod:`support.accounting`) checks the
  accounting invariant of docs/delivery.md from the item stream.
* :class:`OwnerSampler` samples the ``owner:<slot>`` keys and the consumer membership
  from a thread, to check that every slot has an owner throughout a crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from invcrawl.frontier.keys import CrawlKeys
from support.accounting import (
    Accounting,
    StreamItem,
    check_accounting,
    dead_entry_keys,
    dedupe_jsonl,
    read_items,
)
from support.cli import REPO, Result, clean_env, run

__all__ = [
    "REPO",
    "Accounting",
    "Harness",
    "OwnerSampler",
    "Proc",
    "Site",
    "StreamItem",
    "Throttle",
    "build_site",
    "check_accounting",
    "consumer_pid",
    "crawl_status",
    "dead_entry_keys",
    "dedupe_jsonl",
    "fully_assigned",
    "read_items",
    "running",
    "wait_for",
]


# -- a synthetic Sphinx site ---------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    root: Path
    keys: frozenset[str]  # every unique inventory key domain:role:name
    pages: int  # HTML pages that exist (fetched, with content)
    tasks: int  # page tasks of the crawl: also generated, missing and offsite pages
    entries: int  # == len(keys)
    by_status: Mapping[str, int]  # the item status each entry should end with

    @staticmethod
    def url_path(page: int) -> str:
        """The URL path of module page ``page`` (for fault policies)."""
        return f"/api/mod{page:04d}.html"


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} &#8212; {project} {version}</title>
</head><body><div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="module-{module}"><h1>{title}<a class="headerlink" href="#module-{module}"
title="Permalink to this heading">&#182;</a></h1>
<p>The <code>{module}</code> module of the synthetic fixture site.</p>
{body}
</section></div></div></div></div></body></html>
"""

_FUNC = """<dl class="py function">
<dt class="sig sig-object py" id="{fq}"><span class="sig-prename descclassname"><span
class="pre">{module}.</span></span><span class="sig-name descname"><span class="pre">{name}</span>
</span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span
class="pre">x</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">y</span>
</span><span class="o"><span class="pre">=</span></span><span class="default_value"><span
class="pre">{j}</span></span></em><span class="sig-paren">)</span><a class="headerlink"
href="#{fq}" title="Permalink to this definition">&#182;</a></dt>
<dd><p>Function {j} of {module}: returns <em>x</em> plus {j}.</p>
<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple"><li><p><strong>x</strong> &#8211; a number</p></li>
<li><p><strong>y</strong> &#8211; another one</p></li></ul></dd></dl>
</dd></dl>
"""


def build_site(
    root: Path,
    pages: int = 40,
    functions: int = 3,
    *,
    project: str = "Demo",
    version: str = "1.0",
    extras: bool = True,
) -> Site:
    """Write a Sphinx-like site into ``root``: ``pages`` module pages ``api/modNNNN.html``
    with ``functions`` documented functions each, and their ``objects.inv``.

    Each page contributes ``functions + 2`` entries (the module, its functions and its
    ``std:doc``). With ``extras`` the inventory also has, like real sites: an index
    page, a label, built-in labels on generated pages (``genindex``, ``py-modindex``,
    ``search``: items of status ``skipped``), an entry whose anchor is not on its page
    (``anchor_missing``), an entry pointing at a page that does not exist
    (``page_not_found``) and one pointing at another host (``offsite``).
    """
    root = Path(root)
    (root / "api").mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    by_status: Counter[str] = Counter()
    for i in range(pages):
        module = f"demo.mod{i:04d}"
        body = "".join(
            _FUNC.format(fq=f"{module}.func{j}", module=module, name=f"func{j}", j=j)
            for j in range(functions)
        )
        html = _PAGE.format(
            title=module, project=project, version=version, module=module, body=body
        )
        (root / "api" / f"mod{i:04d}.html").write_text(html, encoding="utf-8")
        uri = f"api/mod{i:04d}.html"
        rows.append(f"{module} py:module 0 {uri}#module-$ -")
        rows += [f"{module}.func{j} py:function 1 {uri}#$ -" for j in range(functions)]
        rows.append(f"api/mod{i:04d} std:doc -1 {uri} {module} reference")
        by_status["ok"] += functions + 2
    fetched = tasks = pages
    if extras:
        index = "".join(
            f'<li><a href="api/mod{i:04d}.html">demo.mod{i:04d}</a></li>' for i in range(pages)
        )
        (root / "index.html").write_text(
            _PAGE.format(
                title="Demo documentation",
                project=project,
                version=version,
                module="demo",
                body=f'<section id="contents"><h2>Contents</h2><ul>{index}</ul></section>',
            ),
            encoding="utf-8",
        )
        rows += [
            "index std:doc -1 index.html Demo documentation",
            "contents std:label -1 index.html#contents Contents",
            "genindex std:label -1 genindex.html Index",
            "modindex std:label -1 py-modindex.html Module Index",
            "py-modindex std:label -1 py-modindex.html Python Module Index",
            "search std:label -1 search.html Search Page",
            "demo.mod0000.gone py:function 1 api/mod0000.html#$ -",
            "demo.missing py:module 0 api/missing.html#module-$ -",
            "demo.elsewhere std:label -1 https://elsewhere.invalid/x.html#here Elsewhere",
        ]
        by_status.update(ok=2, skipped=4, anchor_missing=1, page_not_found=1, offsite=1)
        fetched += 1
        tasks += 6  # index, genindex, py-modindex, search, missing, offsite
    header = (
        f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    data = ("\n".join(rows) + "\n").encode()
    (root / "objects.inv").write_bytes(header + zlib.compress(data, 9))
    keys = frozenset(_key(row) for row in rows)
    assert len(keys) == len(rows), "build_site wrote a duplicate key"
    return Site(
        root=root,
        keys=keys,
        pages=fetched,
        tasks=tasks,
        entries=len(keys),
        by_status=dict(by_status),
    )


def _key(row: str) -> str:
    name, domain_role = row.split(" ", 2)[:2]
    return f"{domain_role}:{name}"


class Throttle:
    """A fault policy for :func:`support.httpserver.serve`: sleep ``delay`` seconds on every
    matching request (change it at any time, e.g. ``throttle.delay = 0`` to let a crawl
    finish), and answer ``actions[path]`` (a status such as ``"500"``, ``"reset"``,
    ``"hang"``) for the listed paths; ``once`` actions are served a single time."""

    def __init__(
        self,
        delay: float = 0.0,
        actions: Mapping[str, str] | None = None,
        once: Mapping[str, str] | None = None,
        only: Callable[[str], bool] = lambda path: path.endswith(".html"),
    ) -> None:
        self.delay = delay
        self.actions = dict(actions or {})
        self.once = dict(once or {})
        self.only = only
        self._lock = threading.Lock()

    def __call__(self, path: str) -> str | None:
        if not self.only(path):
            return None
        if self.delay > 0:
            time.sleep(self.delay)
        with self._lock:
            if path in self.once:
                return self.once.pop(path)
        return self.actions.get(path)


# -- processes --------------------------------------------------------------------------------


class Proc:
    """One CLI subprocess, its output in a log file. Signals go to this pid only."""

    def __init__(
        self, name: str, argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        self._log_file = open(log, "ab")  # noqa: SIM115 - closed in wait()/close()
        self.popen = subprocess.Popen(
            self.argv, stdout=self._log_file, stderr=subprocess.STDOUT, env=dict(env), cwd=cwd
        )
        self.started = time.monotonic()
        self.signals: list[int] = []  # signals the test sent (a SIGKILLed exit is expected)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    @property
    def killed(self) -> bool:
        return signal.SIGKILL in self.signals

    def signal(self, signum: int) -> None:
        if self.alive:
            self.signals.append(signum)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.signal(signal.SIGTERM)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.signal(signal.SIGCONT)

    def wait(self, timeout: float = 30.0) -> int:
        code = self.popen.wait(timeout)
        self._log_file.close()
        return code

    def output(self) -> str:
        if not self._log_file.closed:
            self._log_file.flush()
        return self.log.read_text(errors="replace")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def close(self) -> None:
        self.resume()
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(10)
        self._log_file.close()

    def __repr__(self) -> str:
        return f"<Proc {self.name} pid={self.pid} rc={self.returncode}>"


def consumer_pid(consumer_id: str) -> int | None:
    """The pid in a consumer id ``<host>-<pid>-<hex>`` (None if it has another shape)."""
    parts = consumer_id.rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def wait_for(
    predicate: Callable[[], Any],
    timeout: float,
    what: str,
    interval: float = 0.05,
    diagnose: Callable[[], str] | None = None,
) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail with ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = f"\n{diagnose()}" if diagnose else ""
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{extra}")
        time.sleep(interval)


def crawl_status(redis_url: str, crawl_id: str, lease_ms: int = 30_000) -> dict[str, Any]:
    """``invcrawl status --json`` computed in-process (fast enough to poll)."""
    from invcrawl.frontier.connection import connect
    from invcrawl.frontier.session import Frontier
    from invcrawl.frontier.status import crawl_status as status

    async def job() -> dict[str, Any]:
        frontier = Frontier(connect(redis_url))
        try:
            return (await status(frontier.crawl(crawl_id), lease_ms)).as_dict()
        finally:
            await frontier.aclose()

    return asyncio.run(job())


class Harness:
    """The CLI against one Redis and one crawl id, as an operator would run it.

    ``options`` are passed to every ``produce``/``consume`` (e.g. ``lease=2``,
    ``concurrency=2``, ``max_tries=2``, ``backoff_base=0.2``, ``robots=False``).
    """

    def __init__(
        self,
        redis_url: str,
        crawl_id: str,
        workdir: Path,
        *,
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        self.redis_url = redis_url
        self.crawl_id = crawl_id
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.env = clean_env(**(env or {}))
        self.options = {"lease": 2.0, "concurrency": 2, "log_level": "INFO", **options}
        self.keys = CrawlKeys(crawl_id)
        self.redis = redis.Redis.from_url(redis_url, decode_responses=True)
        self.procs: list[Proc] = []
        self._count: Counter[str] = Counter()

    # -- running the CLI ----------------------------------------------------------------

    def argv(self, command: str, *args: str, crawl_id: bool = True) -> list[str]:
        argv = [sys.executable, "-m", "invcrawl", command, *args, "--redis", self.redis_url]
        if crawl_id:
            argv += ["--crawl-id", self.crawl_id]
        if command in ("produce", "consume", "crawl"):
            for name, value in self.options.items():
                if name == "robots":
                    if not value:
                        argv.append("--no-robots")
                    continue
                argv += ["--" + name.replace("_", "-"), str(value)]
        return argv

    def cli(
        self,
        command: str,
        *args: str,
        timeout: float = 60,
        crawl_id: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> Result:
        """Run one command to completion."""
        return run(
            self.argv(command, *args, crawl_id=crawl_id),
            cwd=self.workdir,
            timeout=timeout,
            env={**self.env, **(env or {})},
        )

    def produce(self, site: str, slots: int = 8, *args: str) -> Result:
        result = self.cli("produce", site, "--slots", str(slots), *args)
        assert result.code == 0, f"produce failed ({result.code}):\n{result.stderr[-3000:]}"
        return result

    def spawn(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Proc:
        """Start any command as a tracked subprocess (killed at :meth:`close`)."""
        self._count[name] += 1
        label = f"{name}-{self._count[name]}"
        proc = Proc(
            label, argv, self.workdir / f"{label}.log", env or self.env, cwd or self.workdir
        )
        self.procs.append(proc)
        return proc

    def start_consumer(self, *args: str, crawl_id: bool = True) -> Proc:
        """``invcrawl consume`` (automatic slots unless ``args`` pin them)."""
        return self.spawn("consumer", self.argv("consume", *args, crawl_id=crawl_id))

    def consumers(self) -> list[Proc]:
        return [p for p in self.procs if p.name.startswith("consumer") and p.alive]

    # -- reading the crawl --------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return self.redis.hgetall(self.keys.meta)

    def stats(self) -> dict[str, int]:
        raw: dict[str, str] = self.redis.hgetall(self.keys.stats)
        return {k: int(v) for k, v in raw.items()}

    def pages_done(self) -> int:
        return int(self.redis.hget(self.keys.stats, "pages_done") or 0)

    def status(self) -> dict[str, Any]:
        return crawl_status(self.redis_url, self.crawl_id)

    def live_consumer_ids(self, window_ms: int | None = None) -> list[str]:
        """Consumers whose last heartbeat is within ``window_ms`` (default: one lease)."""
        window = window_ms if window_ms is not None else int(self.options["lease"] * 1000)
        seconds, micros = self.redis.time()
        now = int(seconds) * 1000 + int(micros) // 1000
        return sorted(self.redis.zrangebyscore(self.keys.consumers, now - window, "+inf"))

    def consumer_id(self, proc: Proc) -> str | None:
        for cid in self.redis.zrange(self.keys.consumers, 0, -1):
            if consumer_pid(cid) == proc.pid:
                return str(cid)
        return None

    def wait_joined(self, proc: Proc, timeout: float = 30) -> str:
        """Wait until ``proc`` has sent its first heartbeat; returns its consumer id."""
        return str(
            wait_for(
                lambda: self.consumer_id(proc),
                timeout,
                f"{proc.name} to join the crawl",
                diagnose=proc.tail,
            )
        )

    def finished(self) -> bool:
        return self.redis.hget(self.keys.meta, "state") == "finished"

    def wait_finished(self, timeout: float = 60) -> dict[str, Any]:
        def check() -> bool:
            for proc in self.procs:
                code = proc.returncode
                # 0, or 128 + the stop signal the test sent it (README: exit codes)
                stopped = {128 + s for s in proc.signals if s in (signal.SIGINT, signal.SIGTERM)}
                if (
                    proc.name.startswith("consumer")
                    and code not in (None, 0, *stopped)
                    and not proc.killed
                ):
                    raise AssertionError(f"{proc} failed:\n{proc.tail()}")
            return self.finished()

        wait_for(
            check,
            timeout,
            f"crawl {self.crawl_id} to finish",
            interval=0.1,
            diagnose=lambda: json.dumps(self.status(), indent=1)[:3000],
        )
        return self.status()

    def wait_exited(self, procs: Sequence[Proc] | None = None, timeout: float = 30) -> list[int]:
        """Wait for processes (default: every consumer) to exit; returns their codes."""
        procs = list(
            procs if procs is not None else [p for p in self.procs if p.name.startswith("consumer")]
        )
        return [p.wait(max(0.1, timeout)) for p in procs]

    def stop_all(self, timeout: float = 30) -> list[int | None]:
        """SIGTERM every running process, wait, then SIGKILL what is left."""
        for proc in self.procs:
            proc.resume()
            proc.terminate()
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(max(0.1, deadline - time.monotonic()))
        for proc in self.procs:
            proc.close()
        return [p.returncode for p in self.procs]

    def close(self) -> None:
        for proc in self.procs:
            proc.close()
        self.redis.close()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def logs(self) -> str:
        """Every process log's tail, for assertion messages."""
        return "\n".join(f"--- {p.name} (rc={p.returncode})\n{p.tail(15)}" for p in self.procs)


# -- slot ownership ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    t: float  # time.monotonic()
    owners: tuple[str | None, ...]  # owner of slot 0..S-1
    members: tuple[str, ...]  # consumers with a heartbeat within the liveness window
    # Every member's last heartbeat (Redis ms), as the membership records it: counting
    # the distinct values between two samples counts heartbeats, the unit the handover
    # bounds are stated in (a loaded machine stretches seconds, not heartbeats).
    beats: tuple[tuple[str, int], ...] = ()


class OwnerSampler:
    """Samples ``owner:<s>`` of every slot and the live consumers every ``interval``
    seconds from a thread (its own Redis connection). Use as a context manager."""

    def __init__(
        self,
        redis_url: str,
        crawl_id: str,
        slots: int,
        interval: float = 0.02,
        window_ms: int = 2000,
    ) -> None:
        self.client = redis.Redis.from_url(redis_url, decode_responses=True)
        self.keys = CrawlKeys(crawl_id)
        self.slots = slots
        self.interval = interval
        self.window_ms = window_ms
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.errors: list[str] = []

    def _run(self) -> None:
        owner_keys = [self.keys.owner(s) for s in range(self.slots)]
        while not self._stop.is_set():
            try:
                pipe = self.client.pipeline(transaction=True)
                pipe.time()
                pipe.mget(owner_keys)
                pipe.zrange(self.keys.consumers, 0, -1, withscores=True)
                (sec, usec), owners, members = pipe.execute()
                now = int(sec) * 1000 + int(usec) // 1000
                live = tuple(sorted(m for m, hb in members if hb >= now - self.window_ms))
                beats = tuple((m, int(hb)) for m, hb in members)
                self.samples.append(Sample(time.monotonic(), tuple(owners), live, beats))
            except redis.RedisError as exc:  # keep sampling; report at the end
                self.errors.append(str(exc))
            self._stop.wait(self.interval)

    def start(self) -> OwnerSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.client.close()

    def __enter__(self) -> OwnerSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def latest(self) -> Sample | None:
        return self.samples[-1] if self.samples else None

    def window(self, start: float = 0.0, end: float = float("inf")) -> list[Sample]:
        return [s for s in self.samples if start <= s.t <= end]

    def first(self, predicate: Callable[[Sample], bool], after: float = 0.0) -> Sample | None:
        for sample in self.samples:
            if sample.t >= after and predicate(sample):
                return sample
        return None

    def wait(
        self,
        predicate: Callable[[Sample], bool],
        timeout: float,
        what: str,
        after: float | None = None,
    ) -> Sample:
        """Wait until a sample taken after ``after`` (default: now) satisfies
        ``predicate``; returns it."""
        start = time.monotonic() if after is None else after

        def found() -> Sample | None:
            return self.first(predicate, start)

        sample: Sample = wait_for(
            found,
            timeout,
            what,
            interval=self.interval,
            diagnose=lambda: f"last sample: {self.latest()}",
        )
        return sample

    def heartbeats(self, member: str, start: float, end: float) -> int:
        """How many heartbeats ``member`` recorded after the sample at ``start`` up to the
        one at ``end``: the distinct heartbeat times seen, less the one already there."""
        seen = {dict(s.beats).get(member) for s in self.window(start, end)}
        seen.discard(None)
        before = self.first(lambda s: True, start)
        had = dict(before.beats).get(member) if before else None
        return len(seen - {had})

    def slowest_heartbeats(self, members: Sequence[str], start: float, end: float) -> int:
        """The fewest heartbeats any of ``members`` recorded between the two samples: a
        step that needs a beat of each of them takes at least this many rounds."""
        return min(self.heartbeats(m, start, end) for m in members)

    def unowned_spans(
        self, start: float = 0.0, end: float = float("inf")
    ) -> list[tuple[int, float, float, str | None]]:
        """Every span in which a slot had no owner: (slot, last sample owned, next sample
        owned or ``end``, the consumer that owned it next or None)."""
        samples = self.window(start, end)
        spans: list[tuple[int, float, float, str | None]] = []
        for slot in range(self.slots):
            last_owned = samples[0].t if samples else start
            unowned = False
            for sample in samples:
                owner = sample.owners[slot]
                if owner is None:
                    unowned = True
                    continue
                if unowned:
                    spans.append((slot, last_owned, sample.t, owner))
                unowned = False
                last_owned = sample.t
            if unowned and samples:
                spans.append((slot, last_owned, samples[-1].t, None))
        return spans

    def gaps(self, start: float = 0.0, end: float = float("inf")) -> dict[int, float]:
        """Per slot, the longest time it had no owner within [start, end]: from the last
        sample that showed an owner to the next one that did (or to ``end``)."""
        samples = self.window(start, end)
        longest: dict[int, float] = {s: 0.0 for s in range(self.slots)}
        for slot in range(self.slots):
            last_owned = samples[0].t if samples else start
            unowned = False
            for sample in samples:
                if sample.owners[slot] is None:
                    unowned = True
                else:
                    if unowned:
                        longest[slot] = max(longest[slot], sample.t - last_owned)
                    unowned = False
                    last_owned = sample.t
            if unowned and samples:
                longest[slot] = max(longest[slot], samples[-1].t - last_owned)
        return longest


def fully_assigned(members: Sequence[str] | None = None) -> Callable[[Sample], bool]:
    """A predicate: every slot has an owner, owners are live consumers, and (given
    ``members``) the owners are exactly those consumers (as many as there are slots)."""

    def check(sample: Sample) -> bool:
        if any(o is None for o in sample.owners):
            return False
        owners = set(sample.owners)
        if members is None:
            return owners <= set(sample.members)
        want = set(members)
        return owners == want if len(want) <= len(sample.owners) else owners <= want

    return check


@contextlib.contextmanager
def running(harness: Harness) -> Iterator[Harness]:
    """Close every process of ``harness`` however the block ends."""
    try:
        yield harness
    finally:
        harness.close()
