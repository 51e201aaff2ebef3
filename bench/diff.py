"""Typed API diff of two large crawls (issue 28): the CPython 3.11 docs from Debian's
python3.11-doc against an edited copy, both crawled from local directories by
``invcrawl crawl`` into a private redis-server, then compared by ``invcrawl diff``.

The copy's edits (each a kind the diff must report):

* a default changed: the first ``None`` default of every 10th page with one → ``0``;
* keyword-only: a bare ``*`` put first in the parameter list of the first function of
  every 20th page with one (its parameters become keyword-only: breaking);
* a docstring changed: the first paragraph of the first function of every 10th page
  (another tenth) gets " (edited)";
* removed: every 300th ``py:function`` entry left out of ``objects.inv``.

Reported: both crawls' items, the diff's counts per kind, and the time of
``invcrawl diff OLD NEW --json`` (process start to exit, median of 3 runs; and its CPU
time, which a loaded machine does not inflate) with the in-process split: reading both
crawls' latest items from Redis, and diffing them.

    python -m bench.diff [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

from invcrawl.common.apidiff import diff_all
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import latest_items
from invcrawl.localredis.server import RedisServer

REPO = Path(__file__).resolve().parents[1]

SITE = Path("/usr/share/doc/python3.11/html")
INVCRAWL = [sys.executable, "-m", "invcrawl"]
_DEFAULT_NONE = re.compile(r'(<span class="default_value"><span class="pre">)None(</span></span>)')
_FIRST_PARAM = re.compile(
    r'(<dt class="sig sig-object py"[^>]*>.*?<span class="sig-paren">\(</span>)(<em)', re.S
)
_FIRST_BODY = re.compile(r'(<dl class="py function">\s*<dt.*?</dt>\s*<dd><p>)', re.S)
_STAR = '<em class="sig-param"><span class="o"><span class="pre">*</span></span></em>, '


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    out["PYTHONPATH"] = str(REPO)
    return out


def edit_copy(copy: Path) -> Counter[str]:
    """Apply the edits of the module docstring; returns how many of each."""
    done: Counter[str] = Counter()
    pages = sorted(p for p in copy.rglob("*.html") if "/library/" in str(p))
    with_default = [p for p in pages if _DEFAULT_NONE.search(p.read_text(errors="replace"))]
    for page in with_default[::10]:
        text = page.read_text()
        page.write_text(_DEFAULT_NONE.sub(r"\g<1>0\g<2>", text, count=1))
        done["defaults"] += 1
    with_function = [
        p for p in pages if '<dl class="py function">' in p.read_text(errors="replace")
    ]
    for page in with_function[::20]:
        text = page.read_text()
        edited = _FIRST_PARAM.sub(lambda m: m.group(1) + _STAR + m.group(2), text, count=1)
        if edited != text:
            page.write_text(edited)
            done["keyword_only"] += 1
    for page in with_function[5::10]:
        text = page.read_text()
        edited = _FIRST_BODY.sub(lambda m: m.group(1) + "(edited) ", text, count=1)
        if edited != text:
            page.write_text(edited)
            done["docstrings"] += 1
    inventory = copy / "objects.inv"
    raw = inventory.read_bytes()
    head_end = 0
    for _ in range(4):
        head_end = raw.index(b"\n", head_end) + 1
    lines = zlib.decompress(raw[head_end:]).decode().splitlines(keepends=True)
    functions = [i for i, line in enumerate(lines) if " py:function " in line]
    dropped = set(functions[::300])
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    inventory.write_bytes(raw[:head_end] + zlib.compress("".join(kept).encode(), 9))
    done["removed"] = len(dropped)
    return done


def crawl(server: RedisServer, out: Path, *sites: str) -> None:
    argv = [*INVCRAWL, "crawl", *sites, "--redis", server.url, "--out-dir", str(out),
            "--consumers", "2", "--progress", "none"]  # fmt: skip
    subprocess.run(argv, check=True, env=env(), stdout=subprocess.DEVNULL)


async def in_process(url: str, old: str, new: str) -> tuple[float, float, int, list]:
    frontier = Frontier(connect(url))
    try:
        started = time.perf_counter()
        a, b = await asyncio.gather(
            latest_items(frontier.crawl(old)), latest_items(frontier.crawl(new))
        )
        read = time.perf_counter() - started
        started = time.perf_counter()
        diffs = diff_all(a, b)
        return read, time.perf_counter() - started, len(a) + len(b), diffs
    finally:
        await frontier.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not (SITE / "objects.inv").exists():
        raise SystemExit(f"{SITE} is missing: apt-get install python3.11-doc")
    work = Path(tempfile.mkdtemp(prefix="invcrawl-diff-"))
    try:
        copy = work / "edited" / "html"
        shutil.copytree(SITE, copy)
        edits = edit_copy(copy)
        say(f"edited copy: {dict(edits)}")
        with RedisServer(work / "redis") as server:
            started = time.monotonic()
            crawl(server, work / "out", str(SITE), str(copy))
            say(f"both crawled in {time.monotonic() - started:.1f}s")
            old, new = "python3.11-html", "edited-html"
            walls, cpus = [], []
            for _ in range(args.runs):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                result = subprocess.run(
                    [*INVCRAWL, "diff", old, new, "--json", "--redis", server.url],
                    check=True, env=env(), capture_output=True, text=True,
                )  # fmt: skip
                walls.append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            lines = [json.loads(x) for x in result.stdout.splitlines()]
            read, compute, items, _ = asyncio.run(in_process(server.url, old, new))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    kinds = Counter(c["kind"] for line in lines for c in line["changes"])
    kinds.update(line["change"] for line in lines if line["change"] != "changed")
    print(f"items compared: {items} (two crawls)")
    print(f"symbols that differ: {len(lines)}, breaking: {sum(x['breaking'] for x in lines)}")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind:<24} {count}")
    print(
        f"invcrawl diff --json: {statistics.median(walls):.2f}s (median of {len(walls)}; "
        f"runs {', '.join(f'{w:.2f}' for w in walls)}), CPU {statistics.median(cpus):.2f}s "
        f"(the process itself, whatever the machine's load); in process: reading both "
        f"crawls {read:.2f}s, diffing {compute:.2f}s"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
