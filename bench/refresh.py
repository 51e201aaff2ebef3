"""Refresh cost (issue "Keep it fresh"): the CPython 3.11 docs from Debian's
python3.11-doc, copied to a scratch directory and served by nginx (``gzip_static on``),
crawled once by ``invcrawl crawl``, then refreshed three times in the same run:

1. the site unchanged (every page revalidated: nginx answers 304 to its ETag);
2. 5 pages touched: 4 only get a new mtime (a rebuild that rewrote identical files: nginx
   sends a new ETag, the body hash settles them) and 1 gets one function's text edited;
3. ``--refresh --force`` (every page fetched and extracted again, for scale);

then, with consumers that stay up (the compose deployment): an unchanged refresh started
by a one-shot ``produce --refresh``, and three rounds of a long-running
``produce --every`` (no process starts for a round), each timed by the crawl's own
record and laid out on nginx's access log.

Per run: wall time, the share of the first crawl's wall time, pages revalidated (304 or
same body) and extracted, the change events appended (``invcrawl changes``), and what
Redis holds for refresh per page (``invcrawl:{C}:pages`` and ``invcrawl:{C}:inventory``
via MEMORY USAGE). Figures, not asserts; results in docs/performance.md.

    python -m bench.refresh [--consumers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.nginx import serve
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer

REPO = Path(__file__).resolve().parents[1]

SITE = Path("/usr/share/doc/python3.11/html")
CRAWL = "cpython-refresh"
EDITED = "library/json.html"  # one function's text changes here
TOUCHED = ("library/os.path.html", "library/re.html", "library/string.html", "tutorial/index.html")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


INVCRAWL = [sys.executable, "-m", "invcrawl"]


def clean_env() -> dict[str, str]:
    """This checkout's invcrawl, and no INVCRAWL_* setting of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    env["PYTHONPATH"] = str(REPO)
    return env


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*INVCRAWL, *argv],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def crawl(url: str, redis_url: str, work: Path, consumers: int, *extra: str) -> tuple[float, str]:
    started = time.monotonic()
    argv = ["crawl", url, "--redis", redis_url, "--crawl-id", CRAWL, "--consumers", str(consumers)]
    done = run([*argv, "-o", str(work / "out.jsonl"), "--progress", "none", *extra], work)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"crawl failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, done.stderr


def events_since(redis_url: str, work: Path, cursor: str) -> tuple[dict[str, int], str]:
    done = run(["changes", "--redis", redis_url, "--crawl-id", CRAWL, "--since", cursor], work)
    counts: dict[str, int] = {}
    keys = []
    for line in done.stdout.splitlines():
        event = json.loads(line)
        counts[event["event"]] = counts.get(event["event"], 0) + 1
        keys.append(event["key"])
    counts["keys"] = keys  # type: ignore[assignment]
    return counts, done.stderr.rsplit("--since ", 1)[1].strip()


def pages_line(stderr: str) -> str:
    match = re.search(r"pages unchanged (\d+), fetched (\d+)", stderr)
    return f"{match[1]} unchanged, {match[2]} extracted" if match else "-"


def edit_site(root: Path) -> None:
    now = time.time() + 5
    for rel in TOUCHED:
        os.utime(root / rel, (now, now))
    page = root / EDITED
    text = page.read_text(encoding="utf-8")
    edited = text.replace(
        "Serialize <em>obj</em> as a JSON formatted stream",
        "Serialize <em>obj</em> as a JSON-formatted stream",
        1,
    )
    if edited == text:
        raise SystemExit(f"the edit did not apply to {EDITED}")
    page.write_text(edited, encoding="utf-8")
    os.utime(page, (now, now))


