"""Scale: 200 crawls on one Redis and on a 3-master Redis Cluster (issue 17, item 3).

    python -m bench.scale                                  # 200 crawls x 100 pages, ~20 min
    python -m bench.scale --retain all,exported            # both retention settings
    python -m bench.scale --quick                          # smoke run, < 1 min

The CPython 3.11 docs (``--site``) under ``--crawls`` prefixes ``c000/ ... c199/`` of one
private nginx, listening on ``--hosts`` loopback addresses 127.0.0.2 ... (crawl *i* on
host *i mod hosts*), so that the fleet-wide per-host limit (``--host-concurrency``,
default 4) does not cap the run. Each prefix is a directory of symlinks to the site's
top-level entries plus an ``objects.inv`` of its own: the entries of
``--pages-per-crawl`` pages drawn at random (seeded by the crawl's index, so every crawl
gets a different mix of small and big pages; 0 keeps every page). One crawl per prefix:
``invcrawl crawl --sites FILE --consumers 4 --redis URL [--redis-cluster]
[--retain-items R]``, against (a) one fresh ``redis-server`` (``invcrawl.localredis.server.RedisServer``:
AOF, ``appendfsync always``, as the embedded default) and (b) a fresh 3-master Redis
Cluster of the same servers with the same settings (``--cluster-enabled yes``,
``redis-cli --cluster create``). Backends alternate run by run.

Per run: wall time, pages/s, CPU-s per 1,000 pages (every Python process of the run, at
exit, by the ``sitecustomize`` hook of bench/crawl.py, plus every redis-server from
``/proc``, children included: AOF rewrites), CPUs busy (that CPU + nginx over the wall
time, against the machine's CPU count), the CPU used by the rest of the machine
(``other``), and Redis memory: ``used_memory`` minus that of the empty server(s), without
the Lua script cache and client and AOF buffers (not crawl state: ``bench/memory.py``), sampled
every ``--sample`` seconds. "mid" is the first sample with half the entries committed, over
the items committed by then; "peak" is the largest sample over every item of the run;
"after" is after ``invcrawl crawl`` exited (every item exported), over every item: what the
run's keys hold (``Backend.key_memory``). For
the cluster, the same per shard. Figures, not asserts; results in docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.crc import key_slot

from bench.harness import (
    CLK_TCK,
    REPO,
    Bench,
    Proc,
    default_redis_server,
    machine_busy,
    nginx_pids,
    proc_cpu,
    proc_hwm,
    read_hooks,
    say,
    wait_for_idle,
)
from bench.memory import used_memory
from bench.nginx import serve
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer, free_port

DEFAULT_SITE = Path("/usr/share/doc/python3.11/html")
MIB = 1024 * 1024


# -- the site ---------------------------------------------------------------------------------


@dataclass
class Crawl:
    index: int
    pages: int  # fetched pages, as planned
    entries: int
    url: str = ""

    @property
    def crawl_id(self) -> str:
        return crawl_id_for(self.url)


def build_site(src: Path, root: Path, crawls: int, pages_per_crawl: int) -> list[Crawl]:
    """``root/c<i>/``: symlinks to every top-level entry of ``src`` and an
    ``objects.inv`` with the entries of ``pages_per_crawl`` random pages (seed i)."""
    inventory = parse_inventory((src / "objects.inv").read_bytes())
    by_page: dict[str, list[Any]] = defaultdict(list)
    for e in inventory.entries:
        if "://" not in e.uri:
            by_page[e.uri.split("#", 1)[0]].append(e)
    pages = sorted(by_page)
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {inventory.project or 'bench'}\n"
        f"# Version: {inventory.version or ''}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    tops = [p for p in src.iterdir() if p.name != "objects.inv"]
    out = []
    for i in range(crawls):
        site = root / f"c{i:03d}"
        site.mkdir(parents=True)
        for top in tops:
            (site / top.name).symlink_to(top.resolve(), target_is_directory=top.is_dir())
        n = pages_per_crawl if 0 < pages_per_crawl < len(pages) else len(pages)
        chosen = sorted(random.Random(i).sample(pages, n))
        lines = []
        for page in chosen:
            for e in by_page[page]:
                disp = "-" if e.dispname == e.name else e.dispname
                lines.append(f"{e.name} {e.domain}:{e.role} {e.priority} {e.uri} {disp}")
        data = header + zlib.compress(("\n".join(lines) + "\n").encode(), 6)
        (site / "objects.inv").write_bytes(data)
        plan = plan_crawl(parse_inventory(data), f"http://bench.invalid/c{i:03d}/objects.inv")
        out.append(Crawl(i, plan.fetch_pages, plan.entries))
    return out


# -- Redis backends ---------------------------------------------------------------------------


def bus_safe_port() -> int:
    """A free port whose cluster bus port (+10000) is valid and free too."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        with contextlib.suppress(OSError), __import__("socket").socket() as s:
            s.bind(("127.0.0.1", port + 10000))
            return port


