"""``invcrawl mcp`` on standard input and output: how MCP clients start a server. Apart
from ``mcpserver/http.py`` so that it does not import the web server (uvicorn and
Starlette: 0.5 s of the start-up a client waits for)."""

from __future__ import annotations

import asyncio

from invcrawl.common.settings.config import Config
from invcrawl.mcpserver.server import Connection, build_server


def run_stdio(config: Config) -> int:
    """Serve one client on standard input and output until it closes them."""
    assert config.redis
    connection = Connection(config.redis, config.redis_cluster)

    async def main() -> None:
        try:
            await build_server(connection, config.mcp_max_chars).run_stdio_async()
        finally:
            await connection.aclose()

    asyncio.run(main())
    return 0
