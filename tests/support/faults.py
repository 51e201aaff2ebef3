"""Fault harness: real crawls of a site over loopback HTTP while consumers are SIGKILLed,
paused and poisoned, Redis is SIGKILLed and restarted from its AOF, and the HTTP server
fails. After each run it reads the whole item stream and counts what matters:

* ``duplicates``: stream entries whose (key, checksum) pair was already in the stream;
* ``lost``: inventory keys with no item, other than entries of dead-lettered pages.

Two broken control variants of the consumer (tests/support/chaos_consumer.py) run under the same
chaos and must be *caught* (lost > 0 or duplicates > 0): proof the harness can fail.

A run ends when the crawl completes, or fails when nothing moves (no page settled, no
claim, no fenced commit, no restart) for ``stall`` seconds: bounded by progress, not by
a total time a loaded machine could exceed (claims are bounded too: a page is dead after
``max_tries`` deliveries).

``shipped=True`` runs Redis as compose does: the users of deploy/redis/users.acl.in
(producer and consumers log in as theirs) and ``appendfsync always``; every restart's
log is checked for commands refused while loading the AOF.

The harness is test support (the ``faults`` test suite runs every scenario);
``support/fault_cli.py`` runs it from the command line and prints the table.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.accounting import check_accounting
from support.acl import render_acl, role_url
from support.chaos_consumer import CRASH_MARK
from support.fault_report import COLUMNS, HEADERS, Report, table
from support.fault_scenarios import SCENARIOS, Scenario
from support.fault_signals import ConsumerSignals
from support.httpserver import StaticServer, flaky
from support.redisproc import LoggedRedisServer, system_redis_server

__all__ = ["COLUMNS", "HEADERS", "SCENARIOS", "Report", "Run", "Site", "run_scenario", "table"]

CRAWL = "faults"


@dataclass
class Site:
    root: Path
    path: str = ""  # URL path of the docs root under the server

    def url(self, server: StaticServer) -> str:
        return server.url + self.path


class Run(ConsumerSignals):
    """One scenario: private Redis, private HTTP server, producer, chaos, verification."""

    def __init__(
        self,
        scenario: Scenario,
        site: Site,
        workdir: Path,
        *,
        lease: float = 2.0,
        stall: float = 120.0,
        timeout: float | None = None,  # fault_cli's name for ``stall``
        seed: int = 1,
        shipped: bool = False,
    ) -> None:
        self.s = scenario
        self.site = site
        self.workdir = workdir
        self.lease = lease
        self.stall = timeout if timeout is not None else stall
        self.shipped = shipped
        self.rng = random.Random(seed)
        name = scenario.name + (" (shipped)" if shipped else "")
        self.report = Report(name, control=scenario.control != "none")
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
            self.url("consumer"),
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

    def url(self, role: str) -> str:
        """The Redis URL a role logs in with (shipped: its own user; else no user)."""
        return role_url(self.redis.port, role) if self.shipped else self.redis.url

    def restart_redis(self, pause: float) -> None:
        log = self.redis.logfile
        seen = log.stat().st_size if log.exists() else 0
        self.redis.kill()
        time.sleep(pause)
        # Returns once the AOF is loaded; a loaded machine may take long: a generous bound.
        self.redis.start(timeout=self.stall)
        self.report.redis_restarts += 1
        text = log.read_bytes()
        text = text[seen:] if len(text) >= seen else text  # a new log at each start
        refused = text.count(b"NOPERM") + text.count(b"CRITICAL")
        if refused:
            self.report.refused_on_load += refused
            self.report.notes.append(
                f"restart {self.report.redis_restarts}: {refused} "
                "commands refused while loading the AOF"
            )

    # -- progress ---------------------------------------------------------------------------

    def progress(self) -> tuple[float, str]:
        try:
            meta = self.r.hgetall(self.keys.meta)
            stats = self.r.hgetall(self.keys.stats)
            dead = int(self.r.zcard(self.keys.dlq))
        except redis.RedisError:
            return -1.0, "unknown"
        done = int(stats.get("pages_done") or 0)
        # What moves while a crawl is alive: pages settled, deliveries, fenced commits.
        self.moves = (done, dead, int(stats.get("claims") or 0), int(stats.get("fenced") or 0))
        total = int(meta.get("tasks") or 1)
        return (done + dead) / total, meta.get("state", "unknown")

    def stalled(self) -> bool:
        """True when nothing has moved for ``stall`` seconds (a Redis restart counts as a
        move: an outage the scenario makes is not a stall; a consumer respawned does
        not, as one that crashes at start-up would respawn for ever)."""
        mark = (self.moves, self.report.redis_restarts)
        now = time.monotonic()
        if mark != self.last_mark:
            self.last_mark, self.last_move = mark, now
        return now - self.last_move > self.stall

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
        if self.shipped:
            acl = self.workdir / "users.acl"
            render_acl(acl, inspector=True)  # the harness reads progress as the inspector
            # Debian's redis-server (7.0, as compose's 7.2 re-checks ACLs on AOF load),
            # not a wheel's 6.2 that a venv may put first on PATH.
            self.redis: RedisServer = LoggedRedisServer(
                self.workdir / "redis",
                fsync="always",
                binary=system_redis_server(),
                extra=["--aclfile", str(acl)],
            )
        else:
            self.redis = RedisServer(self.workdir / "redis", fsync="always")
        self.redis.start()
        self.r = redis.Redis.from_url(
            self.url("inspector"), decode_responses=True, socket_timeout=2
        )
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
        self.expected_keys = {t.key for p in plan.pages for t in p.targets}
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
            self.url("producer"),
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
        self.moves: tuple[int, ...] = ()
        self.last_mark: object = None
        self.last_move = time.monotonic()
        # Consumer kills are paced by the crawl's progress, not by the clock: the next
        # one comes once another 2-8% of the pages have settled (at a random point of
        # that span), on a consumer holding leases. A fast machine then cannot finish
        # the crawl between two kills, nor a slow one get kills faster than pages move:
        # every run gets about a dozen kills spread over the whole crawl.
        next_kill = self.rng.uniform(0.0, 0.06)
        redis_points = [0.15, 0.4, 0.65][: self.s.redis_kills]
        stopped = crashed = terminated = False
        finished_at: float | None = None
        while True:
            time.sleep(0.05)
            fraction, state = self.progress()
            if state == "finished":
                finished_at = finished_at or time.monotonic()
                if all(p.poll() is not None for p in self.consumers.values()):
                    self.report.completed = True
                    return
                if time.monotonic() - finished_at > self.stall:
                    self.report.notes.append("consumers did not exit after completion")
                    self.report.completed = True
                    return
                continue
            if self.stalled():
                self.report.notes.append(f"no progress for {self.stall:.0f} s: stuck")
                return
            if self.s.kill_consumers and fraction >= next_kill:
                victim = self.pick_victim()
                if victim is not None:
                    self.kill(victim)
                    next_kill = fraction + self.rng.uniform(0.02, 0.08)
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
            # A kill like the harness's, only placed in the window: counted as one (an
            # ack-first consumer holds no lease, so the harness never picks it).
            rep.consumers_killed += 1
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
        if rep.refused_on_load:
            problems.append(f"{rep.refused_on_load} AOF commands refused while loading")
        if self.s.poison and not any("exactly" in n for n in rep.notes):
            problems.append("poison page not dead-lettered as expected")
        if not self.s.poison and rep.dead_pages:
            problems.append(f"{rep.dead_pages} healthy page(s) dead-lettered")
        rep.verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)


def run_scenario(name: str, site: Site, workdir: Path, **kwargs: Any) -> Report:
    """Run one scenario (``shipped=True``: under the compose Redis configuration)."""
    workdir.mkdir(parents=True, exist_ok=True)
    return Run(SCENARIOS[name], site, workdir, **kwargs).run()