class Backend:
    """One redis-server (``one``) or a 3-master cluster (``cluster``) of
    ``RedisServer``s with the embedded default's settings (AOF, fsync always)."""

    def __init__(self, kind: str, root: Path, binary: str, masters: int = 3) -> None:
        self.kind = kind
        self.binary = binary
        if kind == "one":
            self.servers = [RedisServer(root / "redis", binary=binary)]
        else:
            self.servers = []
            for n in range(masters):
                extra = [
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "5000",
                ]  # fmt: skip
                self.servers.append(
                    RedisServer(root / f"node{n}", port=bus_safe_port(), binary=binary, extra=extra)
                )
        self.base: list[int] = []  # used_memory of each empty server

    @property
    def url(self) -> str:
        return self.servers[0].url

    @property
    def flags(self) -> list[str]:
        return ["--redis", self.url] + (["--redis-cluster"] if self.kind == "cluster" else [])

    def clients(self) -> list[redis.Redis]:
        return [redis.Redis(port=s.port, decode_responses=True) for s in self.servers]

    def start(self) -> None:
        for s in self.servers:
            s.start()
        if self.kind == "cluster":
            cli = shutil.which("redis-cli", path="/usr/bin") or shutil.which("redis-cli")
            subprocess.run(
                [cli or "redis-cli", "--cluster", "create",
                 *(f"127.0.0.1:{s.port}" for s in self.servers),
                 "--cluster-replicas", "0", "--cluster-yes"],
                check=True, capture_output=True, timeout=60,
            )  # fmt: skip
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with contextlib.suppress(redis.RedisError):
                    infos = [c.execute_command("CLUSTER", "INFO") for c in self.clients()]
                    if all("cluster_state:ok" in str(i) for i in infos):
                        break
                time.sleep(0.1)
            else:
                raise SystemExit("the cluster did not reach cluster_state:ok")
        self.base = [used_memory(c) for c in self.clients()]

    def node_of(self, crawl_id: str) -> int:
        """Index of the server holding the crawl's keys."""
        if self.kind == "one":
            return 0
        slot = key_slot(f"invcrawl:{{{crawl_id}}}:stats".encode())
        ports = {s.port: i for i, s in enumerate(self.servers)}
        for start, end, master, *_ in self.clients()[0].execute_command("CLUSTER", "SLOTS"):
            if int(start) <= slot <= int(end):
                return ports[int(master[1])]
        raise LookupError(slot)

    def key_memory(self) -> list[int]:
        """What the run's keys hold on each server: the drop of ``used_memory`` when they
        are all deleted (the run is over). After a busy run Redis keeps about 1 MB of its
        own allocations whatever its keys hold (seen with every key deleted), which is not
        state of any item; the difference from the empty server would count it."""
        out = []
        for client in self.clients():
            before = used_memory(client)
            client.flushall()
            out.append(before - used_memory(client))
            client.close()
        return out

    def cpu(self, children_only: bool = False) -> list[float]:
        """utime + stime of each server and of its reaped children (AOF rewrites), or of
        the children only."""
        out = []
        for s in self.servers:
            pid = s.process.pid if s.process else 0
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                first = 13 if children_only else 11
                out.append(sum(int(f) for f in fields[first:15]) / CLK_TCK)
            except OSError:
                out.append(0.0)
        return out

    def stop(self) -> None:
        for s in self.servers:
            with contextlib.suppress(Exception):
                s.stop()


# -- memory sampling --------------------------------------------------------------------------


