"""``python -m invcrawl.selfcheck``: import every module of every package invcrawl
installs, so that an install missing a package (a Dockerfile that does not copy one, a
``packages`` pattern that leaves one out) fails where it is built, not in a consumer
container that exits on its first import. deploy/Dockerfile runs it after ``pip
install``; tests/e2e/test_deploy.py runs it on the build of the image's context."""

from __future__ import annotations

import importlib
import pkgutil
import sys

# The top-level packages of pyproject.toml's [tool.setuptools.packages.find] include.
PACKAGES = (
    "process",
    "common",
    "fetch",
    "frontier",
    "localredis",
    "producer",
    "consumer",
    "dashboard",
    "mcpserver",
    "invcrawl",
)


def modules() -> list[str]:
    """Every module of :data:`PACKAGES`, imported; raises on the first that fails."""
    names: list[str] = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        names.append(name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.endswith("__main__"):
                continue  # running it is not importing it
            importlib.import_module(info.name)
            names.append(info.name)
    return names


def main() -> int:
    try:
        count = len(modules())
    except ImportError as exc:
        print(f"invcrawl selfcheck: {exc}", file=sys.stderr)
        return 1
    print(f"invcrawl selfcheck: {count} modules import")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
