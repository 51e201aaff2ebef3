"""``invcrawl mcp`` (issue 38) driven by the official SDK's own client: in-process over
memory streams, over stdio as the subprocess an MCP client starts, and over streamable
HTTP (no token: 401, a wrong Host: 403, the token: answers). Every tool on a fixture
crawl of two versions whose answers are known (``tests/support/agentsite.py``: Fixlib
1.0 and 2.0, crawled by ``invcrawl crawl`` with a second project beside it), and bad
input of every kind: one line of tool error, never a traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, CallToolResult

from invcrawl.frontier.connection import connect
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import RedisServer
from invcrawl.mcpserver.server import Connection, build_server
from support.agentsite import PROJECT, write_site
from support.cli import clean_env, invcrawl
from support.symbols import V1, V2, build_crawl
from support.synthsite import generate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TOOLS = {
    "list_projects",
    "search_symbols",
    "get_symbol",
    "api_diff",
    "symbol_history",
    "changes_since",
}
F = "py:function:fixlib."


@pytest.fixture(scope="module")
def fixture_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis of its own holding Fixlib 1.0 and 2.0 and a second project (Synth), as
    ``invcrawl crawl`` leaves them."""
    tmp = tmp_path_factory.mktemp("mcp")
    sites = [str(write_site(tmp / "fixlib" / v, v)) for v in ("1.0", "2.0")]
    generate(tmp / "synth" / "1.0", pages=1, per_page=2, filler_bytes=10)
    with RedisServer(tmp / "redis") as server:
        crawled = invcrawl("crawl", *sites, str(tmp / "synth" / "1.0"), "--redis", server.url,
                           "--out-dir", str(tmp / "out"), "--progress", "none", "--consumers", "1",
                           cwd=tmp)  # fmt: skip
        assert crawled.code == 0, crawled.stderr[-3000:]
        yield server.url


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(tool, arguments)


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.content and result.content[0].type == "text" and result.content[0].text
    return result.structured_content


def error(result: CallToolResult) -> str:
    """The one line of a tool error."""
    assert result.is_error, result.structured_content
    text = result.content[0].text if result.content[0].type == "text" else ""
    assert "\n" not in text and "Traceback" not in text and len(text) < 2000, text
    return text


def in_process(url: str, cluster: bool = False) -> Client:
    """The SDK's client on the server in this process, over memory streams."""
    return Client(build_server(Connection(url, cluster)), mode="legacy")


# -- every tool, known answers -----------------------------------------------------------------


async def projects_and_diffs(client: Client) -> None:
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in tools.tools)

    listed = data(await call(client, "list_projects"))["projects"]
    assert [p["project"] for p in listed] == [PROJECT, "Synth"]
    fixlib = listed[0]["versions"]
    assert [(v["version"], v["state"], v["entries"]) for v in fixlib] == [
        ("1.0", "finished", 6),
        ("2.0", "finished", 6),
    ]
    assert all(v["crawl_id"] and v["crawled_at"] for v in fixlib)

    diff = data(await call(client, "api_diff", project="fixlib", old="1.0", new="2.x"))
    assert (diff["project"], diff["old"]["version"], diff["new"]["version"]) == (
        PROJECT,
        "1.0",
        "2.0",
    )
    assert diff["counts"] == {"added": 1, "removed": 1, "changed": 2, "breaking": 1}
    assert [(c["key"], c["change"], c["breaking"]) for c in diff["changes"]] == [
        (F + "legacy", "removed", True),  # breaking first
        ("py:class:fixlib.Pool", "added", False),
        (F + "connect", "changed", False),
        ("py:method:fixlib.Session.get", "changed", False),
    ]
    assert diff["changes"][2]["changes"] == [
        {"kind": "param_added", "param": "ssl", "required": False, "breaking": False}
    ]
    assert diff["changes"][3]["changes"] == [
        {"kind": "param_default_changed", "param": "timeout", "old": "10", "new": "30",
         "breaking": False}
    ]  # fmt: skip
    breaking = data(await call(client, "api_diff", project="FIXLIB", old="1.x", new="2.0",
                               breaking_only=True))  # fmt: skip
    assert [c["key"] for c in breaking["changes"]] == [F + "legacy"]
    cut = data(await call(client, "api_diff", project="Fixlib", old="1.0", new="2.0", limit=1))
    assert (len(cut["changes"]), cut["total"], cut["truncated"]) == (1, 4, True)

    missing = error(await call(client, "api_diff", project="Fixlib", old="1.0", new="3.0"))
    assert missing == "no version '3.0' (versions: '1.0', '2.0')"  # never a substitute
    assert "'1.0', '2.0'" in error(await call(client, "api_diff", project="Fixlib", old="0.x",
                                              new="2.0"))  # fmt: skip
    assert "'Fixlib'" in error(await call(client, "api_diff", project="nope", old="1", new="2"))


