"""Many sites on one frontier (issue "Many sites on one frontier"): 40 real documentation
sites from Debian's doc packages, served by one nginx on 4 loopback hosts (127.0.0.1-4,
the sites split round-robin), crawled by ``invcrawl crawl SITE...`` with 1 and 2
consumers, against (a) a single-process Scrapy spider crawling the same 40 sites one
after another (``bench/baseline_spider.py URL...``) and the scrapy-redis peer
(``bench/scrapy_redis_peer.py``: ``RedisSpider``, its scheduler, dupefilter and item
pipeline; 1 and 2 processes) in the same run, rounds alternated (round r starts at
configuration r), medians.

    python -m bench.fleet                       # 40 sites, 3 rounds of (a), invcrawl 1, 2, peer 1, 2
    python -m bench.fleet --sites 10 --consumers 2 --peer 2 --repeat 1 --quick

Per configuration: wall time, pages/s, CPU-s per 1,000 pages (every Python process of the
run, measured at exit by the hooks of bench/hooks/, plus Redis), the
exactness of the output (items against the planned entries: duplicates, missing), the
load average, the largest number of requests in flight on one host as nginx saw them
(from its access log: each request's end time and duration), and when the 5 smallest
sites finished, as a share of the run (invcrawl). Every Redis is fresh per run, AOF with
``appendfsync always`` (``--fsync``). Figures, not asserts; results in docs/performance.md.

Needs Debian's nginx and the doc packages of ../shared/corpus/debian-doc-packages.txt
(those without an objects.inv are skipped; sphinx-doc and python3.11-doc fill in).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import scrapy_redis_peer as peer
from bench.harness import (
    REPO,
    Bench,
    Proc,
    System,
    default_redis_server,
    expected_items,
    item_identity,
    machine_busy,
    nginx_pids,
    proc_cpu,
    proc_hwm,
    read_hooks,
    say,
)
from bench.nginx import serve
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer

DOC = Path("/usr/share/doc")
# ../shared/corpus beside the checkout or beside any folder above it (a worktree too)
PACKAGES = [folder / "shared" / "corpus" / "debian-doc-packages.txt" for folder in REPO.parents]
FILL_IN = ["sphinx-doc", "python3.11-doc"]  # when a listed package ships no objects.inv
HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4")


@dataclass
class Site:
    package: str
    root: Path  # the directory with objects.inv
    pages: int  # pages to fetch
    entries: int
    url: str = ""
    expected: Counter[tuple[str, str]] = field(default_factory=Counter)  # item identities

    @property
    def crawl_id(self) -> str:
        return crawl_id_for(self.url)


@dataclass
class Result:
    label: str
    consumers: int
    wall: float
    pages: int
    cpu: float
    code: int
    other_cpu: float
    max_in_flight: dict[str, int] = field(default_factory=dict)
    smallest_done: list[float] = field(default_factory=list)  # share of the run
    procs: list[Proc] = field(default_factory=list)
    items: int = 0
    duplicates: int = 0
    missing: int = 0
    load: float = 0.0  # 1-minute load average at the end of the run
    run_dir: Path | None = None

    @property
    def cpu_per_1000(self) -> float:
        return self.cpu / max(self.pages, 1) * 1000


def package_names() -> list[str]:
    for path in PACKAGES:
        if path.exists():
            return [
                ln.strip()
                for ln in path.read_text().splitlines()
                if ln.strip() and not ln.startswith("#")
            ]
    raise SystemExit("no package list: ../shared/corpus/debian-doc-packages.txt")


def find_sites(count: int) -> list[Site]:
    sites = []
    for package in [*package_names(), *FILL_IN]:
        found = sorted((DOC / package).rglob("objects.inv"), key=lambda p: len(p.parts))
        if not found:
            continue
        root = found[0].parent
        inv = parse_inventory(found[0].read_bytes())
        plan = plan_crawl(inv, found[0].resolve().as_uri())
        # identities as served: the URL path under /usr/share/doc (bench/crawl.item_identity)
        served = plan_crawl(inv, f"http://bench.invalid/{root.relative_to(DOC)}/objects.inv")
        sites.append(
            Site(package, root, plan.fetch_pages, plan.entries, "", expected_items(served))
        )
        if len(sites) == count:
            break
    if len(sites) < count:
        say(f"note: {len(sites)} sites with an objects.inv found (asked for {count})")
    return sites


def in_flight_per_host(log: Path, since: float, until: float) -> dict[str, int]:
    """The most requests in flight at once on each host, from nginx's access log."""
    events: dict[str, list[tuple[float, int]]] = defaultdict(list)
    with contextlib.suppress(FileNotFoundError), open(log) as f:
        for line in f:
            end_s, duration, host, _status, _uri = line.split(maxsplit=4)
            # nginx logs both at 1 ms resolution: a request is taken to span the whole
            # millisecond(s) it could have run in, so the peak is an upper bound.
            end = float(end_s)
            start = end - float(duration) - 0.001
            if since <= start <= until:
                events[host] += [(start, 1), (end, -1)]
    peaks = {}
    for host, evs in events.items():
        level = peak = 0
        for _, step in sorted(evs, key=lambda e: (e[0], e[1])):  # ends before starts
            level += step
            peak = max(peak, level)
        peaks[host] = peak
    return peaks


