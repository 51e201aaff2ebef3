"""The fault harness's signals to busy consumers (tests/support/faults.py): a victim
among those holding leases, SIGTERM one and watch it leave cleanly, SIGSTOP one past
its lease and see its late commits fenced."""

from __future__ import annotations

import random
import signal
import subprocess
import time

import redis

from invcrawl.frontier.keys import CrawlKeys
from support.fault_report import Report


class ConsumerSignals:
    """Mixed into :class:`support.faults.Run`, which sets these attributes."""

    consumers: dict[int, subprocess.Popen[bytes]]
    r: redis.Redis
    keys: CrawlKeys
    rng: random.Random
    lease: float
    stall: float
    report: Report
    signalled: set[int]
    sigterm_clean: bool

    def pick_victim(self) -> int | None:
        """A random consumer among those holding leases, else none: a kill of a process
        still starting up, or idle, tests nothing, and on a loaded machine (where a
        consumer takes seconds to start) killing those would stop the crawl for good."""
        live = [i for i, p in self.consumers.items() if p.poll() is None]
        try:
            tokens = self.r.hvals(self.keys.lease)
        except redis.RedisError:
            tokens = []
        busy = [i for i in live if any(f"-{self.consumers[i].pid}-" in t for t in tokens)]
        return self.rng.choice(busy) if busy else None

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
        # It finishes or releases what it holds: wait as long as its leases keep going
        # (a loaded machine is slow, not stuck), up to ``stall`` seconds without change.
        last, since = held, time.monotonic()
        while proc.poll() is None:
            now_held = sum(f"-{proc.pid}-" in t for t in self.r.hvals(self.keys.lease))
            if now_held != last:
                last, since = now_held, time.monotonic()
            elif time.monotonic() - since > self.stall:
                self.report.notes.append("SIGTERMed consumer did not exit")
                return True
            time.sleep(0.05)
        code = proc.returncode
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