@contextlib.contextmanager
def running(argvs: list[list[str]], work: Path) -> Iterator[None]:
    """invcrawl processes that stay up (``consume``, ``produce --every``) while the block
    runs; SIGTERM (a graceful stop) when it ends."""
    procs = [
        subprocess.Popen([*INVCRAWL, *argv], cwd=work, env=clean_env(), stderr=subprocess.DEVNULL)
        for argv in argvs
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()


def refresh_with_running_consumers(
    url: str, redis_url: str, work: Path, consumers: int, access_log: Path
) -> tuple[float, str]:
    """A long-running deployment (compose): consumers serve every open crawl all along; a
    refresh is only `produce --refresh` and the consumers' work, timed until finished.
    Also where that time goes, from nginx's access log: the producer's start-up until
    its objects.inv request, planning and enqueueing until the first page request, and
    the revalidation of the pages."""
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        with running([["consume", "--redis", redis_url]] * consumers, work):
            time.sleep(3)  # started and idle
            started_at = time.time()
            started = time.monotonic()
            argv = ["produce", url, "--redis", redis_url, "--crawl-id", CRAWL, "--refresh"]
            done = run(argv, work)
            if done.returncode != 0:
                raise SystemExit(f"produce --refresh failed:\n{done.stderr[-2000:]}")
            while client.hget(CrawlKeys(CRAWL).meta, "state") != "finished":
                time.sleep(0.02)
            wall = time.monotonic() - started
            return wall, round_phases(access_log, started_at, started_at + wall)
    finally:
        client.close()


def refresh_in_long_running_processes(
    url: str, redis_url: str, work: Path, consumers: int, access_log: Path, *, rounds: int = 3
) -> list[tuple[float, str]]:
    """The deployment that keeps sites fresh (compose with INVCRAWL_EVERY): consumers
    and `produce --every` stay up, so a refresh round starts no process at all. Each
    round's wall time is the crawl's own record, by the server's clock: from the
    round's start (just before the conditional objects.inv request) to the crawl
    finished again."""
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    meta = CrawlKeys(CRAWL).meta
    first = int(client.hget(meta, "round") or 0)
    producer = ["produce", url, "--redis", redis_url, "--crawl-id", CRAWL, "--every", "3s"]
    walls = []
    try:
        with running([*[["consume", "--redis", redis_url]] * consumers, producer], work):
            for number in range(first + 1, first + rounds + 1):
                deadline = time.monotonic() + 60
                while True:
                    state, done, began, ended = client.hmget(
                        meta, ["state", "round", "refresh_started_at", "finished_at"]
                    )
                    if state == "finished" and int(done or 0) >= number:
                        start, end = int(began) / 1000, int(ended) / 1000
                        walls.append((end - start, round_phases(access_log, start, end)))
                        break
                    if time.monotonic() > deadline:
                        raise SystemExit(f"refresh round {number} did not finish")
                    time.sleep(0.05)
        return walls
    finally:
        client.close()


def round_phases(access_log: Path, start: float, end: float) -> str:
    """When a round's requests ended (nginx's clock, the machine's, as Redis's): the
    objects.inv request, the first page, the last page."""
    ends = [
        float(line.split()[0]) - start
        for line in access_log.read_text().splitlines()
        if start <= float(line.split()[0]) <= end + 0.01
    ]
    if len(ends) < 2:
        return "no requests logged"
    return (
        f"objects.inv at {ends[0]:.2f} s, first page at {ends[1]:.2f} s, "
        f"{len(ends) - 1} pages by {ends[-1]:.2f} s, finished at {end - start:.2f} s"
    )


def memory_per_page(redis_url: str) -> tuple[float, float, int]:
    import redis

    client = redis.Redis.from_url(redis_url)
    k = CrawlKeys(CRAWL)
    pages = int(client.hlen(k.pages))
    validators = int(client.memory_usage(k.pages, samples=0) or 0)
    inventory = int(client.memory_usage(k.inventory, samples=0) or 0)
    client.close()
    return validators / max(pages, 1), inventory / max(pages, 1), pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consumers", type=int, default=2)
    args = parser.parse_args(argv)
    if not (SITE / "objects.inv").exists():
        raise SystemExit(f"needs Debian's python3.11-doc ({SITE})")
    work = Path(tempfile.mkdtemp(prefix="invcrawl-refresh-"))
    work.chmod(0o755)  # nginx's workers read the copy
    root = work / "site"
    shutil.copytree(SITE, root, symlinks=False)
    for rel in (EDITED, *TOUCHED):  # served plain, so that the edit is what nginx sends
        (root / (rel + ".gz")).unlink(missing_ok=True)
    rows = []
    access_log = work / "access.log"
    with RedisServer(work / "redis") as server, serve(root, access_log=access_log) as url:
        say("first crawl ...")
        first, _ = crawl(url, server.url, work, args.consumers)
        _, cursor = events_since(server.url, work, "0")
        rows.append(("first crawl", first, "-", "-"))
        say("refresh, unchanged ...")
        wall, err = crawl(url, server.url, work, args.consumers, "--refresh")
        events, cursor = events_since(server.url, work, cursor)
        rows.append(("refresh, unchanged", wall, pages_line(err), events))
        edit_site(root)
        say("refresh, 5 pages touched ...")
        wall, err = crawl(url, server.url, work, args.consumers, "--refresh")
        events, cursor = events_since(server.url, work, cursor)
        rows.append(("refresh, 5 pages touched", wall, pages_line(err), events))
        say("refresh --force ...")
        wall, err = crawl(url, server.url, work, args.consumers, "--refresh", "--force")
        forced, cursor = events_since(server.url, work, cursor)
        rows.append(("refresh --force", wall, pages_line(err), forced))
        say("refresh, unchanged, consumers already running ...")
        wall, phases = refresh_with_running_consumers(
            url, server.url, work, args.consumers, access_log
        )
        events, cursor = events_since(server.url, work, cursor)
        rows.append(("refresh, consumers running", wall, "(produce --refresh)", events))
        say("refresh, unchanged, producer and consumers long-running (produce --every) ...")
        walls = refresh_in_long_running_processes(url, server.url, work, args.consumers, access_log)
        events, cursor = events_since(server.url, work, cursor)
        for number, (wall, _) in enumerate(walls, 1):
            rows.append(
                (f"refresh, produce --every #{number}", wall, "(in running processes)", events)
            )
        validators, inventory, pages = memory_per_page(server.url)
    print(f"CPython 3.11 docs over nginx, {args.consumers} consumers, {os.cpu_count()} CPUs")
    print(f"{'run':<26} {'wall s':>7} {'of first':>9}  {'pages':<32} events")
    for label, wall, pages_text, ev in rows:
        share = f"{wall / first:.0%}"
        text = (
            "-" if ev == "-" else ", ".join(f"{k} {v}" for k, v in ev.items() if k != "keys") or "0"
        )
        print(f"{label:<26} {wall:>7.2f} {share:>9}  {pages_text:<32} {text}")
    print(f"refresh with consumers running: {phases}")
    for number, (_, round_timeline) in enumerate(walls, 1):
        print(f"produce --every round #{number}: {round_timeline}")
    touched = rows[2][3]
    if isinstance(touched, dict):
        print(f"events of the 5-page refresh: {sorted(touched.get('keys', []))}")
    print(
        f"Redis for refresh: {validators:.0f} B/page of validators ({pages} pages), "
        f"{inventory:.0f} B/page for the stored objects.inv"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