def run_one(
    bench: Bench,
    label: str,
    consumers: int,
    *,
    sites: list[Site],
    log: Path,
    args: Any,
    system: str = "invcrawl",
    rep: int = 0,
) -> Result:
    """One crawl of every site: ``system`` is ``spider`` (consumers ignored), ``invcrawl``
    (``consumers`` consumers) or ``peer`` (``consumers`` scrapy-redis processes)."""
    run_dir = bench.workdir / f"run-{label}-{rep}".replace(" ", "_").replace(",", "")
    (run_dir / "rusage").mkdir(parents=True)
    urls = [s.url for s in sites]
    server = None
    if system == "spider":
        argv = [sys.executable, "-m", "bench.baseline_spider", *urls, "-o", "out.jsonl"]
    elif system == "peer":
        server = RedisServer(run_dir / "redis", binary=args.redis_server, fsync=args.run_fsync)
        server.start()
        argv = peer.argv(
            urls, server.url, run_dir / "out.jsonl", processes=consumers, concurrency=8
        )
    else:
        server = RedisServer(run_dir / "redis", binary=args.redis_server, fsync=args.run_fsync)
        server.start()
        argv = [
            sys.executable, "-m", "invcrawl", "crawl", *urls,
            "--consumers", str(consumers), "--redis", server.url,
            "--host-concurrency", str(args.host_concurrency),
            "--progress", "none", "--data-dir", str(run_dir / "data"),
            "--out-dir", str(run_dir / "out"),
        ]  # fmt: skip
    try:
        nginx0 = sum(proc_cpu(p) for p in nginx_pids())
        busy0 = machine_busy()
        redis0 = proc_cpu(server.process.pid) if server and server.process else 0.0
        started = time.time()
        code, wall, tree_cpu = bench.run_process(argv, run_dir, args.timeout)
        ended = time.time()
        procs = read_hooks(run_dir / "rusage")
        cpu = max(tree_cpu, sum(p.cpu for p in procs))
        smallest: list[float] = []
        load = os.getloadavg()[0]
        if server and server.process:
            redis_cpu = proc_cpu(server.process.pid) - redis0
            procs.append(Proc("redis", redis_cpu, proc_hwm(server.process.pid)))
            cpu += redis_cpu
            import redis

            client = redis.Redis.from_url(server.url, decode_responses=True)
            for site in sorted(sites, key=lambda s: s.pages)[:5] if system == "invcrawl" else []:
                done = client.hget(f"invcrawl:{{{site.crawl_id}}}:meta", "finished_at")
                smallest.append((int(done) / 1000 - started) / wall if done else float("nan"))
            client.close()
        nginx = sum(proc_cpu(p) for p in nginx_pids()) - nginx0
        other = max(0.0, machine_busy() - busy0 - cpu - nginx)
    finally:
        if server:
            server.stop()
    pages = sum(s.pages for s in sites)
    expected: Counter[tuple[str, str]] = sum((s.expected for s in sites), Counter())
    outputs = (
        [run_dir / "out.jsonl"] if system != "invcrawl" else [*(run_dir / "out").glob("*.jsonl")]
    )
    seen: Counter[tuple[str, str]] = Counter()
    for output in outputs:
        seen.update(identities(output))
    items = sum(seen.values())
    duplicates = sum((seen - expected).values())
    missing = sum((expected - seen).values())
    result = Result(
        label, consumers, wall, pages, cpu, code, other,
        in_flight_per_host(log, started, ended), smallest, procs,
        items, duplicates, missing, load, run_dir,
    )  # fmt: skip
    if code != 0:
        say(f"  warning: {label} exited with {code}:")
        say((run_dir / "stderr.log").read_text(errors="replace")[-1500:])
    return result


