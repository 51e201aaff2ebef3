"""``invcrawl mcp --http``: the server as streamable HTTP at ``/mcp`` (stateless, JSON
answers), with the dashboard's access rules (``common/listen.py``): the ``Host`` header
checked on a loopback bind (``HostCheck``: no DNS rebinding), a token asked for
(``Authorization: Bearer TOKEN``) when one is given and always beyond loopback, and a bind
beyond loopback refused when the Redis user of ``--redis`` may write. ``/healthz``
answers without a token, for container health checks. Slow clients are shed below all
that (``mcpserver/shedding.py``): a header deadline, an idle bound, caps on open
connections."""

from __future__ import annotations

import asyncio
import hmac
import logging
import socket
import sys

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from invcrawl.common.listen import HostCheck, bearer_token, is_loopback
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.mcpserver.server import Connection, build_server
from invcrawl.mcpserver.shedding import ACCEPT_BATCH, server_limits, shedding_protocol
from invcrawl.process import interrupts
from invcrawl.process.secrets import mask_url

OPEN_PATHS = frozenset({"/healthz"})
MCP_PATH = "/mcp"


class Guard:
    """ASGI middleware: the Host check, then the token (``secret``; None: none asked),
    then the method: ``/mcp`` answers POST only (405)."""

    def __init__(self, app: ASGIApp, hosts: HostCheck, secret: str | None) -> None:
        self.app, self.hosts, self.secret = app, hosts, secret

    def authorised(self, headers: Headers) -> bool:
        if self.secret is None:
            return True
        token = bearer_token(headers.get("authorization"))
        return token is not None and hmac.compare_digest(token.encode(), self.secret.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            refused: Response | None = None
            if not self.hosts.accepts(headers.get("host")):
                refused = JSONResponse({"error": "unknown host"}, status_code=403)
            elif scope["path"] not in OPEN_PATHS and not self.authorised(headers):
                refused = JSONResponse(
                    {"error": "token needed"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
            elif scope["path"] == MCP_PATH and scope["method"] != "POST":
                # Stateless: no session to end (DELETE), no stream to push on (GET: the
                # SDK would hold an event stream open that never carries anything).
                refused = JSONResponse(
                    {"error": "method not allowed: this server answers POST only"},
                    status_code=405,
                    headers={"Allow": "POST"},
                )
            if refused is not None:
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


class QuietDisconnects(logging.Filter):
    """Drops the SDK's traceback of a client gone mid-request (``ClientDisconnect``: its
    body shed by ``mcpserver/shedding.py``, or it hung up): no error of this server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ClientDisconnect))


def build_app(
    connection: Connection, hosts: HostCheck, secret: str | None, max_chars: int
) -> ASGIApp:
    app = build_server(connection, max_chars).streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        # The Host header is checked by Guard, with --allow-host; the SDK's own check
        # knows loopback names only.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.add_route("/healthz", healthz, methods=["GET"])
    sdk_log = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, QuietDisconnects) for f in sdk_log.filters):
        sdk_log.addFilter(QuietDisconnects())
    return Guard(app, hosts, secret)


async def healthz(_: Request) -> Response:
    return PlainTextResponse("ok\n")


def say(text: str) -> None:
    print(f"invcrawl mcp: {text}", file=sys.stderr, flush=True)


async def serve(config: Config, secret: str | None) -> None:
    """Serve until SIGINT, SIGTERM or SIGHUP."""
    assert config.redis
    connection = Connection(config.redis, config.redis_cluster)
    if not is_loopback(config.bind):
        writer = await connection.frontier().write_allowed()
        if writer:
            await connection.aclose()
            raise ConfigError(
                f"--bind {config.bind} makes the MCP server reachable from other machines, "
                f"but the Redis user of --redis may write (it may run {writer}): connect as "
                "a read-only user (docs/deploy.md, invcrawl-reader)"
            )
    hosts = HostCheck(config.bind, config.allow_hosts)
    app = build_app(connection, hosts, secret, config.mcp_max_chars)
    sock = listen(config.bind, config.mcp_port)  # an OSError: the command says why
    limits = server_limits()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            http=shedding_protocol(limits),
            timeout_keep_alive=limits.keep_alive_s,
            backlog=ACCEPT_BATCH,
            # a stop waits this long at most for the answers under way
            timeout_graceful_shutdown=limits.keep_alive_s,
        )
    )
    loop = asyncio.get_running_loop()

    def stopped(signum: int) -> None:
        interrupts.record(signum)  # the command exits 130, 143 or 129
        server.should_exit = True

    # uvicorn answers SIGINT and SIGTERM itself (a graceful stop), then raises them again
    # for the handlers outside: these, which record them; SIGHUP comes here directly.
    with interrupts.loop_handlers(loop, stopped):
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        say(
            f"http://{shown}:{port}/mcp (Redis {mask_url(config.redis)}"
            f"{', token required' if secret else ''})"
        )
        try:
            await server.serve(sockets=[sock])
        finally:
            sock.close()
            await connection.aclose()


def listen(bind: str, port: int) -> socket.socket:
    """The socket listening on ``bind``:``port`` (0: any free port)."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind.strip("[]"), port))
        # listening now: a client that reads the address line and connects at once is
        # answered, not refused (uvicorn would only listen once it serves)
        sock.listen(ACCEPT_BATCH)
    except OSError:
        sock.close()
        raise
    return sock


def run_http(config: Config, secret: str | None) -> int:
    asyncio.run(serve(config, secret))
    return 0
