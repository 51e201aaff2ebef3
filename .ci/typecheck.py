"""``python .ci/typecheck.py [MYPY ARGS]``: mypy --strict over invcrawl as it installs.

pyproject.toml maps the repository's top-level folders (common/, frontier/...) onto
``invcrawl.common``, ``invcrawl.frontier``...; an editable install resolves them with an
import hook that mypy does not run. So this builds the installed layout as a tree of
links under .cache/typecheck/ (read from the same [tool.setuptools.package-dir] table the
build uses) and checks it: module names are those users import, errors name the links'
paths. The settings are pyproject.toml's [tool.mypy]. tests/unit/test_typecheck.py runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / ".cache" / "typecheck"


def build_tree() -> Path:
    """The installed layout of every package, as links into the repository."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    top = TREE / "invcrawl"
    top.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, Path] = {}
    for entry in (ROOT / mapping["invcrawl"]).iterdir():
        if entry.name != "__pycache__":
            wanted[entry.name] = entry
    for package, folder in mapping.items():
        if package != "invcrawl":
            wanted[package.removeprefix("invcrawl.")] = ROOT / folder
    for link in top.iterdir():
        if link.name not in wanted or not link.is_symlink() or link.resolve() != wanted[link.name]:
            link.unlink()
    for name, target in wanted.items():
        link = top / name
        if not link.is_symlink():
            link.symlink_to(target)
    return top


def main(argv: list[str]) -> int:
    top = build_tree()
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    env = {**os.environ, "MYPY_FORCE_COLOR": os.environ.get("MYPY_FORCE_COLOR", "0")}
    return subprocess.run([*command, *argv, str(top)], cwd=TREE, env=env, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
