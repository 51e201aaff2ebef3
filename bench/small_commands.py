"""Small commands end to end (issue 47.5): what a user waits for, process start included.

1. warm: ``search``, ``show`` and ``versions`` against a running embedded Redis (kept up
   by ``invcrawl redis``), each run ``--repeat`` times, median and max;
2. cold: the embedded Redis of a data dir padded to ``--index-mb`` of data (filler
   hashes beside a real crawl), started by ``invcrawl versions`` once nothing runs: with
   the AOF as the service leaves it (compacted, localredis/aof.py), and the load itself
   of the same data as replayed commands against an RDB preamble (a plain redis-server,
   time to its first PONG);
3. redrive: one page of a finished crawl dead-lettered (a folder in its file's place,
   one try), put back, ``dlq redrive --all`` then ``crawl SITE`` (which serves it).

Figures, not asserts (tests/e2e/test_bench_smoke.py only runs ``--quick``). Targets of
the issue: warm <= 0.5 s, cold <= 1.5 s with 100 MB, redrive <= 3 s.

    python -m bench.small_commands [--site DIR] [--index-mb 100] [--repeat 5]
    python -m bench.small_commands --quick      # smoke run: 8 MB, 2 repeats
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from invcrawl.localredis import aof
from invcrawl.localredis.server import RedisServer

SITE = Path("/usr/share/doc/sphinx-doc/html")
# Filler records shaped like the search index's (small hashes of short fields, listpacks
# in memory and in an RDB image): FILLER_FIELDS fields of FILLER_VALUE bytes, one HSET each
FILLER_FIELDS, FILLER_VALUE = 8, 40


def invcrawl(*args: str, check: bool = True) -> float:
    """Run ``invcrawl ARGS`` as a user does (the installed entry point); its wall time."""
    argv = [str(Path(sys.executable).parent / "invcrawl"), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its .pyc files
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if check and done.returncode != 0:
        raise SystemExit(f"invcrawl {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    return took


CPU: list[float] = []  # CPU seconds (user + system) of each invcrawl run, in order


def row(name: str, times: list[float]) -> None:
    """Wall time (what the user waits for) and the command's own CPU: on a loaded machine
    the first grows with the load, the second hardly."""
    cpu = statistics.median(CPU[-len(times) :])
    print(
        f"  {name:<44} {statistics.median(times):7.3f} s median {max(times):7.3f} s max"
        f" {cpu:7.3f} s CPU"
    )


def fill(client: redis.Redis, megabytes: int) -> None:
    """Filler hashes of about ``megabytes`` of data, one command per record."""
    records = megabytes * 1024 * 1024 // (FILLER_FIELDS * (FILLER_VALUE + 8) + 64)
    pipe = client.pipeline(transaction=False)
    for n in range(records):
        # (hex: as incompressible as real text, nearly)
        fields = {f"f{i}": secrets.token_hex(FILLER_VALUE // 2) for i in range(FILLER_FIELDS)}
        pipe.hset(f"bench:filler:{n}", mapping=fields)
        if n % 2000 == 1999:
            pipe.execute()
    pipe.execute()


def embedded_client(data: Path) -> redis.Redis:
    port = int((data / "port").read_text())
    return redis.Redis(port=port, password=(data / "password").read_text().strip())


def wait_gone(data: Path, timeout: float = 120) -> None:
    """Until the data dir's service has stopped (its lock free)."""

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(data / "service.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.1)
    raise SystemExit("the embedded Redis did not stop")


def load_time(folder: Path, preamble: bool) -> tuple[float, int]:
    """Start a plain redis-server on ``folder``'s AOF: seconds to its first PONG, and the
    AOF's size."""
    server = RedisServer(folder, fsync="everysec")
    server.extra = ["--aof-use-rdb-preamble", "yes" if preamble else "no"]
    started = time.perf_counter()
    server.start(timeout=300)
    took = time.perf_counter() - started
    server.stop()
    size = sum(p.stat().st_size for p in folder.rglob("appendonly.aof*") if p.is_file())
    return took, size


def replay_against_preamble(megabytes: int, work: Path) -> None:
    folder = work / "plain"
    server = RedisServer(folder, fsync="everysec", extra=["--aof-use-rdb-preamble", "no"])
    server.start()
    client = redis.Redis(port=server.port)
    fill(client, megabytes)
    client.close()
    server.stop()
    commands, size = load_time(folder, preamble=False)
    print(f"  load {size / 1e6:6.1f} MB AOF of commands            {commands:7.3f} s")
    server = RedisServer(folder, fsync="everysec", extra=["--aof-use-rdb-preamble", "yes"])
    server.start(timeout=300)
    client = redis.Redis(port=server.port)
    client.bgrewriteaof()
    while client.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)
    client.close()
    server.stop()
    rdb, size = load_time(folder, preamble=True)
    print(f"  load {size / 1e6:6.1f} MB AOF with an RDB preamble      {rdb:7.3f} s")
    print(f"  replay / preamble                                  {commands / rdb:7.2f}")


