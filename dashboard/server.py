"""The dashboard's web server (aiohttp): one static page, its data as JSON and as a
server-sent event stream, and an optional token the page asks for.

One :class:`Sampler` per process reads the fleet view every ``interval`` seconds (the
same :func:`invcrawl.frontier.status.status_view` as ``invcrawl status --json``) and serialises it
once; every open page gets that same snapshot, so the load on Redis does not grow with
the number of viewers. The process only ever reads Redis (a test checks every command it
sends), and its throughput history lives in its own memory. Through a Redis restart or a
dropped connection the page shows the error and the sampler reads again with backoff
(``frontier/retry.py``: said once on standard error); ``/api/events`` goes on.

Routes: ``GET /`` the page; ``GET /api/status`` the latest snapshot (JSON);
``GET /api/events`` the snapshots as server-sent events; ``GET /api/crawl/{id}`` one
crawl in detail (``status --crawl-id ID --json`` with its dead letters), read on demand;
``POST /api/login`` trades the token for a session cookie; ``GET /metrics`` the fleet's
gauges for Prometheus, from the same snapshot (dashboard/metrics.py); ``GET /healthz``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable
from html import escape as html_escape
from importlib import resources
from typing import Any

from aiohttp import web
from redis.exceptions import RedisError

from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.dashboard.access import HostCheck, is_loopback, session_value
from invcrawl.dashboard.metrics import CONTENT_TYPE_LATEST, exposition
from invcrawl.dashboard.snapshot import Throughput, crawl_detail, take
from invcrawl.frontier.connection import connect, is_transient
from invcrawl.frontier.retry import Note, Outage, RetryWaits
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.values import CrawlNotFound
from invcrawl.process import interrupts
from invcrawl.process.secrets import mask_secrets, mask_url

log = logging.getLogger(__name__)

COOKIE = "invcrawl_dashboard"
INTERVAL_S = 1.0  # the page is updated at most this often (the issue asks <= 2 s)
KEEPALIVE_S = 15.0
SAMPLER: web.AppKey[Sampler] = web.AppKey("sampler")
SECRET: web.AppKey[str | None] = web.AppKey("secret")
PAGE: web.AppKey[tuple[bytes, str]] = web.AppKey("page")
STREAMS: web.AppKey[set[asyncio.Task[Any]]] = web.AppKey("streams")
FOCUS: web.AppKey[str | None] = web.AppKey("focus")
HOSTS: web.AppKey[HostCheck] = web.AppKey("hosts")


# -- who may look ----------------------------------------------------------------------


def authorised(request: web.Request) -> bool:
    secret = request.app[SECRET]
    if secret is None:
        return True
    bearer = request.headers.get("Authorization", "")
    if bearer.startswith("Bearer ") and hmac.compare_digest(bearer[7:].encode(), secret.encode()):
        return True
    cookie = request.cookies.get(COOKIE, "")
    return hmac.compare_digest(cookie.encode(), session_value(secret).encode())


# -- the sampler -------------------------------------------------------------------------


class Sampler:
    """Reads the fleet view every ``interval`` seconds; pages wait on :meth:`next`."""

    def __init__(
        self,
        frontier: Frontier,
        redis_url: str,
        lease_ms: int,
        interval: float = INTERVAL_S,
        note: Note | None = None,
    ) -> None:
        self.frontier = frontier
        self.redis_url = redis_url
        self.lease_ms = lease_ms
        self.interval = interval
        self.throughput = Throughput()
        self.data: dict[str, Any] | None = None  # the latest snapshot (for /metrics)
        self.body = b""
        self.version = 0
        self._changed = asyncio.Condition()
        # Redis restarting or a dropped connection: said once, read again with backoff
        # (the page shows the error meanwhile), as every long-running reader does.
        self.outage = Outage("the dashboard", note)
        self.backoff = RetryWaits()

    async def sample(self) -> None:
        try:
            data = await take(self.frontier, self.redis_url, self.lease_ms, self.throughput)
        except (RedisError, OSError) as exc:
            if is_transient(exc):
                self.outage.lost(exc)
            else:
                log.warning("reading the status failed: %s", exc)
            data = {"error": mask_secrets(f"cannot read Redis at {self.redis_url}: {exc}")}
        except Exception as exc:  # a bug must not stop the page's updates for good
            log.exception("building the status failed")
            data = {"error": mask_secrets(f"the dashboard could not build the status: {exc!r}")}
        else:
            self.outage.over()
            self.backoff.reset()
        async with self._changed:
            self.data = data
            self.body = json.dumps(data, separators=(",", ":")).encode()
            self.version += 1
            self._changed.notify_all()

    async def run(self) -> None:
        task = asyncio.current_task()
        while True:
            await self.sample()
            # A cancellation that lands inside a Redis call can come out of redis-py as
            # its TimeoutError, which sample() reports: stop all the same.
            if task is not None and task.cancelling():
                raise asyncio.CancelledError
            await asyncio.sleep(
                max(self.backoff.next(), self.interval) if self.outage.down else self.interval
            )

    async def next(self, after: int, timeout: float) -> tuple[bytes, int] | None:
        """The first snapshot newer than version ``after``; None after ``timeout``."""
        async with self._changed:
            try:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.version > after), timeout
                )
            except TimeoutError:
                return None
            return self.body, self.version


# -- the routes ----------------------------------------------------------------------------


def load_page() -> tuple[bytes, str]:
    """The page, and the Content-Security-Policy that allows its one inline script."""
    html = (
        resources.files(__package__ or "invcrawl.dashboard")
        .joinpath("static/index.html")
        .read_bytes()
    )
    scripts = re.findall(rb"<script>(.*?)</script>", html, re.S)
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s).digest()).decode() + "'" for s in scripts
    )
    csp = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    return html, csp


async def index(request: web.Request) -> web.Response:
    html, csp = request.app[PAGE]
    focus = request.app[FOCUS]
    if focus:  # --crawl-id: the page opens filtered on it
        meta = f'<meta name="invcrawl-filter" content="{html_escape(focus)}">'
        html = html.replace(b"</head>", meta.encode() + b"\n</head>", 1)
    return web.Response(
        body=html,
        content_type="text/html",
        charset="utf-8",
        headers={"Content-Security-Policy": csp, "Cache-Control": "no-cache"},
    )


async def status(request: web.Request) -> web.Response:
    sampler = request.app[SAMPLER]
    got = await sampler.next(0, KEEPALIVE_S)  # waits only before the first snapshot
    if got is None:
        raise web.HTTPServiceUnavailable(text="no status read yet")
    return web.Response(body=got[0], content_type="application/json")


async def crawl(request: web.Request) -> web.Response:
    """One crawl in detail, read when asked (the page asks every 2 s while it shows it)."""
    sampler = request.app[SAMPLER]
    try:
        data = await crawl_detail(
            sampler.frontier, request.match_info["crawl_id"], sampler.lease_ms
        )
    except CrawlNotFound:
        return web.json_response({"error": "no such crawl"}, status=404)
    except (RedisError, OSError) as exc:
        if not is_transient(exc):
            raise
        sampler.outage.lost(exc)
        return web.json_response({"error": "Redis is unavailable: asking again"}, status=503)
    return web.json_response(data)


async def events(request: web.Request) -> web.StreamResponse:
    sampler = request.app[SAMPLER]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    await response.write(b"retry: 2000\n\n")
    version = 0
    task = asyncio.current_task()
    assert task is not None
    request.app[STREAMS].add(task)  # cancelled at shutdown: streams never end by themselves
    try:
        while True:
            got = await sampler.next(version, KEEPALIVE_S)
            if got is None:
                await response.write(b": keepalive\n\n")
                continue
            body, version = got
            await response.write(b"data: " + body + b"\n\n")
    except ConnectionResetError:
        return response
    finally:
        request.app[STREAMS].discard(task)


async def login(request: web.Request) -> web.Response:
    secret = request.app[SECRET]
    try:
        given = str((await request.json()).get("token", ""))
    except (ValueError, AttributeError):
        given = ""
    if secret is None:
        return web.json_response({"ok": True})
    if not hmac.compare_digest(given.encode(), secret.encode()):
        await asyncio.sleep(0.5)  # slows guessing down
        return web.json_response({"ok": False}, status=401)
    response = web.json_response({"ok": True})
    response.set_cookie(COOKIE, session_value(secret), httponly=True, samesite="Strict")
    return response


async def metrics(request: web.Request) -> web.Response:
    """The fleet's gauges in Prometheus's text format, from the latest snapshot."""
    sampler = request.app[SAMPLER]
    await sampler.next(0, KEEPALIVE_S)  # waits only before the first snapshot
    body = exposition(lambda: sampler.data)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok\n")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host and token checks; headers that keep the page to itself."""
    open_paths = ("/", "/healthz", "/api/login")
    if not request.app[HOSTS].accepts(request.headers.get("Host")):
        response: web.StreamResponse = web.json_response({"error": "unknown host"}, status=403)
    elif request.path not in open_paths and not authorised(request):
        response = web.json_response({"error": "token needed"}, status=401)
    else:
        response = await handler(request)
    response.headers.setdefault("Cache-Control", "no-store")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def build_app(
    sampler: Sampler,
    secret: str | None,
    focus: str | None = None,
    hosts: HostCheck | None = None,
) -> web.Application:
    """The application; it starts and stops ``sampler`` with itself. ``focus``: the
    filter the page opens with; ``hosts``: the Host headers it answers (default: those
    of a loopback bind)."""
    app = web.Application(middlewares=[guard])
    app[FOCUS] = focus
    app[HOSTS] = hosts or HostCheck("127.0.0.1")
    app[SAMPLER] = sampler
    app[SECRET] = secret
    app[PAGE] = load_page()
    app[STREAMS] = set()
    app.router.add_get("/", index)
    app.router.add_get("/api/status", status)
    app.router.add_get("/api/crawl/{crawl_id}", crawl)
    app.router.add_get("/api/events", events)
    app.router.add_post("/api/login", login)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)

    async def sampling(_: web.Application) -> Any:
        task = asyncio.create_task(sampler.run())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def end_streams(app: web.Application) -> None:
        streams: set[asyncio.Task[Any]] = app[STREAMS]
        for task in list(streams):
            task.cancel()

    app.cleanup_ctx.append(sampling)
    app.on_shutdown.append(end_streams)
    return app