class Sampler(threading.Thread):
    """Every ``every`` seconds: ``used_memory`` of each server and the items committed
    (``items_new`` + ``items_updated`` of every crawl's stats) on each."""

    def __init__(self, backend: Backend, crawls: list[Crawl], every: float) -> None:
        super().__init__(daemon=True)
        self.backend = backend
        self.every = every
        self.nodes = {c.crawl_id: backend.node_of(c.crawl_id) for c in crawls}
        self.samples: list[tuple[float, list[int], list[int]]] = []  # t, used, items per node
        self.stop_event = threading.Event()

    def sample(self) -> tuple[float, list[int], list[int]]:
        clients = self.backend.clients()
        used = [used_memory(c) for c in clients]
        items = [0] * len(clients)
        for n, client in enumerate(clients):
            ids = [cid for cid, node in self.nodes.items() if node == n]
            pipe = client.pipeline(transaction=False)
            for cid in ids:
                pipe.hmget(f"invcrawl:{{{cid}}}:stats", "items_new", "items_updated")
            for new, updated in pipe.execute():
                items[n] += int(new or 0) + int(updated or 0)
        for c in clients:
            c.close()
        return time.time(), used, items

    def run(self) -> None:
        while not self.stop_event.wait(self.every):
            with contextlib.suppress(redis.RedisError, OSError):
                self.samples.append(self.sample())


# -- one run ----------------------------------------------------------------------------------


@dataclass
class Result:
    backend: str
    retain: str
    consumers: int
    wall: float = 0.0
    pages: int = 0  # pages done (Redis stats)
    items: int = 0  # items committed
    written: int = 0  # lines in the output files
    dead: int = 0
    code: int = 0
    cpu: float = 0.0  # Python processes + redis-servers
    nginx_cpu: float = 0.0
    other_cpu: float = 0.0
    harness_cpu: float = 0.0  # this process (the memory sampler thread)
    tree_cpu: float = 0.0  # os.wait4 of `invcrawl crawl`: itself + reaped descendants
    procs: list[Proc] = field(default_factory=list)
    redis_cpu: list[float] = field(default_factory=list)  # per server
    rewrite_cpu: list[float] = field(default_factory=list)  # its AOF rewrite children
    redis_hwm: list[int] = field(default_factory=list)
    base: list[int] = field(default_factory=list)
    peak: list[int] = field(default_factory=list)  # per server, above base
    after: list[int] = field(default_factory=list)
    node_items: list[int] = field(default_factory=list)
    node_crawls: list[int] = field(default_factory=list)
    mid: tuple[int, int] = (0, 0)  # (bytes above base, items) at half the entries
    peak_total: int = 0
    commands: dict[str, list[int]] = field(default_factory=dict)  # name -> [calls, usec]

    @property
    def label(self) -> str:
        name = "one redis" if self.backend == "one" else "cluster (3)"
        return f"{name}, {self.consumers}c, {self.retain}"

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall if self.wall else 0.0

    @property
    def cpu_per_1000(self) -> float:
        return self.cpu / max(self.pages, 1) * 1000

    @property
    def busy(self) -> float:
        return (self.cpu + self.nginx_cpu) / self.wall if self.wall else 0.0

    @property
    def noisy(self) -> bool:
        return self.other_cpu > 0.25 * self.wall


def supports_retain() -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "invcrawl", "crawl", "--help"],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    return "--retain-items" in out.stdout


