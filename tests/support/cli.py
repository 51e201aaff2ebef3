"""Run the ``invcrawl`` CLI as a user would: a subprocess with its own working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.startswith("invcrawl: error:")]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without INVCRAWL_* variables of the developer's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def run(
    argv: Sequence[str], *, cwd: Path, timeout: float = 120, env: Mapping[str, str] | None = None
) -> Result:
    """Run ``argv`` to completion, its output captured (by default without INVCRAWL_*)."""
    proc = subprocess.run(
        argv,
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or clean_env(),
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def invcrawl(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> Result:
    return run([sys.executable, "-m", "invcrawl", *args], cwd=cwd, timeout=timeout, env=env)


def support_json(module: str, *args: str | int, timeout: float = 300) -> dict[str, Any]:
    """What ``python -m support.<module> ARGS`` prints as JSON, run in a child of its own
    from tests/ (its peak memory is its own); a failure shows its stderr's end."""
    proc = subprocess.run(
        [sys.executable, "-m", f"support.{module}", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO / "tests",
        env=clean_env(),
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)  # type: ignore[no-any-return]
