"""``python -m bench.crawl --quick``, ``bench.fleet`` (tiny) and ``bench.scale --quick`` run
end to end and print every row of their tables.

A smoke test of the harnesses only: it checks that each section and row is printed with
numbers, never what the timings are (they depend on the machine and its load); what it
does check is the exactness every system reports (no duplicate, no missing item), which
is behaviour, not timing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
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
    rf"^\s+\(d\) scrapy-redis, 1 process\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    rf"^\s+\(e\) scrapy-redis, 2 processes\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}",
    rf"^\s+\(a\) spider\s+{NUMBER}\s+\d+$",
    rf"^\s+\(b\) consumer\s+{NUMBER}\s+\d+$",
    rf"^\s+\(c\) consumer 1\s+{NUMBER}\s+\d+$",
    rf"^\s+\(c\) consumer 2\s+{NUMBER}\s+\d+$",
    rf"^\s+\(b\) redis\s+{NUMBER}\s+\d+$",
    rf"^\s+\(d\) crawl\s+{NUMBER}\s+\d+$",
    rf"^\s+\(d\) consumer\s+{NUMBER}\s+\d+$",
    rf"^\s+\(e\) consumer 2\s+{NUMBER}\s+\d+$",
    rf"^\s+\(e\) redis\s+{NUMBER}\s+\d+$",
    rf"^\s+b/a wall time\s+{NUMBER}",
    rf"^\s+c/a wall time\s+{NUMBER}",
    rf"^\s+b/c speed-up \(2 vs 1\)\s+{NUMBER}",
    rf"^\s+b/d wall time \(1 process\)\s+{NUMBER}",
    rf"^\s+c/e CPU \(2 processes\)\s+{NUMBER}",
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
            "-m",
            "bench.crawl",
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
    summary = json.loads((tmp_path / "bench.json").read_text())["e2e"]["summary"]
    assert sorted(summary) == ["a", "b", "c", "d", "e"]
    entries = int(re.search(r"(\d+) entries", proc.stdout)[1])  # type: ignore[index]
    # every system wrote one item per planned entry: none twice, none missing
    exact = {m: (s["items"], s["duplicates"], s["missing"]) for m, s in summary.items()}
    assert exact == dict.fromkeys("abcde", (entries, 0, 0)), exact


FLEET_ROWS = [
    r"^3 sites, \d+ pages, \d+ entries, on 4 hosts; .* median of 1 alternating round",
    rf"^\(a\) spider, one by one\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+1\.00x\s+\d+\s+0\s+0\s",
    rf"^invcrawl, 1 consumer\(s\)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x\s+\d+\s+0\s+0\s",
    rf"^scrapy-redis, 2 process\(es\)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}x\s+\d+\s+0\s+0\s",
    rf"^\s+scrapy-redis, 2 process\(es\)\s+consumer {NUMBER}, crawl {NUMBER}, redis {NUMBER}",
    r"^invcrawl / scrapy-redis \(same run\)",
    rf"^\s+1 process\(es\)\s+{NUMBER}\s+{NUMBER}$",
]


@pytest.mark.realdocs
@pytest.mark.timeout(600)
def test_tiny_fleet_bench_prints_every_row(tmp_path: Path) -> None:
    """``bench.fleet`` on 3 Debian doc sites, one round: the spider, invcrawl with 1
    consumer and the scrapy-redis peer with 1 and 2 processes."""
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
        pytest.skip("needs nginx")
    corpus = [f / "shared" / "corpus" / "debian-doc-packages.txt" for f in REPO.parents]
    if not any(path.is_file() for path in corpus):
        pytest.skip("needs ../shared/corpus/debian-doc-packages.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "bench.fleet", "--sites", "3", "--repeat", "1",
         "--consumers", "1", "--peer", "1,2", "--quick", "--json", str(tmp_path / "fleet.json")],
        check=False, capture_output=True, text=True, timeout=580, cwd=tmp_path,
        env=clean_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    missing = [row for row in FLEET_ROWS if not any(re.search(row, line) for line in lines)]
    assert not missing, f"rows missing {missing} from:\n{proc.stdout}"
    figures = json.loads((tmp_path / "fleet.json").read_text())
    entries = sum(e for _package, _pages, e, _url in figures["sites"])
    summary = figures["summary"]
    exact = {label: (s["items"], s["duplicates"], s["missing"]) for label, s in summary.items()}
    assert set(exact.values()) == {(entries, 0, 0)}, exact


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
    """``bench.scale --quick``: 20 crawls on one Redis and on a 3-master cluster."""
    if not (CPYTHON_DOCS / "objects.inv").is_file():
        pytest.skip("needs Debian's python3.11-doc package (/usr/share/doc/python3.11/html)")
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
        pytest.skip("needs nginx")
    if not (shutil.which("redis-cli") or Path("/usr/bin/redis-cli").exists()):
        pytest.skip("needs redis-cli (redis-tools) to create the cluster")
    proc = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--quick",
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


def test_exactness_counts_extra_and_missing_items(tmp_path: Path) -> None:
    """The exactness columns: an item written twice or not planned is counted beyond the
    plan (dup), a planned entry without an item is missing; URLs compare without origin."""
    from bench.harness import count_output, item_identity

    out = tmp_path / "out.jsonl"
    lines = [
        {"key": "py:function:a", "url": "http://127.0.0.1:1/lib.html#a", "status": "ok"},
        {"key": "py:function:a", "url": "http://127.0.0.1:1/lib.html#a", "status": "ok"},
        {"key": "py:function:b", "url": "http://127.0.0.1:1/lib.html#b", "status": "skipped"},
    ]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    expected = Counter(
        [
            item_identity("py:function:a", "http://bench.invalid/lib.html#a"),
            item_identity("py:function:c", "http://bench.invalid/lib.html#c"),
        ]
    )
    items, statuses, duplicates, missing = count_output(out, expected)
    assert (items, statuses, duplicates, missing) == (3, {"ok": 2, "skipped": 1}, 2, 1)
    assert count_output(out)[2:] == (-1, -1)  # no plan given: not checked
