"""The HTTP endpoint of a consumer's Prometheus metrics (``consume --metrics-port``), and
who may read it: on loopback (the default bind) anyone of this machine; any other
``--bind`` needs ``--metrics-token`` (``INVCRAWL_METRICS_TOKEN``; ``common/listen.py``
checks it), which Prometheus sends as ``Authorization: Bearer TOKEN`` (the dashboard's
rule, ``dashboard/access.py``: its counters name the crawls and the hosts crawled). A
token given is asked for on loopback too. Served from a thread of the consumer
(``wsgiref``, as ``prometheus_client`` serves it, with the check in front)."""

from __future__ import annotations

import hmac
import socket
import threading
from collections.abc import Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

WSGIApp = Any  # (environ, start_response) -> iterable of bytes


def guarded(app: WSGIApp, token: str | None) -> WSGIApp:
    """``app`` behind the token check (none: ``app``)."""
    if not token:
        return app
    expected = f"Bearer {token}".encode()

    def check(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        given = str(environ.get("HTTP_AUTHORIZATION", "")).encode("utf-8", "replace")
        if hmac.compare_digest(given, expected):
            return app(environ, start_response)  # type: ignore[no-any-return]
        start_response(
            "401 Unauthorized",
            [("Content-Type", "text/plain"), ("WWW-Authenticate", 'Bearer realm="invcrawl"')],
        )
        return [b"invcrawl: these metrics ask for their token (Authorization: Bearer TOKEN)\n"]

    return check


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per scrape on the consumer's standard error."""


def serve(registry: CollectorRegistry, bind: str, port: int, token: str | None) -> WSGIServer:
    """Serve ``registry`` at ``http://bind:port/metrics`` from a daemon thread; OSError
    when the address cannot be had."""
    family = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]

    class Server(ThreadingWSGIServer):
        address_family = family

    app = guarded(make_wsgi_app(registry), token)
    server = make_server(bind, port, app, Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
