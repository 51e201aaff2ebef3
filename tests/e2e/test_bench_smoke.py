"""``bench/crawl.py --quick`` and ``bench/scale.py --quick`` run end to end and print every
row of their tables.

A smoke test of the harness only: it checks that each section and row is printed with
numbers, never what the numbers are (timings depend on the machine and its load).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import REPO, clean_env

pytestmark = pytest.mark.e2e

SMALL_SITE = Path("/usr/share/doc/sphinx-doc/html")
NUMBER = r"\d+(\.\d+)?"

ROWS = [
    r"^1\. End-to-end crawl: \d+ pages, \d+ entries",
    rf"^\s+\(a\) baseline spider\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    rf"^\s+\(b\) invcrawl, 1 consumer\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    rf"^\s+\(c\) invcrawl, 2 consumers\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    rf"^\s+\(a\) spider\s+{NUMBER}\s+\d+$",
    rf"^\s+\(b\) consumer\s+{NUMBER}\s+\d+$",
    rf"^\s+\(c\) consumer 1\s+{NUMBER}\s+\d+$",
    rf"^\s+\(c\) consumer 2\s+{NUMBER}\s+\d+$",
    rf"^\s+\(b\) redis\s+{NUMBER}\s+\d+$",
    rf"^\s+b/a wall time\s+{NUMBER}",
    rf"^\s+c/a wall time\s+{NUMBER}",
    rf"^\s+b/c speed-up \(2 vs 1\)\s+{NUMBER}",
    rf"^\s+\(b\) invcrawl, 1 consumer\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}$",
    r"^2\. extraction floor: \d+ pages",
    rf"^\s+floor: lxml parse \+ id index\s+{NUMBER}",
    rf"^\s+extract: extract_page\s+{NUMBER}",
    rf"^\s+ratio extract/floor {NUMBER}",
    r"^3\. Redis memory",
    rf"^\s+queued page task, used_memory delta\s+{NUMBER} B/task",
    rf"^\s+queued page task, MEMORY USAGE keys\s+{NUMBER} B/task",
    rf"^\s+dedup state per item, MEMORY USAGE\s+{NUMBER} B/item",
    rf"^\s+dedup state per item, used_memory\s+{NUMBER} B/item",
    rf"^\s+items stream per item, MEMORY USAGE\s+{NUMBER} B/item",
    r"^4\. Scale:",
    rf"^\s+1x\s+\d+\s+\d+\s+{NUMBER}\s+{NUMBER}\s+1\.00\s+\d+",
    rf"^\s+2x\s+\d+\s+\d+\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+\d+",
    r"^\s+2x/1x: 2x the pages in [\d.]+x the time",
]


@pytest.mark.realdocs
@pytest.mark.timeout(900)
def test_quick_bench_prints_every_row(tmp_path: Path) -> None:
    if not (SMALL_SITE / "objects.inv").is_file():
        pytest.skip("needs Debian's sphinx-doc package (/usr/share/doc/sphinx-doc/html)")
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
        pytest.skip("needs nginx")
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "crawl.py"),
            "--quick",
            "--site",
            str(SMALL_SITE),
            "--json",
            str(tmp_path / "bench.json"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=850,
        cwd=tmp_path,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    missing = [row for row in ROWS if not any(re.search(row, line) for line in lines)]
    assert not missing, f"rows missing {missing} from:\n{proc.stdout}"
    assert "warning:" not in proc.stderr, proc.stderr[-3000:]  # every crawl exited 0
    assert (tmp_path / "bench.json").is_file()


CPYTHON_DOCS = Path("/usr/share/doc/python3.11/html")

N = NUMBER
SCALE_ROWS = [
    r"^Scale: 20 crawls of .* \d+ pages, \d+ entries; nginx on 4 loopback hosts",
    # wall, pages/s, CPU-s/1k, CPUs, other, items, written, dead 0, peak MiB, B/item x3
    rf"^one redis, 4c, all\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}(\s+\d+){{2}}\s+0(\s+\d+){{4}}",
    rf"^cluster \(3\), 4c, all\s+{N}\s+{N}\s+{N}\s+{N}\s+{N}(\s+\d+){{2}}\s+0(\s+\d+){{4}}",
    rf"^\s+one redis, 4c, all\s+consumer {N}, crawl {N}, producer {N}, redis {N}",
    rf"^\s+cluster \(3\), 4c, all\s+consumer {N}, .*redis1 {N}, redis2 {N}, redis3 {N}",
    r"^\s+one redis, 4c, all\s+all \d+; \w+ [\d.]+ \(\d+ us\)",
    r"^\s+cluster \(3\), 4c, all\s+shard 1: \d+ crawls, \d+ items, peak \d+, after \d+ "
    r"\(\d+ B/item\).*shard 3:",
    rf"^\s+cluster / one redis pages/s, 4c, all: {N} \(target >= 0\.90\)",
    r"^\s+Redis B/item after, all: \d+-\d+",
]


@pytest.mark.realdocs
@pytest.mark.timeout(300)
def test_quick_scale_bench_prints_every_row(tmp_path: Path) -> None:
    """``bench/scale.py --quick``: 20 crawls on one Redis and on a 3-master cluster."""
    if not (CPYTHON_DOCS / "objects.inv").is_file():
        pytest.skip("needs Debian's python3.11-doc package (/usr/share/doc/python3.11/html)")
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
        pytest.skip("needs nginx")
    if not (shutil.which("redis-cli") or Path("/usr/bin/redis-cli").exists()):
        pytest.skip("needs redis-cli (redis-tools) to create the cluster")
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "scale.py"), "--quick",
         "--json", str(tmp_path / "scale.json")],
        check=False, capture_output=True, text=True, timeout=280, cwd=tmp_path,
        env=clean_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    missing = [row for row in SCALE_ROWS if not any(re.search(row, line) for line in lines)]
    assert not missing, f"rows missing {missing} from:\n{proc.stdout}"
    assert "warning:" not in proc.stderr, proc.stderr[-3000:]
    figures = json.loads((tmp_path / "scale.json").read_text())
    results = figures["results"]
    # every planned entry became exactly one item on both backends (no loss, no duplicate)
    entries = sum(e for _url, _pages, e in figures["crawls"])
    assert [(r["items"], r["written"]) for r in results] == [(entries, entries)] * len(results)