async def histories_and_changes(client: Client) -> None:
    # the project inferred: two projects in this Redis, the key in one of them
    history = data(await call(client, "symbol_history", key=F + "connect"))
    assert (history["project"], history["exists_in"], history["first"]) == (
        PROJECT, ["1.0", "2.0"], "1.0"
    )  # fmt: skip
    assert [s["change"] for s in history["steps"]] == ["added", "changed"]
    assert history["steps"][1]["changes"][0]["param"] == "ssl"
    gone = data(await call(client, "symbol_history", key=F + "legacy", project="fixlib"))
    assert (gone["exists_in"], gone["removed_in"]) == (["1.0"], "2.0")
    assert "in no version" in error(await call(client, "symbol_history", key="py:function:nope"))

    # the change feed, 5 events at a time, resumed exactly by each next_cursor
    seen: list[tuple[str, str]] = []
    cursor = None
    for _ in range(10):
        page = data(await call(client, "changes_since", cursor=cursor, limit=5))
        seen += [(e["crawl"], e["key"]) for e in page["events"]]
        cursor = page["next_cursor"]
        if not page["more"]:
            break
    listed = data(await call(client, "list_projects"))["projects"]
    entries = sum(v["entries"] for p in listed for v in p["versions"])
    assert len(seen) == len(set(seen)) == entries  # each item once, none skipped
    again = data(await call(client, "changes_since", cursor=cursor))
    assert again["events"] == [] and again["next_cursor"] == cursor
    now = data(await call(client, "changes_since", cursor="$"))  # only what comes next
    assert now["events"] == [] and now["next_cursor"] == cursor
    first = data(await call(client, "changes_since", cursor="$", limit=1))
    assert first["events"] == [] and not first["more"]
    fixlib = data(await call(client, "changes_since", project="FixLib", limit=1000))
    assert {e["project"] for e in fixlib["events"]} == {PROJECT}
    assert {e["event"] for e in fixlib["events"]} == {"added"}
    assert len(fixlib["events"]) == 12


async def search_and_get(client: Client) -> None:
    found = data(await call(client, "search_symbols", query="Session"))["results"]
    assert found[0]["key"] == "py:class:fixlib.Session"  # the exact last component first
    assert (found[0]["project"], found[0]["version"]) == (PROJECT, "2.0")  # latest finished
    assert set(found[0]) >= {"key", "name", "role", "project", "version", "url", "summary",
                             "score"}  # fmt: skip
    phrase = data(await call(client, "search_symbols", query="parse a JSON string"))["results"]
    assert phrase[0]["key"] == F + "parse_json"
    assert phrase[0]["summary"] == "Parse a JSON string into Python objects."
    old = data(await call(client, "search_symbols", query="legacy", project="fixlib",
                          version="1.x"))["results"]  # fmt: skip
    assert [r["key"] for r in old][:1] == [F + "legacy"]
    classes = data(await call(client, "search_symbols", query="fixlib", kind="class"))["results"]
    assert classes and {r["role"] for r in classes} == {"class"}

    connect = data(await call(client, "get_symbol", name="fixlib.connect", version="1.0"))
    assert connect["version"] == "1.0"
    assert [p["name"] for p in connect["item"]["params"]] == ["host", "port"]
    latest = data(await call(client, "get_symbol", name=F + "connect", project="fixlib"))
    assert [p["name"] for p in latest["item"]["params"]] == ["host", "port", "ssl"]
    assert latest["item"]["parent"] == "fixlib" and latest["item"]["url"].endswith(
        "#fixlib.connect"
    )
    short = data(await call(client, "get_symbol", name="parse_json"))
    assert short["item"]["key"] == F + "parse_json"
    assert "'1.0', '2.0'" in error(await call(client, "get_symbol", name="connect",
                                              project="Fixlib", version="7"))  # fmt: skip
    assert "'Fixlib'" in error(await call(client, "search_symbols", query="x", project="nope"))
    assert "'1.0', '2.0'" in error(await call(client, "search_symbols", query="x",
                                              project="Fixlib", version="9.x"))  # fmt: skip


async def bad_input(client: Client) -> None:
    for query in ("", " ", "*", "[a-", "%s%d", "((((", ".*", "?", "\\", "'\"", "\x00\x1b[2J",
                  "x" * 10_000):  # fmt: skip
        result = await call(client, "search_symbols", query=query)
        if result.is_error:
            error(result)
        else:
            assert isinstance(result.structured_content, dict)
    for limit in (0, -1, 101, 10**12):
        assert "limit" in error(await call(client, "search_symbols", query="x", limit=limit))
    assert "limit" in error(await call(client, "changes_since", limit=1001))
    assert "limit" in error(await call(client, "api_diff", project="Fixlib", old="1.0",
                                       new="2.0", limit=0))  # fmt: skip
    assert "at most 1000" in error(await call(client, "get_symbol", name="y" * 10_000))
    for cursor in ("garbage", "a=b", "1-2-3", "*" * 70_000):
        assert "cursor" in error(await call(client, "changes_since", cursor=cursor))
    error(await call(client, "api_diff", project="Fixlib", old="1.0", new="2.0", limit="many"))
    error(await call(client, "symbol_history", key="k" * 5000))