def identities(output: Path) -> Counter[tuple[str, str]]:
    """The item identities of an output file (JSON Lines), with multiplicity."""
    seen: Counter[tuple[str, str]] = Counter()
    with contextlib.suppress(FileNotFoundError), open(output, encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            seen[item_identity(item["key"], item["url"])] += 1
    return seen


def summarise(runs: list[Result]) -> dict[str, Any]:
    """Medians over the rounds of one configuration; exactness from the worst round."""
    roles: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        totals: dict[str, float] = defaultdict(float)
        for proc in r.procs:
            totals[proc.role] += proc.cpu
        for role, cpu in totals.items():
            roles[role].append(cpu)
    middle = sorted(runs, key=lambda r: r.wall)[len(runs) // 2]
    return {
        "runs": len(runs),
        "wall": statistics.median(r.wall for r in runs),
        "walls": [round(r.wall, 1) for r in runs],
        "pages": runs[0].pages,
        "cpu": statistics.median(r.cpu for r in runs),
        "cpu_per_1000": statistics.median(r.cpu_per_1000 for r in runs),
        "other_cpu": statistics.median(r.other_cpu for r in runs),
        "load": statistics.median(r.load for r in runs),
        "items": statistics.median(r.items for r in runs),
        "duplicates": max(r.duplicates for r in runs),
        "missing": max(r.missing for r in runs),
        "max_per_host": max(max(r.max_in_flight.values(), default=0) for r in runs),
        "smallest_done": middle.smallest_done,  # the median-wall round's
        "roles": {role: statistics.median(v) for role, v in sorted(roles.items())},
        "codes": sorted({r.code for r in runs}),
    }


def render(
    summary: dict[str, dict[str, Any]], configs: list[System], sites: list[Site], host_limit: int
) -> str:
    base = next((summary[c.label] for c in configs if c.kind == "spider"), None)
    rounds = max((s["runs"] for s in summary.values()), default=0)
    loads = [s["load"] for s in summary.values()]
    lines = [
        f"{len(sites)} sites, {sum(s.pages for s in sites)} pages, "
        f"{sum(s.entries for s in sites)} entries, on {len(HOSTS)} hosts; "
        f"--host-concurrency {host_limit}; {os.cpu_count()} CPUs; median of {rounds} "
        f"alternating round(s); load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f}",
        "",
        f"{'run':<32} {'wall s':>7} {'pages/s':>8} {'CPU-s/1k':>9} {'vs (a)':>7} "
        f"{'items':>6} {'dup':>4} {'miss':>4} {'load':>5} {'max/host':>8} "
        f"{'5 smallest done at':>22}  runs (wall s)",
    ]
    for c in configs:
        r = summary[c.label]
        ratio = f"{r['cpu_per_1000'] / base['cpu_per_1000']:.2f}x" if base else "-"
        done = " ".join(f"{x:.0%}" for x in r["smallest_done"]) or "-"
        lines.append(
            f"{c.label:<32} {r['wall']:>7.1f} {r['pages'] / r['wall']:>8.1f} "
            f"{r['cpu_per_1000']:>9.2f} {ratio:>7} {r['items']:>6.0f} {r['duplicates']:>4} "
            f"{r['missing']:>4} {r['load']:>5.1f} {r['max_per_host']:>8} {done:>22}  "
            + " ".join(f"{w:.1f}" for w in r["walls"])
            + ("  (noisy)" if r["other_cpu"] > 0.25 * r["wall"] else "")
        )
    lines += ["", "CPU-s per process (all processes of a role summed; medians)"]
    for c in configs:
        roles = summary[c.label]["roles"]
        lines.append(f"  {c.label:<32} " + ", ".join(f"{k} {v:.1f}" for k, v in roles.items()))
    pairs = [
        (ic, pc)
        for ic in configs
        if ic.kind == "invcrawl" and ic.fsync == "always"
        for pc in configs
        if pc.kind == "peer" and pc.processes == ic.processes
    ]
    if pairs:
        lines += ["", f"{'invcrawl / scrapy-redis (same run)':<40} {'wall':>6} {'CPU-s/1k':>9}"]
        for ic, pc in pairs:
            i, q = summary[ic.label], summary[pc.label]
            lines.append(
                f"  {ic.processes} process(es){'':<25} {i['wall'] / q['wall']:>6.2f} "
                f"{i['cpu_per_1000'] / q['cpu_per_1000']:>9.2f}"
            )
    lines.append("")
    lines.append(
        "dup, miss: items beyond / short of the planned entries (worst round); targets: "
        "max/host <= the limit for invcrawl; CPU-s per 1,000 pages <= 1.25x (a) and <= "
        "scrapy-redis's; wall <= scrapy-redis's; the 5 smallest sites done within the first "
        "20% of the run"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=40, help="how many sites (default 40)")
    parser.add_argument("--consumers", default="1,2", help="invcrawl consumer counts (default 1,2)")
    parser.add_argument(
        "--peer", default="1,2", help="scrapy-redis process counts (default 1,2; '' skips)"
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip (a)")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument(
        "--fsync",
        default="always",
        help="Redis appendfsync policies to run invcrawl with (default always; e.g. always,everysec)",
    )
    parser.add_argument("--host-concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--redis-server", default=None)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep each run's files")
    parser.add_argument("--quick", action="store_true", help="no wait for an idle machine")
    args = parser.parse_args(argv)
    args.redis_server = args.redis_server or default_redis_server()
    sites = find_sites(args.sites)
    for i, site in enumerate(sites):
        host = HOSTS[i % len(HOSTS)]
        site.url = f"http://{host}:PORT/{site.root.relative_to(DOC)}/"
    workdir = Path(tempfile.mkdtemp(prefix="invcrawl-fleet-"))
    bench_args = argparse.Namespace(
        redis_server=args.redis_server, concurrency=8, wait_idle=0.0,
        timeout=args.timeout, keep=True,
    )  # fmt: skip
    bench = Bench(bench_args, workdir)
    log = workdir / "access.log"
    configs = [System("(a) spider, one by one", "spider", 1)] if not args.no_baseline else []
    for fsync in args.fsync.split(","):
        tag = "" if fsync == "always" else f", {fsync}"
        configs += [
            System(f"invcrawl, {n} consumer(s){tag}", "invcrawl", int(n), fsync)
            for n in args.consumers.split(",")
            if n.strip()
        ]
    configs += [
        System(f"scrapy-redis, {n} process(es)", "peer", int(n))
        for n in args.peer.split(",")
        if n.strip()
    ]
    results: dict[str, list[Result]] = {c.label: [] for c in configs}
    with serve(DOC, HOSTS, log) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        for site in sites:
            site.url = site.url.replace("PORT", port)
        for rep in range(args.repeat):
            shift = rep % max(len(configs), 1)
            for config in configs[shift:] + configs[:shift]:
                say(f"round {rep + 1}/{args.repeat}, {config.label}: {len(sites)} sites ...")
                args.run_fsync = config.fsync
                result = run_one(
                    bench, config.label, config.processes, sites=sites, log=log, args=args,
                    system=config.kind, rep=rep,
                )  # fmt: skip
                say(
                    f"  {result.wall:.1f} s, {result.pages / result.wall:.1f} pages/s, "
                    f"{result.cpu_per_1000:.2f} CPU-s/1k pages, {result.items} items "
                    f"(dup {result.duplicates}, miss {result.missing}), load {result.load:.1f}, "
                    f"max in flight per host {max(result.max_in_flight.values(), default=0)}"
                )
                results[config.label].append(result)
                if not args.keep and result.run_dir:
                    shutil.rmtree(result.run_dir, ignore_errors=True)
    summary = {label: summarise(runs) for label, runs in results.items()}
    print(render(summary, configs, sites, args.host_concurrency))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "sites": [(s.package, s.pages, s.entries, s.url) for s in sites],
                    "summary": summary,
                    "results": [
                        {**{k: v for k, v in r.__dict__.items() if k not in ("procs", "run_dir")},
                         "cpu_per_1000": r.cpu_per_1000}
                        for runs in results.values() for r in runs
                    ],
                },
                indent=2,
            )
        )  # fmt: skip
    say(f"work dir: {workdir}")
    return 0 if all(r.code == 0 for runs in results.values() for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
