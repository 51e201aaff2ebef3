"""Serving agents: ``invcrawl mcp``, the MCP server (``mcpserver/``) on the configured
Redis, the embedded one of ``--data-dir`` included: on standard input and output (how
MCP clients start a server), or with ``--http`` as streamable HTTP under the dashboard's
access rules."""

from __future__ import annotations

from invcrawl.common.listen import listener_secret
from invcrawl.common.settings.config import Config
from invcrawl.live_redis import redis_for, serve_until_stopped


def cmd_mcp(config: Config) -> int:
    # Imported here: the SDK takes more than a second to import (`invcrawl --help` need not).
    if not config.http:
        from invcrawl.mcpserver.stdio import run_stdio  # noqa: PLC0415

        # An agent starts it in its own project folder, before any crawl maybe: the
        # per-user data dir is created rather than refused (the client saw only
        # "Connection closed"), and its tools answer with what is there, nothing at first.
        with redis_for(config, create=True) as live:
            return run_stdio(live)
    # a bind beyond loopback without a token (or a reader user's password): refused
    secret = listener_secret(
        config.mcp_token,
        config.bind,
        config.redis,
        "the MCP server",
        "INVCRAWL_MCP_TOKEN or --token",
    )
    from invcrawl.mcpserver.http import run_http  # noqa: PLC0415

    return serve_until_stopped(
        config, lambda live: run_http(live, secret), lambda live: live.mcp_port
    )
