"""``invcrawl dashboard``: a read-only web page over the same status data as ``invcrawl
status --json`` (``frontier/status.status_view``, one code path for both), served by
aiohttp (already installed with Scrapy).

Routes: ``/`` the page (``invcrawl/static/dashboard.html``: one file, no build step, no
CDN), ``/api/status`` the fleet (every crawl, busy hosts, totals), ``/api/crawl/{id}`` one
crawl in detail (slots, consumers with their heartbeats) with its dead letters. The page
polls every 2 s and keeps the throughput history itself, so the server keeps no state and
never writes to Redis (only reads: a test checks Redis's own command counters).

Binding anything but loopback requires ``--token``: every request must then carry it
(``Authorization: Bearer TOKEN``, or ``?token=`` once, which the page keeps for its
session). The Redis URL is shown with its password masked.
"""

from __future__ import annotations

import hmac
import ipaddress
from importlib import resources
from typing import Any

from aiohttp import web

from common.config import Config, ConfigError
from common.secrets import mask_url
from frontier import admin
from frontier.session import CrawlNotFound, Frontier
from frontier.status import status_view

FRONTIER: web.AppKey[Frontier] = web.AppKey("frontier", Frontier)
JSON = "application/json"
SETTINGS: web.AppKey[dict[str, Any]] = web.AppKey("settings", dict)


def check_bind(bind: str, token: str | None) -> None:
    """A dashboard reachable from other machines must ask for a token."""
    if token:
        return
    host = bind.strip("[]")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise ConfigError(
            f"--bind {bind} exposes the dashboard beyond this machine: also give --token "
            "(or INVCRAWL_DASHBOARD_TOKEN), which the page then asks for"
        )


@web.middleware
async def require_token(request: web.Request, handler: Any) -> web.StreamResponse:
    token = request.app[SETTINGS]["token"]
    if token and request.path.startswith("/api/"):
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        given = given or request.query.get("token", "")
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise web.HTTPUnauthorized(
                text='{"error": "token required"}', content_type="application/json"
            )
    return await handler(request)


async def page(request: web.Request) -> web.Response:
    html = resources.files("invcrawl").joinpath("static/dashboard.html").read_text("utf-8")
    return web.Response(text=html, content_type="text/html", headers={"Cache-Control": "no-store"})


async def fleet(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    data, settled = await status_view(request.app[FRONTIER], None, settings["lease_ms"])
    data["settled"] = settled
    data["redis"] = settings["redis"]
    return web.json_response(data)


async def crawl(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    crawl_id = request.match_info["crawl_id"]
    frontier = request.app[FRONTIER]
    try:
        data, settled = await status_view(frontier, crawl_id, settings["lease_ms"])
    except CrawlNotFound:
        raise web.HTTPNotFound(
            text='{"error": "no such crawl"}', content_type="application/json"
        ) from None
    data["settled"] = settled
    data["dead_letters"] = await admin.dead_tasks(frontier.crawl(crawl_id))
    data["redrive_command"] = f"invcrawl dlq redrive --all --crawl-id {crawl_id}"
    return web.json_response(data)


def build_app(frontier: Frontier, config: Config) -> web.Application:
    app = web.Application(middlewares=[require_token])
    app[FRONTIER] = frontier
    app[SETTINGS] = {
        "token": config.dashboard_token,
        "lease_ms": config.lease_ms,
        "redis": mask_url(config.redis or ""),
    }
    app.router.add_get("/", page)
    app.router.add_get("/api/status", fleet)
    app.router.add_get("/api/crawl/{crawl_id}", crawl)

    async def close(app: web.Application) -> None:
        await app[FRONTIER].aclose()

    app.on_cleanup.append(close)
    return app