def redrive(site: Path, data: Path, work: Path) -> None:
    copy = work / "redrive-site"
    shutil.copytree(site, copy)
    # a page the crawl fetched (one of the first crawl's items' pages), in the copy
    with open(work / "site.jsonl", encoding="utf-8") as items:
        fetched = next(i["page_url"] for i in map(json.loads, items) if i["status"] == "ok")
    page = copy / Path(fetched.removeprefix("file://")).relative_to(site.resolve())
    content = page.read_bytes()
    page.unlink()
    page.mkdir()  # unreadable, even by root: an OSError, retried, then dead-lettered
    common = ["--data-dir", str(data), "--progress", "none", "-q"]
    out = ["-o", str(work / "redrive.jsonl")]
    invcrawl("crawl", str(copy), *common, *out, "--max-tries", "1", check=False)
    page.rmdir()
    page.write_bytes(content)
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "invcrawl"), "dlq", "list", "--json",
         "--data-dir", str(data)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    dead = listed.stdout.count('"reason"')
    print(f"  dead-lettered pages before the redrive             {dead:7d}")
    started = time.perf_counter()
    invcrawl("dlq", "redrive", "--all", "--data-dir", str(data), "-q", check=False)
    invcrawl("crawl", str(copy), *common, *out, check=False)
    print(
        f"  one redriven page (dlq redrive + crawl)           {time.perf_counter() - started:7.3f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--index-mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="8 MB, 2 repeats")
    args = parser.parse_args(argv)
    megabytes, repeat = (8, 2) if args.quick else (args.index_mb, args.repeat)
    if not (args.site / "objects.inv").is_file():
        raise SystemExit(f"{args.site}: no objects.inv (install sphinx-doc, or give --site)")
    with tempfile.TemporaryDirectory(prefix="small-commands-") as tmp:
        work = Path(tmp)
        data = work / "data"
        print(f"small commands: {args.site}, {megabytes} MB index, {repeat} runs each")
        invcrawl("crawl", str(args.site), "--data-dir", str(data), "--progress", "none",
                 "-q", "-o", str(work / "site.jsonl"))  # fmt: skip
        keeper = subprocess.Popen(
            [str(Path(sys.executable).parent / "invcrawl"), "redis", "--data-dir", str(data)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while not (data / "port").exists():
                time.sleep(0.05)
            time.sleep(0.5)
            print("1. warm (embedded Redis running)")
            reading = ["--data-dir", str(data)]
            for name, words in (
                ("search toctree", ["search", "toctree"]),
                ("show toctree", ["show", "toctree"]),
                ("versions", ["versions"]),
            ):
                row(name, [invcrawl(*words, *reading, check=False) for _ in range(repeat)])
            client = embedded_client(data)
            fill(client, megabytes)
            used = int(client.info("memory")["used_memory"])
            client.close()
        finally:
            keeper.send_signal(signal.SIGTERM)  # (SIGINT: ignored under a background shell)
            keeper.wait(60)
        wait_gone(data)
        print(f"2. cold ({used / 1e6:.0f} MB in Redis)")
        print(f"  AOF has an RDB preamble after the service stopped  {aof.has_preamble(data)!s:>7}")
        cold = []
        for _ in range(repeat):
            cold.append(invcrawl("versions", "--data-dir", str(data), "-q"))
            wait_gone(data)
        row("versions, the embedded Redis starting", cold)
        replay_against_preamble(megabytes, work)
        print("3. redrive")
        redrive(args.site, data, work)
        wait_gone(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
