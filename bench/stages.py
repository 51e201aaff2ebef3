"""Where a crawl's cost goes, per stage (issue 27, "Cheaper than scrapy-redis"): one
process on the CPython docs, invcrawl (``crawl --consumers 1``) and the scrapy-redis peer
(``bench/scrapy_redis_peer.py``, 1 process), rounds alternated, medians.

    python -m bench.stages                       # 3 rounds, py-spy on every process
    python -m bench.stages --rounds 1 --site /usr/share/doc/sphinx-doc/html --no-pyspy
    python -m bench.stages --systems b --json stages.json

Per round, against a fresh redis-server (AOF, ``appendfsync always``) and a private nginx:

* **CPU per process** (crawl supervisor, producer, consumer; the peer's driver and
  spider; Redis): the exact rusage of the ``sitecustomize`` hook of ``bench/hooks/``, and
  ``/proc`` for Redis.
* **CPU per stage** of each Python process, from ``py-spy record --subprocesses
  --nonblocking --format raw`` (samples of non-idle stacks, so a share of CPU time): each
  stack is given the stage of its outermost frame that names one (``STAGES``: claim,
  permit, fetch, extract, commit, heartbeat, supervisor export/status, start-up...), and
  the process's measured CPU is split by those shares.
* **Round trips to Redis per page**, by command (a script by its name), counted in every
  Python process by a patch of redis-py's ``send_packed_command`` (one call = one round
  trip; a pipeline is one, labelled with its first command and its length).
* **Redis server time per page** by top-level command or script, from ``SLOWLOG`` with a
  0 us threshold (every command, its execution time; I/O, the event loop and the AOF
  ``write`` + ``fsync`` are not in it: they are the rest of Redis's CPU), plus
  ``INFO commandstats`` and the read/write system calls of ``/proc/<pid>/io``.

Figures, not asserts: docs/performance.md, section "Where the cost goes (issue 27)".
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import redis

from bench import scrapy_redis_peer as peer
from bench.harness import (
    REPO,
    Bench,
    default_redis_server,
    proc_cpu,
    read_hooks,
    role_of,
    say,
    site_plan,
    warm_page_cache,
)
from bench.nginx import serve
from invcrawl.frontier.scripts import load, script_names
from invcrawl.localredis.server import RedisServer

SYSTEMS = {"b": "invcrawl, 1 consumer", "d": "scrapy-redis, 1 process"}

# Stage of a py-spy stack: its innermost frame matching one of these (file, function)
# patterns (in this order of precedence for one frame). Innermost, because Twisted runs a
# page's callbacks (extraction, the commit pipeline) beneath the frames of the download
# that fired them; the asyncio stream reads of redis-py only count when nothing else does.
STAGES: list[tuple[str, str, str]] = [
    # (stage, file pattern, function pattern)
    ("start-up (imports)", r"<frozen importlib\._bootstrap>", r""),
    ("heartbeat", r"/consumer/heartbeat\.py", r""),
    ("claim", r"/consumer/worker\.py", r"^(_claim_turn|_claim|_claim_slots)$"),
    ("discovery, completion", r"/consumer/(discovery|dead_pages)\.py", r""),
    ("discovery, completion", r"/consumer/worker\.py", r"^(_retire_complete|_poll_upstream)$"),
    ("permit", r"/consumer/politeness\.py", r""),
    ("robots.txt", r"/consumer/robots\.py", r""),
    ("commit", r"/consumer/pipelines\.py", r""),
    ("commit", r"/consumer/worker\.py", r"^(commit|fail|postpone|settled)$"),
    ("extract", r"/consumer/spider\.py", r"^(parse_page|extract)$"),
    ("extract", r"/common/extract/", r""),
    ("extract", r"/bench/baseline_spider\.py", r"^page_items$"),
    ("extract", r"/bench/scrapy_redis_peer\.py", r"^parse_page$"),
    ("claim → request", r"/consumer/spider\.py", r"^start$"),
    ("scrapy-redis scheduler + dupefilter", r"/scrapy_redis/(scheduler|queue|dupefilter)\.py", r""),
    ("scrapy-redis start URLs", r"/scrapy_redis/spiders\.py", r""),
    (
        "scrapy-redis start URLs",
        r"/bench/scrapy_redis_peer\.py",
        r"^(start|spider_idle|make_request_from_data)$",
    ),
    ("commit", r"/scrapy_redis/pipelines\.py", r""),
    ("commit", r"/bench/scrapy_redis_peer\.py", r"^_process_item$"),
    ("supervisor: export", r"/frontier/export\.py", r""),
    ("supervisor: status", r"/frontier/status\.py", r""),
    # not producer/run.py: produce --consume runs the consumer beneath its frames
    (
        "producer: parse, plan, enqueue",
        r"/producer/(enqueue|spider)\.py|/common/(plan|inventory)\.py",
        r"",
    ),
    ("driver: feed", r"/bench/scrapy_redis_peer\.py", r"^feed$"),
    ("driver: export", r"/bench/scrapy_redis_peer\.py", r"^export$"),
    (
        "fetch (downloader, middlewares)",
        r"/scrapy/core/downloader/|/twisted/web/|/consumer/(redirects|addresses)\.py|/scrapy/downloadermiddlewares/",
        r"",
    ),
]
FALLBACK = ("redis client I/O (asyncio streams)", r"/asyncio/(streams|selector_events)\.py", r"")
# Sub-stages inside a stage: the first (file, function) pattern found anywhere in the stack.
DETAIL: dict[str, list[tuple[str, str, str]]] = {
    "commit": [
        (
            "items encoded (prepare: checksum, orjson, zstd)",
            r"/common/(items|codec)\.py",
            r"^(prepare|checksum|stored_item)",
        ),
        ("Redis client (pack, send, parse)", r"/redis/", r""),
        ("orjson / thread hand-off", r"", r""),
    ],
    "extract": [
        ("extract_page", r"/common/extract/", r""),
        ("build_item", r"/common/items\.py", r"^build_item$"),
        ("validators (body hash)", r"/common/validators\.py", r""),
        ("other", r"", r""),
    ],
    "supervisor: export": [
        (
            "decode (base64, zstd, orjson)",
            r"/common/codec\.py|/frontier/export\.py",
            r"^(item_json|item_bytes|_decode|decode)",
        ),
        ("Redis client", r"/redis/", r""),
        ("write", r"", r""),
    ],
}
FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*):\d+\)$")


def stage_of(frames: list[str]) -> tuple[str, str]:
    parsed = []
    for frame in frames:
        m = FRAME.match(frame)
        # py-spy names a method by its qualified name (Worker.commit): match the last part
        parsed.append((m["file"], m["func"].rsplit(".", 1)[-1]) if m else ("", frame))
    for tier in (STAGES, [FALLBACK]):
        for file, func in reversed(parsed):
            for stage, file_re, func_re in tier:
                if re.search(file_re, file) and (not func_re or re.search(func_re, func)):
                    for detail, d_file, d_func in DETAIL.get(stage, []):
                        if any(
                            re.search(d_file, f) and (not d_func or re.search(d_func, fn))
                            for f, fn in parsed
                        ):
                            return stage, detail
                    return stage, ""
    return REST, package_of(parsed[-1][0] if parsed else "")


REST = "Scrapy engine, Twisted, asyncio (rest)"


def package_of(file: str) -> str:
    """Where a leaf frame of the rest is: two levels of a third-party package, the module of
    the standard library, or the file of this repository."""
    if "site-packages/" in file:
        parts = file.split("site-packages/", 1)[1].split("/")
        return "/".join(parts[:2]).removesuffix(".py")
    if "/python3." in file:
        return file.rsplit("/", 1)[-1].removesuffix(".py")
    return file.removeprefix(str(REPO) + "/") or "?"


def parse_pyspy(path: Path) -> dict[int, dict[str, Any]]:
    """pid -> {"argv", "depth", "stages": Counter[(stage, detail)]} from py-spy's raw
    output (``process PID:"cmdline";frame;frame... count``, child processes nested)."""
    procs: dict[int, dict[str, Any]] = {}
    if not path.exists():
        return procs
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        pids = [i for i, f in enumerate(frames) if f.startswith("process ")]
        if not pids:
            continue
        last = pids[-1]
        m = re.match(r'process (\d+):"(.*)"', frames[last])
        if not m:
            continue
        pid = int(m[1])
        entry = procs.setdefault(
            pid, {"cmdlines": Counter(), "depth": len(pids), "stages": Counter()}
        )
        entry["cmdlines"][m[2]] += int(count)
        entry["stages"][stage_of(frames[last + 1 :])] += int(count)
    for entry in procs.values():
        # a process sampled right after its fork may show its parent's command line first
        entry["argv"] = entry.pop("cmdlines").most_common(1)[0][0].split()
    return procs


def script_shas() -> dict[str, str]:
    return {hashlib.sha1(load(name).source.encode()).hexdigest(): name for name in script_names()}


def label_name(label: str, shas: dict[str, str]) -> str:
    for sha, name in shas.items():
        label = label.replace(sha, f"{name}.lua")
    return label


def pyspy_role(entry: dict[str, Any]) -> str:
    argv = entry["argv"]
    script = next((a for a in argv if a.endswith(".py")), "")
    role = role_of([script, *argv[argv.index(script) + 1 :]] if script else argv[1:])
    if "-m" in argv and "invcrawl" in argv:
        rest = argv[argv.index("invcrawl") + 1 :]
        role = role_of(["invcrawl", *rest])
        if role == "consumer" and entry["depth"] >= 3:
            role = "producer"  # the child forked by produce --consume
    return role


def run_round(
    bench: Bench, system: str, rep: int, urls: list[str], *, args: argparse.Namespace, pages: int
) -> dict[str, Any]:
    run_dir = bench.workdir / f"stages-{system}-{rep}"
    (run_dir / "rusage").mkdir(parents=True)
    server = RedisServer(run_dir / "redis", binary=args.redis_server)
    server.start()
    client = redis.Redis.from_url(server.url, decode_responses=True)
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 1_000_000)
    output = run_dir / "out.jsonl"
    if system == "b":
        argv = [
            sys.executable, "-m", "invcrawl", "crawl", *urls, "--consumers", "1",
            "--concurrency", str(args.concurrency), "--host-concurrency", str(args.host_concurrency),
            "--redis", server.url, "--progress", "none", "--data-dir", str(run_dir / "data"),
        ]  # fmt: skip
        argv += ["--out-dir", str(run_dir / "out")] if len(urls) > 1 else ["-o", str(output)]
    else:
        argv = peer.argv(urls, server.url, output, processes=1, concurrency=args.concurrency)
    profile = run_dir / "pyspy.txt"
    if args.pyspy:
        argv = [
            args.pyspy, "record", "--subprocesses", "--nonblocking", "--full-filenames",
            "--rate", str(args.rate), "--format", "raw", "-o", str(profile), "--", *argv,
        ]  # fmt: skip
    assert server.process
    pid = server.process.pid
    redis0, io0 = proc_cpu(pid), proc_io(pid)
    env_before = dict(bench.env)
    bench.env["INVCRAWL_BENCH_ROUNDTRIPS"] = "1"
    try:
        code, wall, _tree = bench.run_process(argv, run_dir, args.timeout)
    finally:
        bench.env = env_before
    redis_cpu = proc_cpu(pid) - redis0
    io1 = proc_io(pid)
    commandstats = client.info("commandstats")
    slowlog = client.slowlog_get(-1)
    client.close()
    server.stop()
    if code != 0:
        say(f"  warning: {SYSTEMS[system]} exited with {code}")
        say((run_dir / "stderr.log").read_text(errors="replace")[-1500:])
    procs = read_hooks(run_dir / "rusage")
    cpu: dict[str, float] = defaultdict(float)
    for proc in procs:
        cpu[proc.role] += proc.cpu
    cpu["redis"] = redis_cpu
    roundtrips: dict[str, Counter[str]] = defaultdict(Counter)
    extract_cpu: dict[str, float] = defaultdict(float)
    for path in (run_dir / "rusage").glob("*.rt"):
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text())
            roundtrips[role_of(data["argv"])].update(data["roundtrips"])
            if data.get("extract_calls"):
                extract_cpu[role_of(data["argv"])] += data["extract_cpu"]
    server_us, server_calls, inner_us = server_time(slowlog)
    stages: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for entry in parse_pyspy(profile).values():
        stages[pyspy_role(entry)].update(entry["stages"])
    if not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "system": system,
        "wall": wall,
        "code": code,
        "load": os.getloadavg()[0],
        "pages": pages,
        "cpu": dict(cpu),
        "redis_io": {k: io1.get(k, 0) - io0.get(k, 0) for k in io1},
        "roundtrips": {role: dict(c) for role, c in roundtrips.items()},
        "extract_cpu": dict(extract_cpu),
        "server_us": dict(server_us),
        "server_calls": dict(server_calls),
        "inner_us": {k: dict(v) for k, v in inner_us.items()},
        "commandstats": commandstats,
        "stages": {role: {f"{s}|{d}": n for (s, d), n in c.items()} for role, c in stages.items()},
    }


def server_time(
    slowlog: list[dict[str, Any]],
) -> tuple[Counter[str], Counter[str], dict[str, Counter[str]]]:
    """Execution time of the top-level commands (a script by its SHA-1), their calls, and
    the time of the commands each script ran inside it. SLOWLOG logs a script's own
    commands too, with the client ``?:0``, just before the script's own entry (Redis runs
    one command at a time): those are attributed to the next top-level entry."""
    us: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    inner: dict[str, Counter[str]] = defaultdict(Counter)
    pending: Counter[str] = Counter()
    for entry in sorted(slowlog, key=lambda e: int(e["id"])):
        raw = entry["command"]
        command = (raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)).split()
        name = command[0].upper() if command else "?"
        address = entry.get("client_address")
        if isinstance(address, bytes):
            address = address.decode(errors="replace")
        if address == "?:0":  # run by a script
            pending[name] += int(entry["duration"])
            continue
        if name in ("EVALSHA", "EVAL") and len(command) > 1:
            name = f"{name} {command[1][:40]}"
        if not name.startswith(("SLOWLOG", "CONFIG", "INFO")):
            us[name] += int(entry["duration"])
            calls[name] += 1
            inner[name].update(pending)
        pending = Counter()
    return us, calls, inner


def proc_io(pid: int) -> dict[str, int]:
    try:
        lines = Path(f"/proc/{pid}/io").read_text().splitlines()
    except OSError:
        return {}
    return {k: int(v) for k, v in (line.split(": ") for line in lines)}


# -- rendering --------------------------------------------------------------------------------


def med(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def render(rounds: list[dict[str, Any]], pages: int) -> str:
    shas = script_shas()
    lines: list[str] = []
    for system, title in SYSTEMS.items():
        runs = [r for r in rounds if r["system"] == system]
        if not runs:
            continue
        lines += [
            f"{title}: {len(runs)} round(s), {pages} pages; wall {med([r['wall'] for r in runs]):.2f} s "
            f"(runs {' '.join(format(r['wall'], '.2f') for r in runs)}); load average "
            f"{min(r['load'] for r in runs):.1f}-{max(r['load'] for r in runs):.1f}",
            "",
            f"  {'process / stage':58} {'CPU s':>6} {'ms/page':>8} {'share':>6}",
        ]
        roles = sorted({role for r in runs for role in r["cpu"]}, key=role_order)
        total = med([sum(r["cpu"].values()) for r in runs])
        for role in roles:
            role_cpu = med([r["cpu"].get(role, 0.0) for r in runs])
            lines.append(
                f"  {role:58} {role_cpu:6.2f} {role_cpu / pages * 1000:8.2f} {role_cpu / total:6.1%}"
            )
            exact = [r.get("extract_cpu", {}).get(role) for r in runs]
            if any(exact):
                cpu_in = med([x for x in exact if x])
                lines.append(
                    f"    {'(extract_page, timed exactly in the process)':56} {cpu_in:6.2f} "
                    f"{cpu_in / pages * 1000:8.2f} {cpu_in / total:6.1%}"
                )
            shares = stage_shares(runs, role)
            for stage, share in shares:
                cpu = share * role_cpu
                lines.append(
                    f"    {stage:56} {cpu:6.2f} {cpu / pages * 1000:8.2f} {cpu / total:6.1%}"
                )
        lines.append(
            f"  {'total (Python processes + Redis)':58} {total:6.2f} {total / pages * 1000:8.2f}"
        )
        lines += ["", f"  {'round trips to Redis per page':58} {'calls':>6} {'/page':>8}"]
        for role in roles:
            counts: Counter[str] = Counter()
            for r in runs:
                counts.update(r["roundtrips"].get(role, {}))
            if not counts:
                continue
            n = len(runs)
            all_calls = sum(counts.values()) / n
            lines.append(f"  {role:58} {all_calls:6.0f} {all_calls / pages:8.2f}")
            for label, calls in counts.most_common(12):
                lines.append(
                    f"    {label_name(label, shas)[:56]:56} {calls / n:6.0f} {calls / n / pages:8.2f}"
                )
        lines += [
            "",
            f"  {'Redis server time (SLOWLOG, top-level commands)':58} {'calls':>6} {'us/page':>8} {'of CPU':>6}",
        ]
        redis_cpu = med([r["cpu"]["redis"] for r in runs])
        us: Counter[str] = Counter()
        calls: Counter[str] = Counter()
        for r in runs:
            us.update(r["server_us"])
            calls.update(r["server_calls"])
        n = len(runs)
        inner: dict[str, Counter[str]] = defaultdict(Counter)
        for r in runs:
            for name, commands in r.get("inner_us", {}).items():
                inner[name].update(commands)
        for name, total_us in us.most_common(10):
            lines.append(
                f"    {label_name(name, shas)[:56]:56} {calls[name] / n:6.0f} "
                f"{total_us / n / pages:8.1f} {total_us / n / 1e6 / redis_cpu:6.1%}"
            )
            if inner[name]:
                lines.append(
                    "      inside: "
                    + ", ".join(
                        f"{cmd} {t / n / pages:.1f}" for cmd, t in inner[name].most_common(5)
                    )
                    + " us/page"
                )
        in_commands = sum(us.values()) / n / 1e6
        io = {k: med([r["redis_io"].get(k, 0) for r in runs]) for k in ("syscr", "syscw")}
        lines.append(
            f"    {'outside commands (I/O, event loop, AOF write + fsync)':56} {'':6} "
            f"{(redis_cpu - in_commands) * 1e6 / pages:8.1f} {(redis_cpu - in_commands) / redis_cpu:6.1%}"
        )
        lines.append(
            f"    read syscalls {io['syscr'] / pages:.1f}/page, write syscalls "
            f"{io['syscw'] / pages:.1f}/page (sockets and AOF)"
        )
        lines.append("")
    return "\n".join(lines)


def role_order(role: str) -> tuple[int, str]:
    order = ["consumer", "crawl", "producer", "redis"]
    return (order.index(role) if role in order else len(order), role)


def stage_shares(runs: list[dict[str, Any]], role: str) -> list[tuple[str, float]]:
    """Median share of each stage (and detail) of the role's py-spy samples."""
    per_run = []
    for r in runs:
        samples = r["stages"].get(role, {})
        total = sum(samples.values())
        if total:
            per_run.append({k: v / total for k, v in samples.items()})
    if not per_run:
        return []
    keys = {k for shares in per_run for k in shares}
    stage_totals: dict[str, float] = defaultdict(float)
    details: dict[str, dict[str, float]] = defaultdict(dict)
    for key in keys:
        stage, detail = key.split("|", 1)
        share = med([shares.get(key, 0.0) for shares in per_run])
        stage_totals[stage] += share
        if detail:
            details[stage][detail] = share
    norm = sum(stage_totals.values()) or 1.0
    out = []
    for stage, share in sorted(stage_totals.items(), key=lambda kv: -kv[1]):
        out.append((stage, share / norm))
        ranked = sorted(details[stage].items(), key=lambda kv: -kv[1])
        for detail, d_share in ranked[:6]:
            out.append((f"  {detail}", d_share / norm))
        if len(ranked) > 6:
            out.append((f"  ({len(ranked) - 6} more)", sum(v for _, v in ranked[6:]) / norm))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default="bd", help="b (invcrawl), d (scrapy-redis)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--host-concurrency",
        type=int,
        default=0,
        help="invcrawl's --host-concurrency (default: --concurrency; 4 with --fleet)",
    )
    parser.add_argument(
        "--fleet",
        type=int,
        default=0,
        help="instead of --site: the first N sites of bench/fleet.py",
    )
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--no-pyspy", action="store_true", help="no stage profile")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--redis-server", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--render", type=Path, default=None, help="print the tables of an earlier --json file"
    )
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text())
        print(render(saved, saved[0]["pages"]) if saved else "no rounds")
        return 0
    args.redis_server = args.redis_server or default_redis_server()
    args.pyspy = None if args.no_pyspy else shutil.which("py-spy")
    if not args.no_pyspy and not args.pyspy:
        say("note: py-spy not found (pip install py-spy): no stage profile")
    if args.fleet:
        from bench import fleet

        sites = fleet.find_sites(args.fleet)
        root, hosts = fleet.DOC, fleet.HOSTS
        pages, entries = sum(s.pages for s in sites), sum(s.entries for s in sites)
        paths = [
            f"{hosts[i % len(hosts)]}/{s.root.relative_to(root)}/" for i, s in enumerate(sites)
        ]
        title = f"{len(sites)} Debian doc sites on {len(hosts)} loopback hosts"
        args.host_concurrency = args.host_concurrency or 4  # bench/fleet.py's
    else:
        root, hosts, paths = args.site.resolve(), ("127.0.0.1",), ["127.0.0.1/"]
        pages, _fetch, entries, _expected = site_plan(root)
        title = str(root)
        # the spider's per-domain limit is its concurrency: the same politeness (bench/crawl.py)
        args.host_concurrency = args.host_concurrency or args.concurrency
    rounds: list[dict[str, Any]] = []
    keep = tempfile.mkdtemp(prefix="invcrawl-stages-kept-") if args.keep else None
    with tempfile.TemporaryDirectory(prefix="invcrawl-stages-") as scratch:
        tmp = keep or scratch
        bench = Bench(
            argparse.Namespace(redis_server=args.redis_server, wait_idle=0.0, keep=True,
                               concurrency=args.concurrency, timeout=args.timeout),
            Path(tmp),
        )  # fmt: skip
        if not args.fleet:
            warm_page_cache(root)
        with serve(root, hosts) as url:
            port = url.rsplit(":", 1)[1].strip("/")
            urls = [f"http://{path.replace('/', f':{port}/', 1)}" for path in paths]
            systems = [s for s in SYSTEMS if s in args.systems]
            for rep in range(args.rounds):
                shift = rep % len(systems)
                for system in systems[shift:] + systems[:shift]:
                    r = run_round(bench, system, rep, urls, args=args, pages=pages)
                    say(
                        f"  {SYSTEMS[system]} round {rep + 1}/{args.rounds}: {r['wall']:.2f} s, "
                        f"CPU {sum(r['cpu'].values()):.2f} s, load {r['load']:.1f}"
                    )
                    rounds.append(r)
    print(f"Stages: {title}, {pages} pages, {entries} entries; concurrency {args.concurrency}; "
          f"py-spy {'at ' + str(args.rate) + ' Hz' if args.pyspy else 'off'}")  # fmt: skip
    print(render(rounds, pages))
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=1, default=str))
    return 0 if all(r["code"] == 0 for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