def run_one(
    bench: Bench, backend_kind: str, retain: str, consumers: int, *, crawls: list[Crawl], args: Any
) -> Result:
    label = f"{backend_kind}-{retain}-{consumers}c-{len(list(bench.workdir.glob('run-*')))}"
    run_dir = bench.workdir / f"run-{label}"
    (run_dir / "rusage").mkdir(parents=True)
    sites = run_dir / "sites.txt"
    sites.write_text("".join(c.url + "\n" for c in crawls))
    backend = Backend(backend_kind, run_dir, args.redis_server)
    result = Result(backend_kind, retain, consumers)
    argv = [
        sys.executable, "-m", "invcrawl", "crawl", "--sites", str(sites),
        *backend.flags, "--consumers", str(consumers),
        "--host-concurrency", str(args.host_concurrency),
        "--progress", "none", "--data-dir", str(run_dir / "data"),
        "--out-dir", str(run_dir / "out"),
    ]  # fmt: skip
    if args.retain_supported:
        argv += ["--retain-items", retain]
    if args.wait_idle > 0:
        waited = wait_for_idle(args.wait_idle)
        if waited < 0:
            say(f"  note: the machine stayed busy for {-waited:.0f} s; running anyway")
    backend.start()
    try:
        sampler = Sampler(backend, crawls, args.sample)
        nginx = nginx_pids()
        nginx0 = sum(proc_cpu(p) for p in nginx)
        redis0 = backend.cpu()
        rewrite0 = backend.cpu(children_only=True)
        busy0 = machine_busy()
        own0 = time.process_time()
        sampler.start()
        code, wall, tree_cpu = bench.run_process(argv, run_dir, args.timeout)
        busy = machine_busy() - busy0
        sampler.stop_event.set()
        sampler.join()
        result.harness_cpu = time.process_time() - own0
        result.code, result.wall = code, wall
        result.nginx_cpu = sum(proc_cpu(p) for p in nginx) - nginx0
        result.redis_cpu = [b - a for a, b in zip(redis0, backend.cpu(), strict=True)]
        result.rewrite_cpu = [
            b - a for a, b in zip(rewrite0, backend.cpu(children_only=True), strict=True)
        ]
        result.redis_hwm = [proc_hwm(s.process.pid) if s.process else 0 for s in backend.servers]
        result.procs = read_hooks(run_dir / "rusage")
        result.tree_cpu = tree_cpu
        python_cpu = max(tree_cpu, sum(p.cpu for p in result.procs))
        result.cpu = python_cpu + sum(result.redis_cpu)
        result.other_cpu = max(0.0, busy - result.cpu - result.nginx_cpu - result.harness_cpu)
        # after: the crawl command has exported every item and exited
        final = sampler.sample()
        result.base = backend.base
        result.node_items = final[2]
        result.items = sum(final[2])
        result.node_crawls = [
            sum(1 for n in sampler.nodes.values() if n == i) for i in range(len(backend.servers))
        ]
        samples = [*sampler.samples, final]
        result.peak = [
            max(s[1][i] - backend.base[i] for s in samples) for i in range(len(backend.servers))
        ]
        result.peak_total = max(sum(s[1]) - sum(backend.base) for s in samples)
        half = sum(c.entries for c in crawls) / 2
        mid = next((s for s in samples if sum(s[2]) >= half), final)
        result.mid = (sum(mid[1]) - sum(backend.base), sum(mid[2]))
        pages = dead = 0
        for n, client in enumerate(backend.clients()):
            ids = [cid for cid, node in sampler.nodes.items() if node == n]
            pipe = client.pipeline(transaction=False)
            for cid in ids:
                pipe.hmget(f"invcrawl:{{{cid}}}:stats", "pages_done", "dead")
            for done, died in pipe.execute():
                pages += int(done or 0)
                dead += int(died or 0)
            client.close()
        result.pages, result.dead = pages, dead
        for client in backend.clients():
            for name, st in client.info("commandstats").items():
                acc = result.commands.setdefault(name.removeprefix("cmdstat_"), [0, 0])
                acc[0] += int(st["calls"])
                acc[1] += int(st["usec"])
            client.close()
        result.after = backend.key_memory()  # last: it deletes the run's keys
    finally:
        backend.stop()
    for out in (run_dir / "out").glob("*.jsonl"):
        with open(out, "rb") as f:
            result.written += sum(
                chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")
            )
    if code != 0:
        say(f"  warning: {result.label} exited with {code}:")
        say((run_dir / "stderr.log").read_text(errors="replace")[-1500:])
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    return result


# -- rendering --------------------------------------------------------------------------------


def per_item(size: int, items: int) -> str:
    return f"{size / items:.0f}" if items else "-"


