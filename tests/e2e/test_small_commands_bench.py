"""``python -m bench.small_commands --quick`` runs end to end and prints each of its
rows with numbers (never what they are: they depend on the machine and its load)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import REPO, clean_env

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SITE = Path("/usr/share/doc/sphinx-doc/html")
NUMBER = r"\d+\.\d+"
ROWS = [
    rf"^  search toctree\s+{NUMBER} s median\s+{NUMBER} s max\s+{NUMBER} s CPU$",
    rf"^  show toctree\s+{NUMBER} s median",
    rf"^  versions\s+{NUMBER} s median",
    r"^  AOF has an RDB preamble after the service stopped\s+True$",
    rf"^  versions, the embedded Redis starting\s+{NUMBER} s median",
    rf"^  load\s+{NUMBER} MB AOF of commands\s+{NUMBER} s$",
    rf"^  load\s+{NUMBER} MB AOF with an RDB preamble\s+{NUMBER} s$",
    r"^  dead-lettered pages before the redrive\s+1$",
    rf"^  one redriven page \(dlq redrive \+ crawl\)\s+{NUMBER} s$",
]


@pytest.mark.skipif(not (SITE / "objects.inv").is_file(), reason="sphinx-doc not installed")
def test_the_small_commands_bench_prints_every_row() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.small_commands", "--quick"],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=800,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for pattern in ROWS:
        assert re.search(pattern, done.stdout, re.MULTILINE), (pattern, done.stdout)
