"""One index per user (issue 47.2): a crawl run in one folder is found by `search` run in
another and by the MCP server a client starts in a third (the README's agent config),
all on the per-user data dir (here the test's own XDG_DATA_HOME, tests/conftest.py); a
legacy ./.invcrawl holding an index keeps working in its folder."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from support.agentsite import PROJECT, write_site
from support.cli import clean_env, invcrawl
from support.datahome import user_data_dir
from support.embedded import wait_stopped


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


def mcp_projects(cwd: Path, *args: str) -> list[str]:
    """`invcrawl mcp` over stdio as an MCP client starts it, in ``cwd``: its projects."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "invcrawl", "mcp", *args], env=clean_env(), cwd=cwd
    )

    async def main() -> list[str]:
        async with Client(params) as client:
            result = await client.call_tool("list_projects", {})
            assert not result.is_error, result.content
            assert result.structured_content is not None
            return [p["project"] for p in result.structured_content["projects"]]

    return asyncio.run(main())


def test_crawl_in_one_folder_search_and_mcp_from_others(tmp_path: Path) -> None:
    site = write_site(tmp_path / "fixlib" / "2.0", "2.0")
    a, b, agent = folders(tmp_path, "a", "b", "agent")
    crawled = invcrawl("crawl", str(site), "--progress", "none", "--consumers", "1",
                       "-o", "out.jsonl", cwd=a)  # fmt: skip
    assert crawled.code == 0, crawled.stderr[-3000:]
    found = invcrawl("search", "Pool", cwd=b)
    assert found.code == 0, found.stderr
    assert "fixlib.Pool" in found.stdout
    assert mcp_projects(agent) == [PROJECT]
    # all of it in the per-user data dir, none in the folders the commands ran in
    assert (user_data_dir() / "password").exists()
    assert not any((folder / ".invcrawl").exists() for folder in (a, b, agent))
    wait_stopped(user_data_dir())


def test_mcp_starts_before_any_crawl(tmp_path: Path) -> None:
    """Started by a client before the first crawl, it served nothing and exited, the client
    seeing "Connection closed": it creates the data dir and answers with no project."""
    (agent,) = folders(tmp_path, "agent")
    assert not user_data_dir().exists()
    assert mcp_projects(agent) == []
    assert user_data_dir().is_dir() and not (agent / ".invcrawl").exists()
    wait_stopped(user_data_dir())
    # a command that only reads says there is nothing yet, in one line
    empty = invcrawl("search", "Pool", cwd=agent)
    assert empty.code == 2 and "no crawl in this Redis yet" in empty.stderr, empty.stderr


def test_a_legacy_folder_and_the_overrides(tmp_path: Path) -> None:
    site = write_site(tmp_path / "fixlib" / "2.0", "2.0")
    legacy, other = folders(tmp_path, "legacy", "other")
    # an index in ./.invcrawl, as earlier versions made it by default
    crawled = invcrawl("crawl", str(site), "--data-dir", ".invcrawl", "--progress", "none",
                       "--consumers", "1", "-o", "out.jsonl", cwd=legacy)  # fmt: skip
    assert crawled.code == 0, crawled.stderr[-3000:]
    wait_stopped(legacy / ".invcrawl")
    here = invcrawl("search", "Pool", cwd=legacy)  # no flag: the folder's index
    assert here.code == 0 and "fixlib.Pool" in here.stdout, here.stderr
    wait_stopped(legacy / ".invcrawl")
    elsewhere = invcrawl("search", "Pool", cwd=other)  # the per-user one: empty
    assert elsewhere.code == 1, elsewhere.stderr
    assert f"no embedded Redis data in {user_data_dir()}/" in elsewhere.stderr
    assert "--data-dir" in elsewhere.stderr
    by_variable = invcrawl(
        "search", "Pool", cwd=other, env=clean_env(INVCRAWL_DATA_DIR=str(legacy / ".invcrawl"))
    )
    assert by_variable.code == 0 and "fixlib.Pool" in by_variable.stdout, by_variable.stderr
    wait_stopped(legacy / ".invcrawl")
    assert not user_data_dir().exists()
