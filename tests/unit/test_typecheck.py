"""The tooling the README's development section names holds on every commit: mypy
--strict over invcrawl as it installs (``.ci/typecheck.py``), and ruff's lint and format
check over the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(600)
def test_mypy_strict_passes_on_the_installed_layout() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "typecheck.py")],
        capture_output=True, text=True, timeout=590, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


@pytest.mark.parametrize("check", [["check", "."], ["format", "--check", "."]])
def test_ruff_passes(check: list[str]) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is a test dependency"
    proc = subprocess.run(
        [ruff, *check], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
