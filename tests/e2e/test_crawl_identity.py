"""Crawl identity that cannot lie (issue 47.3): `crawl SITE --version 1.0` on a crawl of
2.0 relabelled it (its items still said 2.0); the same project and version crawled from
two paths became two crawls silently, after which `diff` refused PROJECT@VERSION while
`show` and `api_diff` picked one. Now: a relabel is refused in one line, the second
crawl is named as such (`versions`, `status`), an ambiguous version is an error
everywhere, and a crawl id goes wherever a version does."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer
from support.agentsite import PROJECT, write_site
from support.cli import Result, clean_env, invcrawl


def mcp_call(url: str, cwd: Path, tool: str, **arguments: Any) -> tuple[bool, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "invcrawl", "mcp", "--redis", url],
        env=clean_env(), cwd=cwd,
    )  # fmt: skip

    async def main() -> tuple[bool, Any]:
        async with Client(params) as client:
            result = await client.call_tool(tool, arguments)
            text = result.content[0].text if result.content[0].type == "text" else ""
            return bool(result.is_error), text if result.is_error else result.structured_content

    return asyncio.run(main())


def test_a_crawl_cannot_be_relabelled_or_doubled_silently(tmp_path: Path) -> None:
    site = write_site(tmp_path / "docs" / "fixlib" / "2.0", "2.0")
    write_site(tmp_path / "docs" / "fixlib" / "1.0", "1.0")
    copy = tmp_path / "mirror" / "fixlib-2.0"
    shutil.copytree(site, copy)
    with RedisServer(tmp_path / "redis") as server:

        def cli(*args: str) -> Result:
            return invcrawl(*args, "--redis", server.url, cwd=tmp_path)

        def crawl(*args: str) -> Result:
            return cli("crawl", *args, "--out-dir", "out", "--progress", "none",
                       "--consumers", "1")  # fmt: skip

        first, older = crawl_id_for(str(site)), crawl_id_for(str(tmp_path / "docs/fixlib/1.0"))
        assert crawl(str(site), str(tmp_path / "docs/fixlib/1.0")).code == 0
        # a relabel: refused in one line, nothing changed
        relabel = crawl(str(site), "--version", "1.0")
        assert relabel.code == 2, relabel
        assert relabel.error_lines == [
            f"invcrawl: error: crawl {first} holds {PROJECT} 2.0 (its items say so): --version "
            f"1.0 would relabel it without rewriting them; give another --crawl-id for a crawl "
            f"of its own, or `invcrawl forget {first}` first"
        ], relabel.stderr
        # naming another crawl's project@version: refused too
        named = crawl(str(copy), "--project", PROJECT, "--version", "1.0", "--crawl-id", "third")
        assert named.code == 2 and f"is already crawl {older}" in named.stderr, named
        listing = json.loads(cli("versions", "--json").stdout)["projects"][0]["versions"]
        assert [(v["crawl_id"], v["version"]) for v in listing] == [(older, "1.0"), (first, "2.0")]

        # the same docs from another path: a second crawl, named as such
        second = crawl_id_for(str(copy))
        assert crawl(str(copy)).code == 0
        rows = cli("versions").stdout.splitlines()
        named, twin = sorted((first, second))  # the first by id is the one named
        assert next(r for r in rows if twin in r).endswith(f"same as {named}"), rows
        assert "same as" not in next(r for r in rows if f"  {named}  " in r), rows
        fleet = cli("status").stdout
        assert f"  same as {named} ({PROJECT} 2.0)" in fleet, fleet
        detail = cli("status", "--crawl-id", twin).stdout.splitlines()
        assert detail[1].startswith(f"same as  {named}: give a crawl id"), detail
        assert not any(
            "same as" in line for line in cli("status", "--crawl-id", named).stdout.splitlines()
        )

        # PROJECT@VERSION names both: an error everywhere, never one picked
        for args in (("show", "Pool", "--project", PROJECT, "--version", "2.0"),
                     ("diff", f"{PROJECT}@1.0", f"{PROJECT}@2.0")):  # fmt: skip
            ambiguous = cli(*args)
            assert ambiguous.code == 2 and len(ambiguous.error_lines) == 1, (args, ambiguous)
            assert first in ambiguous.stderr and second in ambiguous.stderr, ambiguous.stderr
        failed, text = mcp_call(server.url, tmp_path, "api_diff", project=PROJECT, old="1.0",
                                new="2.0")  # fmt: skip
        assert failed and first in text and second in text and "crawl id" in text, text
        # ... and a crawl id goes where the version did: show, diff, api_diff
        shown = cli("show", "Pool", "--project", PROJECT, "--version", second, "--json")
        assert shown.code == 0 and json.loads(shown.stdout)["item"]["key"] == "py:class:fixlib.Pool"
        assert cli("diff", older, second, "--json").code == 0
        failed, data = mcp_call(server.url, tmp_path, "api_diff", project=PROJECT, old=older,
                                new=second)  # fmt: skip
        assert not failed and data["new"]["crawl_id"] == second, data
        assert data["counts"]["removed"] == 1 and data["counts"]["added"] == 1, data