def test_every_tool_in_process(fixture_redis: str) -> None:
    async def main() -> None:
        async with in_process(fixture_redis) as client:
            await projects_and_diffs(client)
            await histories_and_changes(client)
            if os.environ.get("MCP_STUB") is None:
                await search_and_get(client)
            await bad_input(client)

    asyncio.run(main())


def test_a_redis_that_does_not_answer_is_a_tool_error(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process("redis://127.0.0.1:9/0") as client:
            text = error(await call(client, "list_projects"))
            assert text.startswith("Redis did not answer"), text

    asyncio.run(main())


def test_the_server_rides_out_a_redis_restart_and_a_dropped_connection(tmp_path: Path) -> None:
    """Redis SIGKILLed under a running server: a call meanwhile is one line of tool error;
    restarted (from its AOF, on its port), and the server's connections killed (CLIENT
    KILL), the next calls answer as before: no restart of the server needed."""
    import redis

    generate(tmp_path / "site", pages=1, per_page=2, filler_bytes=10)
    with RedisServer(tmp_path / "redis") as server:
        crawled = invcrawl("crawl", str(tmp_path / "site"), "--redis", server.url,
                           "--progress", "none", "--consumers", "1", cwd=tmp_path)  # fmt: skip
        assert crawled.code == 0, crawled.stderr[-3000:]

        async def main() -> None:
            async with in_process(server.url) as client:
                before = data(await call(client, "list_projects"))
                assert before["projects"]
                server.kill()
                assert error(await call(client, "list_projects")).startswith("Redis did not answer")
                server.start()
                assert data(await call(client, "list_projects")) == before
                admin = redis.Redis.from_url(server.url)
                assert admin.client_kill_filter(_type="normal", skipme=True) >= 1
                admin.close()
                assert data(await call(client, "list_projects")) == before

        asyncio.run(main())


# -- stdio: the subprocess an MCP client starts ------------------------------------------------


def test_stdio_subprocess(fixture_redis: str, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "invcrawl", "mcp", "--redis", fixture_redis],
        env=clean_env(),
        cwd=tmp_path,
    )

    async def main() -> None:
        async with Client(params) as client:
            listed = data(await call(client, "list_projects"))["projects"]
            assert [p["project"] for p in listed] == [PROJECT, "Synth"]
            assert "'1.0', '2.0'" in error(await call(client, "api_diff", project="fixlib",
                                                      old="1.0", new="5"))  # fmt: skip

    asyncio.run(main())


def test_stdio_on_the_embedded_redis(tmp_path: Path) -> None:
    """Without --redis: the embedded Redis of --data-dir, shared with the crawl that
    filled it (nothing of it on standard output, which is the protocol's)."""
    site = write_site(tmp_path / "fixlib" / "2.0", "2.0")
    data_dir = tmp_path / "data"
    out = str(tmp_path / "out.jsonl")
    crawled = invcrawl("crawl", str(site), "--data-dir", str(data_dir), "--progress", "none",
                       "--consumers", "1", "-o", out, cwd=tmp_path)  # fmt: skip
    assert crawled.code == 0, crawled.stderr[-3000:]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "invcrawl", "mcp", "--data-dir", str(data_dir)],
        env=clean_env(),
        cwd=tmp_path,
    )

    async def main() -> None:
        async with Client(params) as client:
            got = data(await call(client, "get_symbol", name="Pool"))
            assert (got["version"], got["item"]["key"]) == ("2.0", "py:class:fixlib.Pool")

    asyncio.run(main())


# -- streamable HTTP: the dashboard's access rules ---------------------------------------------


