"""Fault harness: real crawls of a site over loopback HTTP while consumers are SIGKILLed,
paused and poisoned, Redis is SIGKILLed and restarted from its AOF, and the HTTP server
fails. After each run it reads the whole item stream and counts what matters:

* ``duplicates``: stream entries whose (key, checksum) pair was already in the stream;
* ``lost``: inventory keys with no item, other than entries of dead-lettered pages.

Two broken control variants of the consumer (tests/support/chaos_consumer.py) run under the same
chaos and must be *caught* (lost > 0 or duplicates > 0): proof the harness can fail.

The harness is test support (the ``faults`` test suite runs every scenario);
``bench/faults.py`` runs it from the command line and prints the table.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from common.inventory import parse_inventory
from common.plan import plan_crawl
from frontier.keys import CrawlKeys
from frontier.server import RedisServer
from support.accounting import check_accounting
from support.chaos_consumer import CRASH_MARK
from support.httpserver import StaticServer, flaky

CRAWL = "faults"


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    control: str = "none"  # none | ack-first | split (broken variants that must be caught)
    kill_consumers: bool = False
    redis_kills: int = 0
    redis_down: float = 0.0  # seconds Redis stays down at each kill (default 0.3-1 s)
    sigstop: bool = False
    sigterm: bool = False
    poison: bool = False
    flaky: float = 0.0
    crash_all: bool = False
    consumers: int = 2
    delay_ms: int = 0  # every page is served after this pause (keeps leases busy)
    max_tries: int = 5


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "kill-consumers",
            "consumers SIGKILLed every 0.2-1 s and respawned",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
            # A busy consumer killed every 0.6 s on average gives healthy pages several
            # deliveries; the limit is raised so that this run is about loss and
            # duplicates, not about the DLQ (the poison run tests the limit).
            max_tries=10,
        ),
        Scenario(
            "kill-redis",
            "redis-server SIGKILLed 3 times mid-crawl, restarted from AOF",
            redis_kills=3,
            delay_ms=5,
        ),
        Scenario(
            "redis-outage",
            "redis-server down for 3 leases mid-crawl: consumers wait, expired leases fenced",
            redis_kills=1,
            redis_down=6.0,
            delay_ms=40,
        ),
        Scenario(
            "sigstop",
            "a consumer SIGSTOPped past its lease, then SIGCONTed",
            sigstop=True,
            # Slow enough that the other consumer cannot finish the crawl during the
            # 2.5-lease pause (4 requests in flight per host: ~11 s for 151 pages); a
            # crawl complete before the paused consumer wakes leaves nothing to fence.
            delay_ms=300,
        ),
        Scenario(
            "sigterm",
            "a busy consumer SIGTERMed: it must finish or release its pages and exit 143",
            sigterm=True,
            delay_ms=60,
        ),
        Scenario("poison", "a page that kills its consumer on every delivery", poison=True),
        Scenario(
            "flaky-http",
            "HTTP 500s, resets and hangs on 15% of page requests",
            flaky=0.15,
            max_tries=10,
        ),
        Scenario(
            "crash-all",
            "all consumers and Redis SIGKILLed at once, then restarted",
            crash_all=True,
            delay_ms=5,
        ),
        Scenario(
            "control-ack-first",
            "BROKEN: acknowledge before work, under consumer kills",
            control="ack-first",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
        ),
        Scenario(
            "control-split",
            "BROKEN: items and ack in separate calls, under kills",
            control="split",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
            max_tries=20,  # the page crashed in the window is redelivered, not dead-lettered
        ),
    )
}


@dataclass
class Report:
    scenario: str
    pages: int = 0
    entries: int = 0
    consumers_killed: int = 0
    redis_restarts: int = 0
    executions: int = 0
    fenced: int = 0
    items_expected: int = 0
    items_written: int = 0
    duplicates: int = 0
    lost: int = 0
    dead_pages: int = 0
    failed_items: int = 0  # items of dead pages' entries (status failed)
    unexpected_exits: int = 0
    seconds: float = 0.0
    completed: bool = False
    accounting_ok: bool = False
    control: bool = False
    verdict: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict in ("ok", "caught")


@dataclass
class Site:
    root: Path
    path: str = ""  # URL path of the docs root under the server

    def url(self, server: StaticServer) -> str:
        return server.url + self.path


class Run:
    """One scenario: private Redis, private HTTP server, producer, chaos, verification."""

    def __init__(
        self,
        scenario: Scenario,
        site: Site,
        workdir: Path,
        *,
        lease: float = 2.0,
        timeout: float = 300.0,
        seed: int = 1,
    ) -> None:
        self.s = scenario
        self.site = site
        self.workdir = workdir
        self.lease = lease
        self.timeout = timeout
        self.rng = random.Random(seed)
        self.report = Report(scenario.name, control=scenario.control != "none")
        self.consumers: dict[int, subprocess.Popen[bytes]] = {}
        self.spawned = 0
        self.keys = CrawlKeys(CRAWL)
        self.poison_suffix: str | None = None
        self.sigterm_clean = False
        self.signalled: set[int] = set()  # pids the harness killed or stopped itself

    # -- processes ------------------------------------------------------------------------

    def consumer_argv(self) -> list[str]:
        mode = self.s.control
        if self.s.poison:
            mode = f"poison:{self.poison_suffix}"
        return [
            sys.executable,
            str(Path(__file__).with_name("chaos_consumer.py")),
            mode,
            "consume",
            "--redis",
            self.redis.url,
            "--crawl-id",
            CRAWL,
            "--burst",
            "--lease",
            str(self.lease),
            "--task-deadline",
            "60",
            "--backoff-base",
            "0.2",
            "--backoff-max",
            "1.0",
            "--download-timeout",
            "2",
            "--concurrency",
            "4",
            "--log-level",
            "INFO",
        ]

    def spawn(self, index: int) -> None:
        logfile = open(self.workdir / f"consumer-{index}-{self.spawned}.log", "wb")  # noqa: SIM115
        self.consumers[index] = subprocess.Popen(
            self.consumer_argv(), stdout=logfile, stderr=subprocess.STDOUT, cwd=self.workdir
        )
        logfile.close()
        self.spawned += 1

    def kill(self, index: int, sig: int = signal.SIGKILL) -> None:
        proc = self.consumers[index]
        if proc.poll() is None:
            proc.send_signal(sig)
            self.signalled.add(proc.pid)
            if sig == signal.SIGKILL:
                proc.wait()
                self.report.consumers_killed += 1

    def restart_redis(self, pause: float) -> None:
        self.redis.kill()
        time.sleep(pause)
        self.redis.start()
        self.report.redis_restarts += 1

    # -- progress ---------------------------------------------------------------------------

    def progress(self) -> tuple[float, str]:
        try:
            meta = self.r.hgetall(self.keys.meta)
            done = int(self.r.hget(self.keys.stats, "pages_done") or 0)
            dead = int(self.r.zcard(self.keys.dlq))
        except redis.RedisError:
            return -1.0, "unknown"
        total = int(meta.get("tasks") or 1)
        return (done + dead) / total, meta.get("state", "unknown")

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> Report:
        started = time.monotonic()
        fault = None
        if self.s.flaky:
            fault = flaky(self.s.flaky, seed=3, actions=("500", "reset", "hang"))
        elif self.s.delay_ms:
            delay = f"delay:{self.s.delay_ms}"

            def fault(path: str) -> str | None:
                return delay if path.endswith(".html") else None

        server = StaticServer(self.site.root, fault, hang_seconds=3.0).start()
        self.redis = RedisServer(self.workdir / "redis", fsync="always")
        self.redis.start()
        self.r = redis.Redis(port=self.redis.port, decode_responses=True, socket_timeout=2)
        try:
            url = self.site.url(server)
            self.expect(url)
            self.produce(url)
            self.chaos_loop()
        finally:
            for proc in self.consumers.values():  # teardown kills are not chaos: not counted
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            with contextlib.suppress(Exception):
                self.verify()
            self.r.close()
            self.redis.stop()
            server.stop()
        self.report.seconds = round(time.monotonic() - started, 1)
        self.judge()
        return self.report

    def expect(self, url: str) -> None:
        inv = parse_inventory((self.site.root / "objects.inv").read_bytes())
        plan = plan_crawl(inv, url + "objects.inv")
        self.plan = plan
        self.expected_keys = {t.entry.key for p in plan.pages for t in p.targets}
        self.report.pages = len(plan.pages)
        self.report.entries = plan.entries
        fetch = [p for p in plan.pages if p.status == "fetch"]
        self.poison_page = fetch[len(fetch) // 3]
        self.poison_suffix = self.poison_page.page_url.rsplit("/", 1)[1]

    def produce(self, url: str) -> None:
        argv = [
            sys.executable,
            "-m",
            "invcrawl",
            "produce",
            url,
            "--redis",
            self.redis.url,
            "--crawl-id",
            CRAWL,
            "--slots",
            "4",
            "--max-tries",
            str(self.s.max_tries),
        ]
        done = subprocess.run(
            argv, check=False, cwd=self.workdir, capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"producer failed: {done.stderr.strip()[-500:]}")

    def chaos_loop(self) -> None:
        for index in range(self.s.consumers):
            self.spawn(index)
        deadline = time.monotonic() + self.timeout
        next_kill = time.monotonic() + self.rng.uniform(0.2, 1.0)
        redis_points = [0.15, 0.4, 0.65][: self.s.redis_kills]
        stopped = crashed = terminated = False
        finished_at: float | None = None
        while time.monotonic() < deadline:
            time.sleep(0.05)
            fraction, state = self.progress()
            if state == "finished":
                finished_at = finished_at or time.monotonic()
                if all(p.poll() is not None for p in self.consumers.values()):
                    self.report.completed = True
                    return
                if time.monotonic() - finished_at > 30:
                    self.report.notes.append("consumers did not exit 30 s after completion")
                    self.report.completed = True
                    return
                continue
            now = time.monotonic()
            if self.s.kill_consumers and now >= next_kill:
                victim = self.pick_victim()
                if victim is not None:
                    self.kill(victim)
                next_kill = now + self.rng.uniform(0.2, 1.0)
            if redis_points and fraction >= redis_points[0]:
                redis_points.pop(0)
                self.restart_redis(self.s.redis_down or self.rng.uniform(0.3, 1.0))
            if self.s.sigstop and not stopped and fraction >= 0.25:
                stopped = self.pause_a_busy_consumer()
            if self.s.sigterm and not terminated and fraction >= 0.25:
                terminated = self.terminate_a_busy_consumer()
            if self.s.crash_all and not crashed and fraction >= 0.4:
                crashed = True
                for index in self.consumers:
                    self.kill(index)
                self.restart_redis(0.5)
            for index, proc in list(self.consumers.items()):
                if proc.poll() is None or state == "finished":
                    continue
                if proc.returncode == 0 and self.progress()[1] == "finished":
                    break  # it saw the completion after our progress read: not a failure
                self.unexpected_exit(proc)
                self.spawn(index)
        self.report.notes.append(f"timed out after {self.timeout:.0f} s")

    def unexpected_exit(self, proc: subprocess.Popen[bytes]) -> None:
        """A consumer that ended on its own before the crawl finished: it crashed, or
        (exit 0) it mistook an error for the end of the crawl. Both are failures, except
        for the self-inflicted SIGKILLs of the poison page and of the controls'
        in-window crashes (tests/support/chaos_consumer.py)."""
        if proc.pid in self.signalled:
            return
        if proc.returncode == -signal.SIGKILL and (self.s.poison or self.report.control):
            return
        self.report.unexpected_exits += 1
        self.report.notes.append(
            f"consumer pid {proc.pid} exited {proc.returncode} before the crawl finished"
        )

    def pick_victim(self) -> int | None:
        """A random consumer among those holding leases (a kill of a process still
        starting up, or idle, tests nothing), else a random live one."""
        live = [i for i, p in self.consumers.items() if p.poll() is None]
        try:
            tokens = self.r.hvals(self.keys.lease)
        except redis.RedisError:
            tokens = []
        busy = [i for i in live if any(f"-{self.consumers[i].pid}-" in t for t in tokens)]
        return self.rng.choice(busy or live) if live else None

    def busy_consumer(self) -> int | None:
        """A live consumer that holds leases (its pid is part of its fencing tokens)."""
        tokens = self.r.hvals(self.keys.lease)
        for index, proc in self.consumers.items():
            if proc.poll() is None and any(f"-{proc.pid}-" in t for t in tokens):
                return index
        return None

    def terminate_a_busy_consumer(self) -> bool:
        """SIGTERM a consumer holding leases; it must exit 143 within a lease or two and
        leave no lease behind (its pages committed or released, not left to expire)."""
        index = self.busy_consumer()
        if index is None:
            return False
        proc = self.consumers[index]
        held = sum(f"-{proc.pid}-" in t for t in self.r.hvals(self.keys.lease))
        self.signalled.add(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=self.lease * 10)
        except subprocess.TimeoutExpired:
            self.report.notes.append("SIGTERMed consumer did not exit")
            return True
        left = sum(f"-{proc.pid}-" in t for t in self.r.hvals(self.keys.lease))
        self.report.notes.append(
            f"SIGTERM: consumer held {held} lease(s), exited {code}, left {left} lease(s)"
        )
        self.sigterm_clean = code == 143 and left == 0  # 128 + SIGTERM, after a clean stop
        return True

    def pause_a_busy_consumer(self) -> bool:
        """SIGSTOP a consumer that holds leases, past its lease; then SIGCONT it."""
        index = self.busy_consumer()
        if index is None:
            return False
        proc = self.consumers[index]
        proc.send_signal(signal.SIGSTOP)
        # It may have settled its last page between the look and the signal: a pause
        # must catch it holding leases (else nothing can be fenced); try again later.
        time.sleep(0.05)
        if not any(f"-{proc.pid}-" in t for t in self.r.hvals(self.keys.lease)):
            proc.send_signal(signal.SIGCONT)
            return False
        fenced = int(self.r.hget(self.keys.stats, "fenced") or 0)
        time.sleep(self.lease * 2.5)
        proc.send_signal(signal.SIGCONT)
        self.report.notes.append(f"paused consumer {index} for {self.lease * 2.5:.1f} s")
        # Its late commits are fenced within moments of waking; if none came (its pages
        # were all committed as the signal landed: seen on a loaded machine), the pause
        # did not exercise fencing: pause again at a later busy moment.
        deadline = time.monotonic() + self.lease * 2
        while time.monotonic() < deadline:
            if int(self.r.hget(self.keys.stats, "fenced") or 0) > fenced:
                return True
            time.sleep(0.05)
        return False

    # -- verification -----------------------------------------------------------------------

    def verify(self) -> None:
        acc = check_accounting(self.r, CRAWL, self.expected_keys)
        stats = self.r.hgetall(self.keys.stats)
        rep = self.report
        rep.items_written = acc.stream_entries
        rep.duplicates = acc.duplicate_entries
        rep.items_expected = len(self.expected_keys)  # dead pages' entries: `failed` items
        rep.failed_items = acc.by_status.get("failed", 0)
        rep.lost = len(acc.missing)
        rep.dead_pages = acc.dead_pages
        rep.executions = int(stats.get("claims", 0))
        rep.fenced = int(stats.get("fenced", 0))
        rep.accounting_ok = acc.ok
        if not acc.ok:
            rep.notes.append("accounting: " + acc.summary())
        dead_ids = self.r.zrange(self.keys.dlq, 0, -1)
        mark = self.workdir / CRASH_MARK
        if rep.control and mark.exists():
            rep.notes.append(
                f"control consumer pid {mark.read_text()} SIGKILLed itself in its broken window"
            )
        if self.s.poison:
            why = json.loads(self.r.hget(self.keys.dlq_why, self.poison_page.task_id) or "{}")
            if dead_ids != [self.poison_page.task_id]:
                rep.notes.append(f"dead pages {dead_ids} != the poison page only")
            elif why.get("tries") != self.s.max_tries:
                rep.notes.append(
                    f"poison page died after {why.get('tries')} deliveries, not {self.s.max_tries}"
                )
            else:
                rep.notes.append(
                    f"poison page dead-lettered after exactly {why['tries']} deliveries"
                )

    def judge(self) -> None:
        rep = self.report
        if rep.control:
            rep.verdict = "caught" if rep.lost or rep.duplicates else "NOT CAUGHT"
            return
        problems = []
        if not rep.completed:
            problems.append("did not complete")
        if rep.lost or rep.duplicates or not rep.accounting_ok:
            problems.append("lost/duplicated items (accounting invariant broken)")
        if rep.unexpected_exits:
            problems.append(f"{rep.unexpected_exits} consumer(s) exited on their own")
        if self.s.sigterm and not self.sigterm_clean:
            problems.append("SIGTERM did not end in a clean exit")
        if self.s.redis_down and rep.fenced < 1:
            problems.append("no commit fenced after the outage")
        if self.s.sigstop and rep.fenced < 1:
            problems.append("no fenced commit")
        if self.s.redis_kills and rep.redis_restarts != self.s.redis_kills:
            problems.append("fewer Redis restarts than planned")
        if self.s.poison and not any("exactly" in n for n in rep.notes):
            problems.append("poison page not dead-lettered as expected")
        if not self.s.poison and rep.dead_pages:
            problems.append(f"{rep.dead_pages} healthy page(s) dead-lettered")
        rep.verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)


def run_scenario(name: str, site: Site, workdir: Path, **kwargs: Any) -> Report:
    workdir.mkdir(parents=True, exist_ok=True)
    return Run(SCENARIOS[name], site, workdir, **kwargs).run()


COLUMNS = (
    "scenario",
    "pages",
    "entries",
    "consumers_killed",
    "redis_restarts",
    "executions",
    "fenced",
    "items_expected",
    "items_written",
    "duplicates",
    "lost",
    "dead_pages",
    "failed_items",
    "seconds",
    "verdict",
)
HEADERS = (
    "scenario",
    "pages",
    "entries",
    "killed",
    "redis",
    "execs",
    "fenced",
    "expected",
    "written",
    "dups",
    "lost",
    "dead",
    "failed",
    "secs",
    "verdict",
)


def table(reports: list[Report]) -> str:
    rows = [HEADERS] + [tuple(str(getattr(r, c)) for c in COLUMNS) for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [
        "  ".join(
            cell.ljust(w) if i in (0, 14) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    for r in reports:
        for note in r.notes:
            lines.append(f"  {r.scenario}: {note}")
    return "\n".join(lines)