# -- running it ------------------------------------------------------------------------------


def say(text: str) -> None:
    """A note on standard error, one line (a Redis outage the dashboard rides out)."""
    print(f"invcrawl dashboard: {text}", file=sys.stderr, flush=True)


async def serve(config: Config, secret: str | None) -> None:
    """Serve until SIGINT, SIGTERM or SIGHUP."""
    assert config.redis
    frontier = Frontier(connect(config.redis, config.redis_cluster))
    if not is_loopback(config.bind):
        writer = await frontier.write_allowed()
        if writer:
            await frontier.aclose()
            raise ConfigError(
                f"--bind {config.bind} makes the dashboard reachable from other machines, "
                f"but the Redis user of --redis may write (it may run {writer}): connect as "
                "a read-only user (docs/deploy.md, invcrawl-reader)"
            )
    sampler = Sampler(frontier, config.redis, config.lease_ms, note=say)
    hosts = HostCheck(config.bind, config.allow_hosts)
    runner = web.AppRunner(
        build_app(sampler, secret, config.crawl_id, hosts),
        access_log=None,
        handle_signals=False,
        shutdown_timeout=1.0,
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, config.bind, config.port)
        await site.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopped(signum: int) -> None:
            interrupts.record(signum)  # the command exits 130 or 143
            stop.set()

        with interrupts.loop_handlers(loop, stopped):
            for host, port in (a[:2] for a in runner.addresses):
                shown = f"[{host}]" if ":" in host else host
                print(
                    f"invcrawl dashboard: http://{shown}:{port}/ (Redis {mask_url(config.redis)}"
                    f"{', token required' if secret else ''})",
                    file=sys.stderr,
                    flush=True,
                )
            await stop.wait()
    finally:
        await runner.cleanup()
        await frontier.aclose()


def run_dashboard(config: Config, secret: str | None) -> int:
    """Serve the dashboard until SIGINT, SIGTERM or SIGHUP (an OSError: it could not
    listen)."""
    asyncio.run(serve(config, secret))
    return 0
