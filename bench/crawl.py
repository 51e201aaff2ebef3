"""The invcrawl benchmark: figures printed as a table, nothing asserted.

    python -m bench.crawl                       # CPython 3.11 docs, 3 repeats, scale 1,4,16
    python -m bench.crawl --quick --site /usr/share/doc/sphinx-doc/html   # smoke run
    python -m bench.crawl --repeat 5 --scale-sizes 1,4 --json results.json

Sections (method and caveats: bench/README.md and docs/performance.md):

1. **End-to-end crawl** of SITE served on loopback by a private nginx
   (``bench/nginx.py``), runs alternated and repeated (medians): (a) the plain Scrapy
   spider of ``bench/baseline_spider.py``, (b) ``invcrawl crawl --consumers 1`` and
   (c) ``invcrawl crawl --consumers 2``, (d) and (e) the scrapy-redis peer of
   ``bench/scrapy_redis_peer.py`` (``RedisSpider``, its scheduler, dupefilter and item
   pipeline) with 1 and 2 processes; (b)-(e) each against a fresh private redis-server
   (``invcrawl.localredis.server.RedisServer``, AOF, ``appendfsync always``). Wall time, pages/s,
   entries/s, CPU seconds (user+sys of every process, Redis included; nginx shown
   apart) and per 1,000 pages, exactness of the output (items against the planned
   entries: duplicates, missing), the load average, peak RSS per process, and the
   ratios between the systems of the same run.
2. **Extraction floor** (``bench/floor.py``): lxml parse + id index vs extract_page.
3. **Redis memory** (``bench/memory.py``): per queued task and per deduplicated item.
4. **Scale**: the site under 1, 4, 16 prefixes (symlinks, one merged ``objects.inv``),
   one crawl each: time and consumer peak RSS per size, ratios against 1x.

CPU (``getrusage(RUSAGE_SELF)``) and peak RSS (``VmHWM`` of ``/proc/self/status``; not
``ru_maxrss``, which Linux seeds with the parent's high-water mark across fork + exec) of
every Python process are recorded at interpreter exit by the ``sitecustomize`` of
``bench/hooks/``, which the harness (``bench/harness.py``) puts first on the children's
``PYTHONPATH`` (exact, no sampling; an existing ``sitecustomize`` is chained). The process tree total is cross-checked with ``os.wait4``.
Redis and nginx are read from ``/proc/<pid>/stat`` and ``/proc/<pid>/status`` (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import zlib
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import floor, memory
from bench.harness import (
    DEFAULT_SITE,
    MODES,
    Bench,
    Proc,
    Run,
    default_redis_server,
    extraction_kind,
    median,
    mib,
    say,
    site_plan,
    versions,
    warm_page_cache,
)
from bench.nginx import serve
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl

# -- the scale site ---------------------------------------------------------------------------


def build_scale_site(src: Path, root: Path, sizes: list[int]) -> dict[int, tuple[int, int]]:
    """``root/s<k>/p<i>`` -> symlinks to ``src`` for i < k, and ``root/s<k>/objects.inv``:
    one merged inventory with every URI prefixed by ``p<i>/`` (names of copies i > 0
    prefixed by ``s<i>.`` so that their keys are distinct items). Returns size ->
    (pages, entries) as planned."""
    inventory = parse_inventory((src / "objects.inv").read_bytes())
    planned = {}
    for k in sizes:
        site = root / f"s{k}"
        site.mkdir(parents=True)
        lines = []
        for i in range(k):
            (site / f"p{i}").symlink_to(src.resolve(), target_is_directory=True)
            for e in inventory.entries:
                name = e.name if i == 0 else f"s{i}.{e.name}"
                uri = e.uri if "://" in e.uri else f"p{i}/{e.uri}"
                disp = "-" if e.dispname == name else e.dispname
                lines.append(f"{name} {e.domain}:{e.role} {e.priority} {uri} {disp}")
        header = (
            "# Sphinx inventory version 2\n"
            f"# Project: {inventory.project or 'bench'}\n"
            f"# Version: {inventory.version or ''}\n"
            "# The remainder of this file is compressed using zlib.\n"
        )
        data = header.encode() + zlib.compress(("\n".join(lines) + "\n").encode(), 9)
        (site / "objects.inv").write_bytes(data)
        plan = plan_crawl(parse_inventory(data), f"http://bench.invalid/s{k}/objects.inv")
        planned[k] = (len(plan.pages), plan.entries)
    return planned


# -- rendering --------------------------------------------------------------------------------


def process_table(run: Run) -> dict[str, Proc]:
    """The run's processes by name; several consumers are ranked by CPU (``consumer 1``
    did the most work), so that an uneven split shows."""
    named: dict[str, Proc] = {}
    for role in ("spider", "crawl", "producer", "consumer", "export", "redis", "other"):
        procs = sorted((p for p in run.procs if p.role == role), key=lambda p: -p.cpu)
        for rank, proc in enumerate(procs, 1):
            named[f"{role} {rank}" if len(procs) > 1 else role] = proc
    return named


def summarise(runs: list[Run]) -> dict[str, Any]:
    tables = [process_table(r) for r in runs]
    names = list(dict.fromkeys(name for t in tables for name in t))
    procs = {
        name: {
            "cpu": median([t[name].cpu for t in tables if name in t]),
            "maxrss": median([t[name].maxrss for t in tables if name in t]),
        }
        for name in names
    }
    return {
        "runs": len(runs),
        "wall": median([r.wall for r in runs]),
        "cpu": median([r.cpu for r in runs]),
        "redis_cpu": median([r.redis_cpu for r in runs]),
        "nginx_cpu": median([r.nginx_cpu for r in runs]),
        "other_cpu": median([r.other_cpu for r in runs]),
        "items": median([r.items for r in runs]),
        "cpu_per_1000": median([r.cpu_per_1000 for r in runs]),
        "load": median([r.load for r in runs]),
        # exactness: the worst run (one duplicate in any run matters)
        "duplicates": max((r.duplicates for r in runs), default=-1),
        "missing": max((r.missing for r in runs), default=-1),
        "walls": [f"{r.wall:.2f}{'*' if r.noisy else ''}" for r in runs],
        "procs": procs,
        "consumers": max((r.count("consumer") for r in runs), default=0),
        "phases": {
            k: median([r.phases[k] for r in runs if k in r.phases])
            for k in (runs[0].phases if runs else {})
        },
        "codes": sorted({r.code for r in runs}),
        "statuses": runs[-1].statuses if runs else {},
    }


def render_e2e(
    summary: dict[str, dict[str, Any]], pages: int, entries: int, repeat: int, concurrency: int
) -> str:
    loads = [s["load"] for s in summary.values()]
    rows = [
        f"1. End-to-end crawl: {pages} pages, {entries} entries; nginx on loopback; "
        f"concurrency {concurrency} per process; median of {repeat} alternating run(s); "
        f"load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f}",
        f"  {'run':30} {'wall s':>7} {'pages/s':>8} {'entries/s':>9} {'CPU s':>6} "
        f"{'CPU/1k':>6} {'redis':>6} {'nginx':>6} {'other':>6} {'load':>5} {'items':>6} "
        f"{'dup':>4} {'miss':>4}  runs (wall s)",
    ]
    for mode, s in summary.items():
        wall = s["wall"]
        rows.append(
            f"  {MODES[mode].label:30} {wall:7.2f} {pages / wall:8.1f} {entries / wall:9.0f} "
            f"{s['cpu']:6.2f} {s['cpu_per_1000']:6.2f} {s['redis_cpu']:6.2f} "
            f"{s['nginx_cpu']:6.2f} {s['other_cpu']:6.2f} {s['load']:5.1f} {s['items']:6.0f} "
            f"{s['duplicates']:4d} {s['missing']:4d}  {' '.join(s['walls'])}"
        )
    rows.append(
        "  CPU s = user+sys of every benchmarked process incl. Redis (and the supervisor, the "
        "producer or the peer's driver); CPU/1k: per 1,000 pages;"
    )
    rows.append(
        "  nginx, and CPU used by other processes on the machine (other), shown apart; load: "
        "1-min load average at the end of each run (median);"
    )
    rows.append(
        "  dup, miss: output lines beyond / short of the planned entries (worst run); "
        "* = a run during which other processes used > 0.25 CPU"
    )
    rows.append("")
    rows.append(f"  {'per process (medians)':30} {'CPU s':>7} {'peak RSS MiB':>13}")
    for mode, s in summary.items():
        for name, proc in s["procs"].items():
            rows.append(
                f"  {MODES[mode].label[:3] + ' ' + name:30} {proc['cpu']:7.2f} {mib(proc['maxrss']):>13}"
            )
    phased = {m: s["phases"] for m, s in summary.items() if s["phases"]}
    if phased:
        names = list(next(iter(phased.values())))
        rows += ["", f"  {'wall time by phase, s':30} " + " ".join(f"{n:>15}" for n in names)]
        for mode, ph in phased.items():
            rows.append(
                f"  {MODES[mode].label:30} " + " ".join(f"{ph.get(n, 0):15.2f}" for n in names)
            )
    rows += ["", f"  {'ratio (same run)':30} {'value':>7}  target"]
    wall = {m: s["wall"] for m, s in summary.items()}
    cpu = {m: s["cpu"] for m, s in summary.items()}
    ratios = [
        ("b/a wall time", wall, "b", "a", "<= 1.15"),
        ("c/a wall time", wall, "c", "a", ""),
        ("d/a wall time", wall, "d", "a", ""),
        ("e/a wall time", wall, "e", "a", ""),
        ("b/d wall time (1 process)", wall, "b", "d", "<= 1.00"),
        ("c/e wall time (2 processes)", wall, "c", "e", "<= 1.00"),
        ("b/c speed-up (2 vs 1)", wall, "b", "c", ">= 1.6 (ceiling here: section 2)"),
        ("b/a CPU", cpu, "b", "a", "<= 1.25"),
        ("c/a CPU", cpu, "c", "a", "<= 1.25"),
        ("d/a CPU", cpu, "d", "a", ""),
        ("e/a CPU", cpu, "e", "a", ""),
        ("b/d CPU (1 process)", cpu, "b", "d", "<= 1.00"),
        ("c/e CPU (2 processes)", cpu, "c", "e", "<= 1.00"),
    ]
    for name, values, num, den, target in ratios:
        if num in values and den in values:
            rows.append(f"  {name:30} {values[num] / values[den]:7.2f}  {target}".rstrip())
    if {"b", "c"} <= summary.keys():
        # The best (c) can do is its own CPU (consumers, Redis, crawl process, nginx)
        # spread perfectly over every CPU of the machine with nothing else running.
        c_busy = cpu["c"] + summary["c"]["nginx_cpu"]
        cpus = os.cpu_count() or 1
        rows.append(
            f"  {'b/c bound by (c) CPU':30} {wall['b'] / (c_busy / cpus):7.2f}  "
            f"= b / ((c CPU s + nginx) / {cpus} CPUs)"
        )
    return "\n".join(rows)


def render_scale(scale: dict[int, dict[str, Any]], consumers: int) -> str:
    rows = [
        f"4. Scale: the site under k prefixes (symlinks, one merged objects.inv), "
        f"invcrawl with {consumers} consumer(s), one crawl per size",
        f"  {'size':5} {'pages':>6} {'entries':>8} {'wall s':>7} {'pages/s':>8} "
        f"{'time/page vs 1x':>16} {'consumer RSS MiB':>17} {'vs 1x':>6} {'redis peak MiB':>15} "
        f"{'CPU s':>7} {'other':>6}",
    ]
    base = scale[min(scale)]
    for k, s in sorted(scale.items()):
        per_page = s["wall"] / s["pages"]
        rows.append(
            f"  {str(k) + 'x':5} {s['pages']:6d} {s['entries']:8d} {s['wall']:7.2f} "
            f"{s['pages'] / s['wall']:8.1f} "
            f"{per_page / (base['wall'] / base['pages']):16.2f} "
            f"{mib(s['consumer_rss']):>17} {s['consumer_rss'] / max(base['consumer_rss'], 1):6.2f} "
            f"{mib(s['redis_peak']):>15} {s['cpu']:7.2f} {s['other_cpu']:5.2f}"
            f"{'*' if s['noisy'] else ' '}"
        )
    top = max(scale)
    if top != min(scale):
        ratio = scale[top]["wall"] / base["wall"]
        rows.append(
            f"  {top}x/{min(scale)}x: {scale[top]['pages'] / base['pages']:.0f}x the pages in "
            f"{ratio:.2f}x the time (target: 16x pages within 18x time); consumer peak RSS "
            f"{scale[top]['consumer_rss'] / max(base['consumer_rss'], 1):.2f}x (target: within 20%)"
        )
    return "\n".join(rows)


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="invcrawl benchmark (figures, no asserts)")
    parser.add_argument(
        "--site",
        type=Path,
        default=DEFAULT_SITE,
        help="a built Sphinx HTML directory with objects.inv (default: %(default)s)",
    )
    parser.add_argument("--repeat", type=int, default=None, help="end-to-end repeats (default 3)")
    parser.add_argument(
        "--scale-sizes",
        "--scale",
        dest="scale",
        default=None,
        help="comma-separated copies of the site (default 1,4,16; 0 skips)",
    )
    parser.add_argument("--scale-consumers", type=int, default=2)
    parser.add_argument(
        "--modes",
        default="abcde",
        help="end-to-end runs to do: a (spider), b/c (invcrawl, 1/2 consumers), d/e "
        "(scrapy-redis, 1/2 processes) (default abcde)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="pages in flight per process")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 repeat, scale 1,2, floor and memory once"
    )
    parser.add_argument(
        "--skip", default="", help="comma-separated sections to skip: e2e,floor,memory,scale"
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="per crawl, seconds")
    parser.add_argument(
        "--redis-server",
        default=None,
        help="redis-server binary (default: /usr/bin/redis-server, else invcrawl's)",
    )
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=None,
        help="before each timed crawl, wait up to this many seconds for other "
        "processes to use < 0.25 CPU (default 120; 0 with --quick)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write raw results here")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.scale is None:
        args.scale = "1,2" if args.quick else "1,4,16"
    args.scale_sizes = sorted({int(x) for x in args.scale.split(",") if int(x) > 0})
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    args.redis_server = args.redis_server or default_redis_server()
    if args.wait_idle is None:
        args.wait_idle = 0.0 if args.quick else 120.0
    return args


def run_e2e(
    bench: Bench, url: str, pages: int, entries: int, expected: Counter[tuple[str, str]]
) -> dict[str, Any]:
    """The modes alternated: repetition r starts at mode r % len(modes) (abcde, bcdea...)."""
    args = bench.args
    modes = [m for m in MODES if m in args.modes]
    runs: dict[str, list[Run]] = {m: [] for m in modes}
    for rep in range(args.repeat):
        order = modes[rep % len(modes) :] + modes[: rep % len(modes)]
        for mode in order:
            run = bench.crawl(
                mode,
                rep,
                url,
                MODES[mode].processes,
                pages=pages,
                entries=entries,
                expected=expected,
            )
            runs[mode].append(run)
            say(
                f"  {MODES[mode].label} run {rep + 1}/{args.repeat}: {run.wall:.2f} s, "
                f"{run.items} items (dup {run.duplicates}, miss {run.missing}), "
                f"CPU {run.cpu:.2f} s, other {run.other_cpu:.2f} s, load {run.load:.1f}"
            )
    return {
        "summary": {m: summarise(rs) for m, rs in runs.items()},
        "runs": {m: [asdict(r) for r in rs] for m, rs in runs.items()},
    }


def run_scale(bench: Bench, site: Path) -> dict[int, dict[str, Any]]:
    args = bench.args
    say(f"scale: building the {args.scale} site...")
    planned = build_scale_site(site, bench.workdir / "scale", args.scale_sizes)
    scale: dict[int, dict[str, Any]] = {}
    with serve(bench.workdir / "scale") as url:
        for k in args.scale_sizes:
            pages, entries = planned[k]
            run = bench.crawl(
                "c", 0, f"{url}s{k}/", args.scale_consumers,
                pages=pages, entries=entries, label=f"scale{k}",
            )  # fmt: skip
            scale[k] = {
                "pages": pages,
                "entries": entries,
                "wall": run.wall,
                "items": run.items,
                "cpu": run.cpu,
                "consumer_rss": run.peak("consumer"),
                "producer_rss": run.peak("producer"),
                "crawl_rss": run.peak("crawl"),
                "redis_peak": run.redis_peak_memory,
                "redis_rss": run.peak("redis"),
                "other_cpu": run.other_cpu,
                "noisy": run.noisy,
            }
            say(
                f"  scale {k}x: {pages} pages in {run.wall:.2f} s, {run.items} items, "
                f"consumer peak RSS {mib(run.peak('consumer'))} MiB"
            )
    return scale


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    site = args.site.resolve()
    if not (site / "objects.inv").is_file():
        raise SystemExit(f"{site}/objects.inv not found: --site is a built Sphinx HTML directory")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanups below
    pages, fetch_pages, entries, expected = site_plan(site)
    header = [
        "invcrawl benchmark",
        f"  site {site}: {pages} pages ({fetch_pages} fetched), {entries} entries",
        f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; "
        f"{versions(args.redis_server)}",
        f"  extraction: {extraction_kind()}",
    ]
    say("\n".join(header))
    results: dict[str, Any] = {"site": str(site), "pages": pages, "entries": entries}
    sections: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="invcrawl-bench-") as tmp:
        workdir = Path(tmp)
        workdir.chmod(0o755)  # nginx workers run as nobody and serve the scale site from here
        bench = Bench(args, workdir)
        try:
            warm_page_cache(site)
            if "floor" not in args.skip:
                say("floor: parsing and extracting every page in one process...")
                results["floor"] = floor.measure(site, 1 if args.quick else args.repeat)
                sections["floor"] = "2. " + floor.render(results["floor"])
            with serve(site) as url:
                if "e2e" not in args.skip:
                    results["e2e"] = run_e2e(bench, url, pages, entries, expected)
                    sections["e2e"] = render_e2e(
                        results["e2e"]["summary"], pages, entries, args.repeat, args.concurrency
                    )
                if "memory" not in args.skip:
                    say("memory: produce, measure, consume, measure...")
                    results["memory"] = memory.measure(
                        url, workdir, env=bench.env, binary=args.redis_server
                    )
                    sections["memory"] = "3. " + memory.render(results["memory"])
            if "scale" not in args.skip and args.scale_sizes:
                scale = run_scale(bench, site)
                results["scale"] = {str(k): v for k, v in scale.items()}
                sections["scale"] = render_scale(scale, args.scale_consumers)
        finally:
            if bench.current and bench.current.poll() is None:
                bench.current.terminate()
            if args.keep:
                kept = Path(tempfile.mkdtemp(prefix="invcrawl-bench-kept-"))
                shutil.copytree(workdir, kept, symlinks=True, dirs_exist_ok=True)
                say(f"work directory kept in {kept}")
    print("\n".join(header))
    for name in ("e2e", "floor", "memory", "scale"):
        if name in sections:
            print()
            print(sections[name])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
