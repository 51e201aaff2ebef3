"""docs/architecture.md names every module of every runtime package (issue 37: 18 had
drifted out of it). A module is named by its path without ``.py`` anywhere on the page
(``frontier/claims``, ``common/extract/page``), or, relative to its package, in
backticks in that package's row of the Packages table (`` `claims` ``,
`` `apidiff/diff` ``, or `` `commands/` `` and `` `reading` `` in one row); a package by its
folder (`` `extract/` ``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support.layout import FOLDERS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# The runtime packages' folders: those pyproject.toml maps onto invcrawl's packages.
PACKAGES = FOLDERS


def named_in_row(inside: str, row: str) -> bool:
    """``inside`` (``claims``, ``apidiff/diff``, ``extract/``) in backticks in ``row``,
    or its folder and its own name there."""
    if f"`{inside}`" in row:
        return True
    folder, _, name = inside.rstrip("/").rpartition("/")
    return bool(folder) and f"`{folder}/`" in row and f"`{name}`" in row


def modules(package: str) -> list[tuple[str, str]]:
    """(path from the root, path inside the package) of each module and subpackage;
    ``__main__`` is its package's."""
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT / package).with_suffix("").parts)
        if parts[-1] == "__main__" or parts == ["__init__"]:
            continue
        inside = "/".join(parts[:-1]) + "/" if parts[-1] == "__init__" else "/".join(parts)
        out.append((f"{package}/{inside}", inside))
    return out


def test_the_architecture_page_names_every_runtime_module() -> None:
    text = DOC.read_text()
    rows = dict(re.findall(r"^\| `([a-z]+)/` \|(.*)$", text, re.M))
    assert sorted(rows) == sorted(PACKAGES)
    missing = [
        path
        for package in PACKAGES
        for path, inside in modules(package)
        if re.search(re.escape(path) + r"(?![\w/])", text) is None
        and not named_in_row(inside, rows[package])
    ]
    assert missing == [], f"docs/architecture.md does not name {missing}"


_COMMAND_ROW = re.compile(
    r"^\| `([a-z]+)` \| `(\w+)` \| `([\w/]+\.py)` \| `([\w/]+\.py)` \|$", re.M
)


def _module_name(path: str) -> str:
    """``invcrawl/commands/reading.py`` -> ``invcrawl.commands.reading``; a layer's folder
    installs under invcrawl (``frontier/status.py`` -> ``invcrawl.frontier.status``)."""
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return dotted if dotted.startswith("invcrawl.") else f"invcrawl.{dotted}"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_command_map_names_each_commands_places() -> None:
    """The command map lists every command of HANDLERS once; each row's handler is the
    one HANDLERS names, defined (``def``) in the module it gives, and that module imports
    the one it says the command runs on."""
    from invcrawl.commands import HANDLERS, handler_of

    rows = _COMMAND_ROW.findall(DOC.read_text())
    assert sorted(command for command, *_ in rows) == sorted(HANDLERS)
    for command, handler, module, below in rows:
        path = ROOT / module
        assert path.is_file(), (command, module)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert handler in defined, (command, handler, module)
        function = handler_of(command)
        assert (function.__module__, function.__name__) == (_module_name(module), handler)
        assert (ROOT / below).is_file(), (command, below)
        assert _module_name(below) in _imports(path), (command, module, below)