def render(results: list[Result], crawls: list[Crawl], args: Any) -> str:
    pages = sum(c.pages for c in crawls)
    entries = sum(c.entries for c in crawls)
    cpus = os.cpu_count() or 1
    sample = f"{args.pages_per_crawl} random pages each" if args.pages_per_crawl else "all pages"
    lines = [
        f"Scale: {len(crawls)} crawls of {args.site} ({sample}): {pages} pages, {entries} "
        f"entries; nginx on {args.hosts} loopback hosts; --host-concurrency "
        f"{args.host_concurrency}; {cpus} CPUs",
        "",
        f"{'run':<26} {'wall s':>7} {'pages/s':>8} {'CPU-s/1k':>8} {'CPUs':>5} {'other':>6} "
        f"{'items':>7} {'written':>7} {'dead':>4} {'peak MiB':>8} "
        f"{'B/item: mid':>11} {'peak':>6} {'after':>6}",
    ]
    for r in results:
        lines.append(
            f"{r.label:<26} {r.wall:>7.1f} {r.pages_per_s:>8.1f} {r.cpu_per_1000:>8.2f} "
            f"{r.busy:>5.2f} {r.other_cpu:>6.1f} {r.items:>7} {r.written:>7} {r.dead:>4} "
            f"{r.peak_total / MIB:>8.0f} {per_item(*r.mid):>11} "
            f"{per_item(r.peak_total, r.items):>6} {per_item(sum(r.after), r.items):>6}"
            + ("  (noisy)" if r.noisy else "")
            + (f"  exit {r.code}" if r.code else "")
        )
    lines += [
        "  CPUs = (CPU-s of the run + nginx) / wall, of the machine's "
        f"{cpus}; other = CPU-s of processes outside the run (noisy: > 0.25 CPU)",
        "  B/item = Redis used_memory above the empty server(s) per item committed: mid (half "
        "the entries in), peak (the largest sample, over all items), after (crawl exited: what "
        "its keys hold, the drop of used_memory when they are deleted)",
        "",
        "CPU-s per process (processes of a role summed; redis per server)",
    ]
    for r in results:
        roles: dict[str, float] = defaultdict(float)
        for proc in r.procs:
            roles[proc.role] += proc.cpu
        parts = [f"{k} {v:.1f}" for k, v in sorted(roles.items())]
        parts += [
            f"redis{i + 1 if len(r.redis_cpu) > 1 else ''} {c:.1f}"
            for i, c in enumerate(r.redis_cpu)
        ]
        parts.append(
            f"(AOF rewrites {sum(r.rewrite_cpu):.1f}), nginx {r.nginx_cpu:.1f}, "
            f"harness {r.harness_cpu:.1f}"
        )
        top = sorted((p.cpu for p in r.procs if p.role == "consumer"), reverse=True)
        lines.append(
            f"  {r.label:<26} " + ", ".join(parts)
            + (f"; consumers {' / '.join(f'{c:.1f}' for c in top)}" if top else "")
        )  # fmt: skip
    lines += ["", "Redis commands per page (calls; server time in us per page), the 5 costliest"]
    for r in results:
        top = sorted(r.commands.items(), key=lambda kv: -kv[1][1])[:5]
        calls = sum(c for c, _ in r.commands.values())
        lines.append(
            f"  {r.label:<26} all {calls / max(r.pages, 1):.0f}; "
            + ", ".join(
                f"{name} {c / max(r.pages, 1):.1f} ({us / max(r.pages, 1):.0f} us)"
                for name, (c, us) in top
            )
        )
    clustered = [r for r in results if r.backend == "cluster"]
    if clustered:
        lines += ["", "Redis memory per shard (MiB above the empty node; B per item after)"]
        for r in clustered:
            lines.append(
                f"  {r.label:<26} "
                + "; ".join(
                    f"shard {i + 1}: {r.node_crawls[i]} crawls, {r.node_items[i]} items, peak "
                    f"{r.peak[i] / MIB:.0f}, after {r.after[i] / MIB:.0f} "
                    f"({per_item(r.after[i], r.node_items[i])} B/item), CPU {r.redis_cpu[i]:.1f}"
                    for i in range(len(r.peak))
                )
            )
    lines += ["", "targets"]
    for retain in dict.fromkeys(r.retain for r in results):
        for n in dict.fromkeys(r.consumers for r in results):
            ones = [
                r.pages_per_s
                for r in results
                if (r.backend, r.retain, r.consumers) == ("one", retain, n)
            ]
            clus = [
                r.pages_per_s
                for r in results
                if (r.backend, r.retain, r.consumers) == ("cluster", retain, n)
            ]
            if ones and clus:
                ratio = (sum(clus) / len(clus)) / (sum(ones) / len(ones))
                pairs = ", ".join(f"{c / o:.2f}" for o, c in zip(ones, clus, strict=False))
                lines.append(
                    f"  cluster / one redis pages/s, {n}c, {retain}: {ratio:.2f} (target >= 0.90)"
                    + (f"; run by run {pairs}" if len(ones) > 1 else "")
                )
        after = [sum(r.after) / r.items for r in results if r.retain == retain and r.items]
        if after:
            target = "<= 2048" if retain == "all" else "<= 100"
            lines.append(
                f"  Redis B/item after, {retain}: {min(after):.0f}-{max(after):.0f} (target {target})"
            )
    by_n: dict[int, list[float]] = defaultdict(list)
    for r in results:
        if r.backend == "one":
            by_n[r.consumers].append(r.pages_per_s)
    if len(by_n) > 1:
        lo, hi = min(by_n), max(by_n)
        speed = (sum(by_n[hi]) / len(by_n[hi])) / (sum(by_n[lo]) / len(by_n[lo]))
        lines.append(
            f"  one redis, {hi}c / {lo}c pages/s: {speed:.2f} (the machine has {cpus} CPUs)"
        )
    return "\n".join(lines)


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE)
    parser.add_argument("--crawls", type=int, default=None, help="default 200 (quick: 20)")
    parser.add_argument(
        "--pages-per-crawl", type=int, default=None,
        help="random pages of the inventory per crawl, 0 = all (default 100; quick: 4)",
    )  # fmt: skip
    parser.add_argument("--hosts", type=int, default=None, help="loopback hosts (default 16)")
    parser.add_argument("--consumers", default="4", help="consumer counts, e.g. 1,4 (default 4)")
    parser.add_argument("--backends", default="one,cluster")
    parser.add_argument("--retain", default="all", help="retention settings: all,exported")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration")
    parser.add_argument("--host-concurrency", type=int, default=4)
    parser.add_argument("--sample", type=float, default=None, help="memory sampling period, s")
    parser.add_argument("--wait-idle", type=float, default=None, help="default 60; quick 0")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--redis-server", default=None)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the run directories")
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 crawls x 4 pages")
    args = parser.parse_args(argv)
    defaults = (20, 4, 4, 0.5, 0.0) if args.quick else (200, 100, 16, 2.0, 60.0)
    for name, value in zip(
        ("crawls", "pages_per_crawl", "hosts", "sample", "wait_idle"), defaults, strict=True
    ):
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.redis_server = args.redis_server or default_redis_server()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    site = args.site.resolve()
    if not (site / "objects.inv").is_file():
        raise SystemExit(f"{site}/objects.inv not found: --site is a built Sphinx HTML directory")
    retains = [r.strip() for r in args.retain.split(",") if r.strip()]
    args.retain_supported = supports_retain()
    if not args.retain_supported:
        if "exported" in retains:
            say("note: this invcrawl has no --retain-items: only 'all' (its behaviour) is run")
        retains = ["all"]
    workdir = Path(tempfile.mkdtemp(prefix="invcrawl-scale-"))
    workdir.chmod(0o755)  # nginx workers read the site from here
    hosts = tuple(f"127.0.0.{2 + i}" for i in range(args.hosts))
    say(f"building {args.crawls} sites of {args.pages_per_crawl or 'all'} pages ...")
    crawls = build_site(site, workdir / "site", args.crawls, args.pages_per_crawl)
    bench_args = argparse.Namespace(
        redis_server=args.redis_server, concurrency=8, wait_idle=0.0,
        timeout=args.timeout, keep=args.keep,
    )  # fmt: skip
    bench = Bench(bench_args, workdir)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    counts = [int(n) for n in args.consumers.split(",")]
    results: list[Result] = []
    try:
        with serve(workdir / "site", hosts) as url:
            port = url.rsplit(":", 1)[1].strip("/")
            for c in crawls:
                c.url = f"http://{hosts[c.index % len(hosts)]}:{port}/c{c.index:03d}/"
            say(
                f"{len(crawls)} crawls, {sum(c.pages for c in crawls)} pages, "
                f"{sum(c.entries for c in crawls)} entries, on {len(hosts)} hosts"
            )
            turn = 0
            for retain in retains:
                for n in counts:
                    for _ in range(args.repeat):
                        # alternate which backend goes first
                        order = backends if turn % 2 == 0 else backends[::-1]
                        turn += 1
                        for kind in order:
                            say(f"{kind}, {n} consumers, --retain-items {retain} ...")
                            r = run_one(bench, kind, retain, n, crawls=crawls, args=args)
                            say(
                                f"  {r.wall:.1f} s, {r.pages_per_s:.1f} pages/s, "
                                f"{r.cpu_per_1000:.2f} CPU-s/1k pages, {r.items} items, "
                                f"after {per_item(sum(r.after), r.items)} B/item, "
                                f"other {r.other_cpu:.1f} CPU-s"
                            )
                            results.append(r)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(render(results, crawls, args))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "crawls": [(c.url, c.pages, c.entries) for c in crawls],
                    "results": [
                        {**{k: v for k, v in r.__dict__.items() if k != "procs"},
                         "procs": [p.__dict__ for p in r.procs],
                         "pages_per_s": r.pages_per_s, "cpu_per_1000": r.cpu_per_1000}
                        for r in results
                    ],
                },
                indent=2,
            )
        )  # fmt: skip
    return 0 if all(r.code == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
