"""What an MCP client reads before any call (issue 47.8): every tool's description and
every argument's, one line with single spaces (a client shows them as they come), and
``serverInfo.version`` the package's own. Through the official SDK's client, in
process; no Redis is asked (listing tools reads none)."""

from __future__ import annotations

import asyncio
import re
from importlib import metadata
from typing import Any

from mcp import Client

from invcrawl.mcpserver.server import INSTRUCTIONS, Connection, build_server

NOWHERE = "redis://127.0.0.1:9/0"  # never connected to: nothing here reads Redis
RUNS = re.compile(r"\s{2,}|[\n\t]")


def descriptions(schema: Any) -> list[str]:
    """Every ``description`` anywhere in a JSON schema."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                found.append(value)
            else:
                found += descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            found += descriptions(value)
    return found


def test_tool_descriptions_have_no_runs_of_spaces_and_the_version_is_the_package_s() -> None:
    async def main() -> None:
        async with Client(build_server(Connection(NOWHERE)), mode="legacy") as client:
            info = client.server_info
            assert info is not None
            assert (info.name, info.version) == ("invcrawl", metadata.version("invcrawl"))
            tools = (await client.list_tools()).tools
            assert len(tools) == 6
            for tool in tools:
                assert tool.description, tool.name
                texts = [tool.description, *descriptions(tool.input_schema)]
                for text in texts:
                    assert not RUNS.search(text), (tool.name, text)
                    assert text == text.strip(), (tool.name, text)
            assert client.instructions == INSTRUCTIONS
            assert not RUNS.search(INSTRUCTIONS)

    asyncio.run(main())
