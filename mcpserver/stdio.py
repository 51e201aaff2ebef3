"""``invcrawl mcp`` on standard input and output: how MCP clients start a server. Apart
from ``mcpserver/http.py`` so that it does not import the web server (uvicorn and
Starlette: 0.5 s of the start-up a client waits for). A line that is not JSON-RPC is
answered with JSON-RPC's own error (-32700 parse error, -32600 invalid request; ``id``
null, as the specification says for a request whose id could not be read): the SDK only
logged it, and a client waited for an answer that never came (issue 46.7)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

from invcrawl.common.settings.config import Config
from invcrawl.mcpserver.server import Connection, build_server

Inbound = SessionMessage | Exception


def refusal(exc: Exception) -> SessionMessage:
    """The JSON-RPC error that answers a line the SDK could not read as a message."""
    invalid_json = any(
        e.get("type") == "json_invalid" for e in getattr(exc, "errors", lambda: [])()
    )
    code, what = (
        (PARSE_ERROR, "Parse error") if invalid_json else (INVALID_REQUEST, "Invalid Request")
    )
    message = f"{what}: a line of JSON-RPC 2.0 was expected"
    return SessionMessage(
        JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
    )


async def relay(
    read: MemoryObjectReceiveStream[Inbound],
    into: MemoryObjectSendStream[Inbound],
    write: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Messages from ``read`` on to the server; a line that was none answered at once."""
    async with into:
        async for item in read:
            if isinstance(item, Exception):
                await write.send(refusal(item))
            else:
                await into.send(item)


def run_stdio(config: Config) -> int:
    """Serve one client on standard input and output until it closes them."""
    assert config.redis
    connection = Connection(config.redis, config.redis_cluster)

    async def main() -> None:
        server = build_server(connection, config.mcp_max_chars)
        lowlevel: Any = server._lowlevel_server  # the SDK's run_stdio_async, with relay
        try:
            async with stdio_server() as (read, write):
                into, inbound = anyio.create_memory_object_stream[Inbound](0)
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(relay, read, into, write)
                    await lowlevel.run(inbound, write, lowlevel.create_initialization_options())
                    tasks.cancel_scope.cancel()
        finally:
            await connection.aclose()

    asyncio.run(main())
    return 0