@pytest.fixture
def http_server(fixture_redis: str, tmp_path: Path) -> Iterator[str]:
    """``invcrawl mcp --http --port 0 --token`` (its address read from its first line);
    stopped with SIGINT, which it ends with 130."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "mcp", "--http", "--port", "0", "--redis",
         fixture_redis],
        cwd=tmp_path, env=clean_env(INVCRAWL_MCP_TOKEN="s3cret"), stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("invcrawl mcp: http://127.0.0.1:"), line
        assert "token required" in line and "s3cret" not in line
        yield line.split()[2]
    finally:
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        rest = proc.stderr.read() if proc.stderr else ""
        assert "Traceback" not in rest, rest


def test_http_token_and_host(http_server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    refused = httpx2.post(http_server, json=body, headers=headers)
    assert refused.status_code == 401 and refused.json() == {"error": "token needed"}
    bearer = {**headers, "Authorization": "Bearer s3cret"}
    wrong = httpx2.post(http_server, json=body, headers={**bearer, "Host": "evil.example"})
    assert wrong.status_code == 403
    lower = {**headers, "Authorization": "bearer s3cret"}  # the scheme in any case
    assert httpx2.post(http_server, json=body, headers=lower).status_code == 200
    health = httpx2.get(http_server.replace("/mcp", "/healthz"))
    assert health.status_code == 200

    async def main() -> None:
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            listed = data(await call(client, "list_projects"))["projects"]
            assert [p["project"] for p in listed] == [PROJECT, "Synth"]
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer wrong"}) as http:
            # The SDK's client turns the 401 (its body not JSON-RPC) into the error reply
            # of its first request, initialize, raised out of its task group: no tool runs.
            refused = pytest.RaisesExc(
                MCPError,
                match=r"^Server returned an error response$",
                check=lambda exc: exc.code == INTERNAL_ERROR,
            )
            with pytest.RaisesGroup(refused, flatten_subgroups=True):
                async with Client(streamable_http_client(http_server, http_client=http)) as c:
                    await call(c, "list_projects")

    asyncio.run(main())


def test_http_beyond_loopback_needs_a_token_and_a_reader(
    fixture_redis: str, tmp_path: Path
) -> None:
    no_token = invcrawl("mcp", "--http", "--bind", "0.0.0.0", "--redis", fixture_redis,
                        cwd=tmp_path)  # fmt: skip
    assert no_token.code == 2
    assert no_token.error_lines == [
        "invcrawl: error: --bind 0.0.0.0 makes the MCP server reachable from other machines: "
        "give it a token to ask for (INVCRAWL_MCP_TOKEN or --token), or connect as a Redis "
        "reader user (--redis redis://USER:***@...), whose password it asks for"  # masked
    ]
    env = clean_env(INVCRAWL_MCP_TOKEN="t")
    writer = invcrawl("mcp", "--http", "--bind", "0.0.0.0", "--port", "0", "--redis",
                      fixture_redis, cwd=tmp_path, env=env)  # fmt: skip
    assert writer.code == 2
    assert len(writer.error_lines) == 1 and "may write" in writer.error_lines[0]


# -- a Redis Cluster -------------------------------------------------------------------------


def test_every_tool_on_a_cluster(tmp_path: Path) -> None:
    """The two versions of Reqs (tests/support/symbols.py: written through commit.lua) on a
    3-master Redis Cluster, each crawl's keys on its own shard: every tool answers."""
    from support.cluster import running_cluster

    async def build(url: str) -> None:
        frontier = Frontier(connect(url, cluster=True))
        try:
            await build_crawl(frontier, "reqs-1.0", ("Reqs", "1.0"), V1)
            await build_crawl(frontier, "reqs-2.0", ("Reqs", "2.0"), V2)
        finally:
            await frontier.aclose()

    async def ask(url: str) -> None:
        async with in_process(url, cluster=True) as client:
            listed = data(await call(client, "list_projects"))["projects"]
            assert [(p["project"], [v["version"] for v in p["versions"]]) for p in listed] == [
                ("Reqs", ["1.0", "2.0"])
            ]
            found = data(await call(client, "search_symbols", query="Session", limit=2))
            assert [r["name"] for r in found["results"]] == [
                "reqs.Session",
                "reqs.sessions.Session",
            ]
            got = data(await call(client, "get_symbol", name="old_helper", version="1.x"))
            assert got["item"]["key"] == "py:function:reqs.old_helper"
            diff = data(await call(client, "api_diff", project="reqs", old="1.0", new="2.0"))
            assert [(c["key"], c["change"]) for c in diff["changes"]] == [
                ("py:function:reqs.old_helper", "removed"),
                ("py:exception:reqs.Timeout", "added"),
                ("py:function:reqs.get", "changed"),
            ]
            history = data(await call(client, "symbol_history", key="py:function:reqs.get"))
            assert [s["change"] for s in history["steps"]] == ["added", "changed"]
            feed = data(await call(client, "changes_since", project="Reqs", limit=1000))
            assert len(feed["events"]) == len(V1) + len(V2) and not feed["more"]

    with running_cluster(tmp_path / "cluster") as cluster:
        ports = {cluster.port_of_key(CrawlKeys(c).meta) for c in ("reqs-1.0", "reqs-2.0")}
        asyncio.run(build(cluster.url))
        asyncio.run(ask(cluster.url))
    assert len(ports) == 2, "both crawls on one shard: pick other crawl ids"
