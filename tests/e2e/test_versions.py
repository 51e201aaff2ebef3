"""Versions side by side and typed API diffs, end to end (issue 28): a package written here
in three versions, documented with autodoc and built by Sphinx, crawled together by one
`invcrawl crawl` against a real redis-server; `versions`, `diff` (both directions of every
pair against a known list), `history`, PROJECT@VERSION as a crawl id, the change feed of
a refresh, and a theme-only rebuild that gives no event and no diff."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from invcrawl.localredis.server import RedisServer
from support.cli import Result, invcrawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

PROJECT = "Fixpkg"
PK, KW = "positional-or-keyword", "keyword-only"

V10 = '''
from __future__ import annotations


def connect(host: str, port: int = 80) -> Connection:
    """Open a connection to a host."""


def send(conn: Connection, data: bytes, timeout: float = 1.0) -> int:
    """Send bytes on a connection."""


def close(conn: Connection, force: bool = False) -> None:
    """Close a connection."""


def legacy(x: int) -> int:
    """An old helper."""


class Connection:
    """A connection to a host."""

    def read(self, size: int = -1) -> bytes:
        """Read bytes."""
'''
# 1.1: a parameter added with a default (connect.ssl) and one without (send.flags), a
# default changed (Connection.read.size), a parameter made keyword-only (close.force), a
# docstring-only change (legacy)
V11 = (
    V10.replace("port: int = 80)", "port: int = 80, ssl: bool = False)")
    .replace("data: bytes, timeout", "data: bytes, flags: int, timeout")
    .replace("size: int = -1", "size: int = 4096")
    .replace("conn: Connection, force", "conn: Connection, *, force")
    .replace('"""An old helper."""', '"""An old helper, kept for compatibility."""')
)
# 2.0: a return annotation changed (send), a function removed (legacy), a class added
# (Pool), a deprecated directive added (close)
V20 = (
    V11.replace(
        "flags: int, timeout: float = 1.0) -> int:", "flags: int, timeout: float = 1.0) -> bool:"
    )
    .replace(
        'def legacy(x: int) -> int:\n    """An old helper, kept for compatibility."""\n\n\n', ""
    )
    .replace(
        '"""Close a connection."""',
        '"""Close a connection.\n\n    .. deprecated:: 2.0\n       Use a Pool instead.\n    """',
    )
    + '\n\nclass Pool:\n    """Connections shared between callers."""\n'
)
SOURCES = {"1.0": V10, "1.1": V11, "2.0": V20}


def build(tmp: Path, version: str, theme: str = "alabaster", name: str | None = None) -> Path:
    """The fixture package of ``version``, documented by autodoc, built by Sphinx."""
    name = name or f"fixpkg-{version}"
    src = tmp / "src" / name
    (src / "fixpkg").mkdir(parents=True)
    (src / "fixpkg" / "__init__.py").write_text('"""The fixture package."""\n' + SOURCES[version])
    (src / "conf.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.abspath('.'))\n"
        f"project = {PROJECT!r}\nversion = release = {version!r}\n"
        f"extensions = ['sphinx.ext.autodoc']\nhtml_theme = {theme!r}\n"
    )
    (src / "index.rst").write_text("Fixpkg\n======\n\n.. toctree::\n\n   api\n")
    (src / "api.rst").write_text(
        "API\n===\n\n.. automodule:: fixpkg\n   :members:\n   :undoc-members:\n"
    )
    html = tmp / name / "html"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(html)],
        check=True,
        capture_output=True,
    )
    return html


def cli(server: RedisServer, tmp: Path, *args: str) -> Result:
    result = invcrawl(*args, "--redis", server.url, cwd=tmp)
    assert result.code == 0, (args, result.stderr[-3000:])
    return result


def json_lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line]


def c(kind: str, breaking: bool = False, **facts: Any) -> dict[str, Any]:
    return {"kind": kind, **facts, "breaking": breaking}


def line(key: str, change: str, *changes: dict[str, Any], breaking: bool | None = None) -> dict:
    if breaking is None:
        breaking = change == "removed" or any(x["breaking"] for x in changes)
    return {"key": key, "change": change, "breaking": breaking, "changes": list(changes)}


F = "py:function:fixpkg."
PAGE = line("std:doc:api", "changed", c("doc_changed"))  # the page holds every symbol
INDEX = line("std:doc:index", "changed", c("doc_changed"))  # its toctree lists the symbols
EXPECTED: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("1.0", "1.1"): [
        line(F + "close", "changed", c("param_kind_changed", True, param="force", old=PK, new=KW)),
        line(F + "connect", "changed", c("param_added", param="ssl", required=False)),
        line(F + "legacy", "changed", c("doc_changed")),
        line(F + "send", "changed", c("param_added", True, param="flags", required=True)),
        line(
            "py:method:fixpkg.Connection.read",
            "changed",
            c("param_default_changed", param="size", old="-1", new="4096"),
        ),
        PAGE,
    ],
    ("1.1", "1.0"): [
        line(F + "close", "changed", c("param_kind_changed", param="force", old=KW, new=PK)),
        line(F + "connect", "changed", c("param_removed", True, param="ssl")),
        line(F + "legacy", "changed", c("doc_changed")),
        line(F + "send", "changed", c("param_removed", True, param="flags")),
        line(
            "py:method:fixpkg.Connection.read",
            "changed",
            c("param_default_changed", param="size", old="4096", new="-1"),
        ),
        PAGE,
    ],
    ("1.1", "2.0"): [
        line("py:class:fixpkg.Pool", "added"),
        line(F + "close", "changed", c("deprecated", version="2.0")),
        line(F + "legacy", "removed"),
        line(F + "send", "changed", c("return_changed", old="int", new="bool")),
        PAGE,
        INDEX,
    ],
    ("2.0", "1.1"): [
        line("py:class:fixpkg.Pool", "removed"),
        line(F + "close", "changed", c("doc_changed")),
        line(F + "legacy", "added"),
        line(F + "send", "changed", c("return_changed", old="bool", new="int")),
        PAGE,
        INDEX,
    ],
    ("1.0", "2.0"): [
        line("py:class:fixpkg.Pool", "added"),
        line(
            F + "close",
            "changed",
            c("param_kind_changed", True, param="force", old=PK, new=KW),
            c("deprecated", version="2.0"),
        ),
        line(F + "connect", "changed", c("param_added", param="ssl", required=False)),
        line(F + "legacy", "removed"),
        line(
            F + "send",
            "changed",
            c("param_added", True, param="flags", required=True),
            c("return_changed", old="int", new="bool"),
        ),
        line(
            "py:method:fixpkg.Connection.read",
            "changed",
            c("param_default_changed", param="size", old="-1", new="4096"),
        ),
        PAGE,
        INDEX,
    ],
    ("2.0", "1.0"): [
        line("py:class:fixpkg.Pool", "removed"),
        line(
            F + "close",
            "changed",
            c("param_kind_changed", param="force", old=KW, new=PK),
            c("doc_changed"),
        ),
        line(F + "connect", "changed", c("param_removed", True, param="ssl")),
        line(F + "legacy", "added"),
        line(
            F + "send",
            "changed",
            c("param_removed", True, param="flags"),
            c("return_changed", old="bool", new="int"),
        ),
        line(
            "py:method:fixpkg.Connection.read",
            "changed",
            c("param_default_changed", param="size", old="4096", new="-1"),
        ),
        PAGE,
        INDEX,
    ],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("versions")
    sites = {v: build(tmp, v) for v in SOURCES}
    sites["1.1-classic"] = build(tmp, "1.1", theme="classic", name="fixpkg-1.1-classic")
    return sites


def test_versions_diff_history_and_crawl_refs(built: dict[str, Path], tmp_path: Path) -> None:
    with RedisServer(tmp_path / "redis") as server:
        sites = [str(built[v]) for v in SOURCES]
        result = cli(server, tmp_path, "crawl", *sites, "--out-dir", str(tmp_path / "out"),
                     "--consumers", "2", "--progress", "none")  # fmt: skip
        outputs = sorted((tmp_path / "out").glob("*.jsonl"))
        items = [json.loads(x) for path in outputs for x in path.read_text().splitlines()]
        assert len(outputs) == 3 and {i["project"] for i in items} == {PROJECT}, result.stderr
        assert {i["version"] for i in items} == set(SOURCES)

        # versions: one project, its versions in order, each with its crawl
        listing = json.loads(cli(server, tmp_path, "versions", "--json").stdout)["projects"]
        assert [p["project"] for p in listing] == [PROJECT]
        rows = listing[0]["versions"]
        assert [r["version"] for r in rows] == ["1.0", "1.1", "2.0"]
        assert all(r["state"] == "finished" and r["entries"] > 8 for r in rows)
        text = cli(server, tmp_path, "versions", PROJECT.lower()).stdout
        assert text.splitlines()[0] == f"{PROJECT}: 3 version(s)"

        # diff: every pair, both directions, exactly the known list
        for (old, new), expected in EXPECTED.items():
            got = json_lines(cli(server, tmp_path, "diff", f"{PROJECT}@{old}", f"{PROJECT}@{new}",
                                 "--json"))  # fmt: skip
            assert got == expected, (old, new, json.dumps(got, indent=1))
        crawl_ids = {r["version"]: r["crawl_id"] for r in rows}
        by_id = json_lines(
            cli(server, tmp_path, "diff", crawl_ids["1.0"], crawl_ids["1.1"], "--json")
        )
        assert by_id == EXPECTED[("1.0", "1.1")]

        summary = cli(server, tmp_path, "diff", f"{PROJECT}@1.0", f"{PROJECT}@2.0").stdout
        lines = summary.splitlines()
        assert lines[0] == (
            f"{PROJECT} 1.0 -> {PROJECT} 2.0: 8 symbols differ: 1 added, 1 removed, 6 changed; "
            "3 breaking"
        )
        assert lines[2] == "Breaking changes:"
        assert lines[3:6] == [
            f"  {F}close: parameter force is now keyword-only (was positional-or-keyword)",
            f"  {F}legacy removed",
            f"  {F}send: new required parameter flags",
        ]
        notes = cli(
            server, tmp_path, "diff", f"{PROJECT}@1.0", f"{PROJECT}@2.0", "--markdown"
        ).stdout
        assert notes.startswith(f"# Changes from {PROJECT} 1.0 to {PROJECT} 2.0\n")
        assert notes.index("## fixpkg") < notes.index("### Breaking") < notes.index("### Added")

        # history of one symbol across the versions
        story = json.loads(cli(server, tmp_path, "history", F + "legacy", "--json").stdout)
        assert (story["project"], story["exists_in"], story["first"], story["removed_in"]) == (
            PROJECT, ["1.0", "1.1"], "1.0", "2.0",
        )  # fmt: skip
        assert [(s["version"], s["change"]) for s in story["steps"]] == [
            ("1.0", "added"), ("1.1", "changed"), ("2.0", "removed"),
        ]  # fmt: skip
        assert story["steps"][1]["changes"] == [c("doc_changed")]
        close = cli(server, tmp_path, "history", F + "close", "--project", PROJECT).stdout
        assert close.splitlines()[1:] == [
            "  1.0  added",
            "  1.1  parameter force is now keyword-only (was positional-or-keyword) (breaking)",
            "  2.0  deprecated in 2.0",
        ]

        # PROJECT@VERSION wherever a crawl id goes; unknown ones fail in one line
        out = tmp_path / "v11.jsonl"
        cli(server, tmp_path, "export", "--crawl-id", f"{PROJECT}@1.1", "-o", str(out))
        assert {json.loads(x)["version"] for x in out.read_text().splitlines()} == {"1.1"}
        status = json.loads(
            cli(server, tmp_path, "status", "--crawl-id", f"{PROJECT}@2.0", "--json").stdout
        )
        assert status["crawl_id"] == crawl_ids["2.0"]
        missing = invcrawl(
            "diff", f"{PROJECT}@9.9", f"{PROJECT}@1.0", "--redis", server.url, cwd=tmp_path
        )
        assert missing.code == 2 and missing.error_lines == [
            f"invcrawl: error: no crawl {PROJECT}@9.9 in this Redis (see `invcrawl status`)"
        ]
        usage = invcrawl("diff", crawl_ids["1.0"], "--redis", server.url, cwd=tmp_path)
        assert usage.code == 2 and "diff needs OLD and NEW" in usage.stderr

        # --project / --version name a crawl; a theme-only rebuild diffs as nothing
        cli(server, tmp_path, "crawl", str(built["1.1-classic"]), "--crawl-id", "classic",
            "--project", PROJECT, "--version", "1.1-classic", "-o", str(tmp_path / "c.jsonl"),
            "--progress", "none")  # fmt: skip
        assert {json.loads(x)["version"] for x in (tmp_path / "c.jsonl").open()} == {"1.1-classic"}
        assert cli(server, tmp_path, "diff", f"{PROJECT}@1.1", "classic", "--json").stdout == ""


def test_change_feed_carries_typed_changes_and_a_theme_change_is_silent(
    built: dict[str, Path], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(built["1.0"], site)
    with RedisServer(tmp_path / "redis") as server:

        def crawl(*extra: str) -> None:
            cli(server, tmp_path, "crawl", str(site), "--crawl-id", "feed", "-o",
                str(tmp_path / "feed.jsonl"), "--progress", "none", *extra)  # fmt: skip

        def changes(since: str) -> tuple[list[dict[str, Any]], str]:
            result = cli(server, tmp_path, "changes", "--crawl-id", "feed", "--since", since)
            return json_lines(result), result.stderr.rsplit("--since ", 1)[1].strip()

        crawl()
        first, cursor = changes("0")
        assert {e["event"] for e in first} == {"added"}
        assert all("changes" not in e for e in first)

        shutil.rmtree(site)
        shutil.copytree(built["1.1"], site)
        crawl("--refresh")
        events, cursor = changes(cursor)
        assert {e["event"] for e in events} == {"changed"}
        got = sorted(
            (line(e["key"], "changed", *e["changes"], breaking=e["breaking"]) for e in events),
            key=lambda e: e["key"],
        )
        assert got == EXPECTED[("1.0", "1.1")]

        # the same events again from the start: the replaced items are found by position
        again, _ = changes("0")
        assert [e.get("changes") for e in again if e["event"] == "changed"] == [
            e["changes"] for e in events
        ]

        # 1.1 rebuilt with another theme: the items are the same, no event at all
        shutil.rmtree(site)
        shutil.copytree(built["1.1-classic"], site)
        crawl("--refresh", "--force")
        assert changes(cursor)[0] == []
