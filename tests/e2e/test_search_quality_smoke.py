"""``python -m bench.search_quality`` runs end to end on a fixture site and prints its
tables, then reuses its crawl for ``--json``.

A smoke test of the harness only (as tests/e2e/test_bench_smoke.py): the Fixlib site
of ``tests/support/agentsite.py`` crawled into the bench's own data dir, four questions
of our set's form (so that the held-out split exists), every row and column printed
with numbers, never what the numbers are: quality is the bench's to report, on real
sites, not a test's to assert."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.agentsite import PROJECT, write_site
from support.cli import REPO, clean_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

NUMBER = r"\d+\.\d+"
F = "py:function:fixlib."
QUESTIONS = [
    {"q": "open a connection to a server", "project": PROJECT, "answers": [F + "connect"]},
    {"q": "turn JSON text into objects", "project": PROJECT, "answers": [F + "parse_json"]},
    {"q": "keep connections open", "project": PROJECT, "answers": ["py:class:fixlib.Session"]},
    {"q": "connections shared by callers", "project": PROJECT, "answers": ["py:class:fixlib.Pool"]},
]


def bench(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.search_quality", "--site", str(tmp / "fixlib"),
         "--data-dir", str(tmp / "bench"), "--questions", str(tmp / "q.json"),
         "--sets", "own", *extra],
        check=False, capture_output=True, text=True, timeout=280, cwd=REPO, env=clean_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def test_search_quality_bench_prints_its_tables(tmp_path: Path) -> None:
    write_site(tmp_path / "fixlib", "2.0")
    (tmp_path / "q.json").write_text(json.dumps({"questions": QUESTIONS}))
    first = bench(tmp_path, "--misses", str(tmp_path / "misses.md"))
    assert "crawling 1 site(s)" in first.stderr
    lines = first.stdout.splitlines()
    assert re.search(r"^Search quality: \d+ items of 1 projects \(Fixlib\)", first.stdout, re.M)
    for split in ("all", "tune", "held-out"):
        for scope in ("within", "across"):
            row = rf"^\| own \| {split} \| {scope} \| \d+ " + rf"\| {NUMBER} " * 6 + r"\| "
            assert any(re.search(row, line) for line in lines), (row, first.stdout)
    assert any(re.search(rf"^\| {PROJECT} \| 4 " + rf"\| {NUMBER} " * 4 + r"\|$", x) for x in lines)
    for tool in ("search_symbols", "get_symbol"):
        assert any(re.search(rf"^\| {tool} \| 4 \| \d+ \| \d+ \| \d+ \|$", x) for x in lines)
    assert "## own, within: " in (tmp_path / "misses.md").read_text()
    assert re.search(
        r"^- own, within: MRR@10 >= 0.60: \d\.\d{3} \((met|not met)", first.stdout, re.M
    )

    again = bench(
        tmp_path, "--json", str(tmp_path / "q.out.json"), "--no-tokens"
    )  # the crawl is reused, not redone
    assert "crawling" not in again.stderr
    assert "| own | held-out | across |" in again.stdout
    result = json.loads((tmp_path / "q.out.json").read_text())
    assert result["projects"] == [PROJECT] and result["tokens"] == []
    assert {(s["split"], s["scope"], s["system"]) for s in result["scores"]} == {
        (split, scope, system)
        for split in ("all", "tune", "held-out")
        for scope in ("within", "across")
        for system in ("invcrawl", "fts5")
    }
