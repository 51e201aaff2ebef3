"""The install layout pyproject.toml declares: which repository folder each of
invcrawl's packages is built from (``[tool.setuptools.package-dir]``), read once for the
tests that check the layout (boundaries, the architecture page, the package list)."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]

# invcrawl.common -> "common", ..., and "invcrawl" -> "invcrawl" (the CLI's own folder)
PACKAGE_DIRS: dict[str, str] = dict(_SETUPTOOLS["package-dir"])
# The packages the wheel holds, as pyproject.toml lists them.
PACKAGES: list[str] = list(_SETUPTOOLS["packages"])
# The repository folders of the runtime packages: "common", "frontier", ..., "invcrawl".
FOLDERS: list[str] = sorted(PACKAGE_DIRS.values())
# folder -> its installed package name ("common" -> "invcrawl.common").
INSTALLED: dict[str, str] = {folder: package for package, folder in PACKAGE_DIRS.items()}


def folder_of(module: str) -> str | None:
    """The repository folder a dotted module name of invcrawl lives in
    (``invcrawl.common.items`` -> ``common``, ``invcrawl.cli`` -> ``invcrawl``), or None
    when it is not invcrawl's."""
    parts = module.split(".")
    if parts[0] != "invcrawl":
        return None
    if len(parts) > 1 and f"invcrawl.{parts[1]}" in PACKAGE_DIRS:
        return PACKAGE_DIRS[f"invcrawl.{parts[1]}"]
    return "invcrawl"


def module_of(path: Path) -> str:
    """The installed dotted name of a source file (``common/items.py`` ->
    ``invcrawl.common.items``)."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([INSTALLED[parts[0]], *parts[1:]])
