"""``python -m invcrawl.selfcheck``: import every module of every package invcrawl
installs, so that an install missing a package (a Dockerfile that does not copy one, a
``packages`` pattern that leaves one out) fails where it is built, not in a consumer
container that exits on its first import. deploy/Dockerfile runs it after ``pip
install``; tests/e2e/test_deploy.py runs it on the build of the image's context."""

from __future__ import annotations

import importlib
import pkgutil
import sys

# The packages pyproject.toml installs, all under ``invcrawl``: the CLI's own folder and
# the subpackages its [tool.setuptools.package-dir] maps from the repository's top-level
# folders (in an editable install they are not below ``invcrawl/``, so each is walked).
PACKAGES = (
    "invcrawl",
    "invcrawl.process",
    "invcrawl.common",
    "invcrawl.fetch",
    "invcrawl.frontier",
    "invcrawl.localredis",
    "invcrawl.producer",
    "invcrawl.consumer",
    "invcrawl.dashboard",
    "invcrawl.mcpserver",
)


def modules() -> list[str]:
    """Every module of :data:`PACKAGES`, imported; raises on the first that fails."""
    names: dict[str, None] = {}
    for name in PACKAGES:
        package = importlib.import_module(name)
        names[name] = None
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.endswith("__main__"):
                continue  # running it is not importing it
            importlib.import_module(info.name)
            names[info.name] = None
    return list(names)


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
