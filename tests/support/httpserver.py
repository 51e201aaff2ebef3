"""A loopback static HTTP server for tests and the fault harness, with fault injection.

Serves a directory like a docs host (``a/`` serves ``a/index.html``), on any loopback
address (127.0.0.2, 127.0.0.3... are distinct hosts). ``faults`` maps a request to an
action so that tests can make pages fail the way real hosts do: ``"500"`` / ``"503"`` /
``"429"`` (a status; ``"429:2"`` with ``Retry-After: 2``), ``"reset"`` (the TCP
connection is closed abruptly, with an RST), ``"hang"`` (no answer until the client
times out), ``"delay:<ms>"`` (the page is served after a pause: slow hosts keep
consumers busy), ``"redirect:<status>:<location>"`` and ``"type:<Content-Type>"`` (the
file served with that header, e.g. a charset that does not match its bytes). Every
request is logged with its start and end time as the server saw them
(:attr:`StaticServer.log`), for politeness checks.

``validators`` chooses how the server answers conditional requests: ``"http"`` (the
default of Python's server: ``Last-Modified`` and ``If-Modified-Since``), ``"etag"`` (also
an ``ETag`` from the file's bytes, honouring ``If-None-Match``), or ``"none"`` (no
validator sent, every request answered in full).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Fault = Callable[[str], str | None]


class _Handler(SimpleHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = code
        super().send_response(code, message)

    def do_GET(self) -> None:
        started = time.monotonic()
        self._status = 0
        try:
            self._get()
        finally:
            with self.server.lock:
                self.server.log.append(Request(self.path, started, time.monotonic(), self._status))

    def end_headers(self) -> None:
        if self.server.validators == "etag" and getattr(self, "_etag", None):
            self.send_header("ETag", self._etag)
        super().end_headers()

    def send_header(self, keyword: str, value: str) -> None:
        if self.server.validators == "none" and keyword == "Last-Modified":
            return
        super().send_header(keyword, value)

    def _conditional(self) -> bool:
        """Answer 304 when the client's validators match (True: answered)."""
        self._etag = None
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if self.server.validators == "none":
            del self.headers["If-Modified-Since"]
            return False
        if self.server.validators != "etag" or not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            self._etag = '"' + hashlib.sha256(f.read()).hexdigest()[:20] + '"'
        if self.headers.get("If-None-Match") == self._etag:
            self.send_response(304)
            self.end_headers()
            return True
        del self.headers["If-Modified-Since"]  # If-None-Match wins (RFC 9110)
        return False

    def _get(self) -> None:
        self.server.requests.append(self.path)
        action = self.server.fault(self.path) if self.server.fault else None
        if action is None:
            if not self._conditional():
                super().do_GET()
            return
        if action.startswith("delay:"):
            time.sleep(int(action[6:]) / 1000)
            super().do_GET()
            return
        self.server.faults_served.append((self.path, action))
        if action.startswith("type:"):
            path = self.translate_path(self.path)
            with open(os.path.join(path, "index.html") if os.path.isdir(path) else path, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", action[5:])
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if action == "reset":
            # SO_LINGER 0: close() sends RST, as a crashed proxy would.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if action == "hang":
            time.sleep(self.server.hang_seconds)
            self.close_connection = True
            return
        if action.startswith("redirect:"):  # "redirect:302:<location>"
            status, _, location = action[9:].partition(":")
            self.send_response(int(status))
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, _, retry_after = action.partition(":")
        self.send_response(int(status))
        if status in ("429", "503"):
            self.send_header("Retry-After", retry_after or "1")
        self.send_header("Content-Length", "0")
        self.end_headers()


@dataclass(frozen=True)
class Request:
    """One request as the server saw it (monotonic seconds of this process)."""

    path: str
    start: float
    end: float
    status: int


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, root: Path, fault: Fault | None, hang_seconds: float, host: str, validators: str
    ) -> None:
        super().__init__((host, 0), partial(_Handler, directory=str(root)))
        self.validators = validators
        self.fault = fault
        self.hang_seconds = hang_seconds
        self.requests: list[str] = []
        self.faults_served: list[tuple[str, str]] = []
        self.log: list[Request] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out or are killed break pipes: expected here, not news


class StaticServer:
    def __init__(
        self,
        root: Path,
        fault: Fault | None = None,
        hang_seconds: float = 5.0,
        host: str = "127.0.0.1",
        validators: str = "http",
    ):
        self._server = _Server(Path(root), fault, hang_seconds, host, validators)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    @property
    def requests(self) -> list[str]:
        return self._server.requests

    @property
    def faults_served(self) -> list[tuple[str, str]]:
        return self._server.faults_served

    @property
    def log(self) -> list[Request]:
        with self._server.lock:
            return list(self._server.log)

    def start(self) -> StaticServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextlib.contextmanager
def serve(
    root: Path,
    fault: Fault | None = None,
    hang_seconds: float = 5.0,
    host: str = "127.0.0.1",
    validators: str = "http",
) -> Iterator[StaticServer]:
    server = StaticServer(root, fault, hang_seconds, host, validators).start()
    try:
        yield server
    finally:
        server.stop()


def flaky(
    share: float,
    seed: int = 7,
    actions: tuple[str, ...] = ("500", "reset", "hang"),
    only: Callable[[str], bool] = lambda p: p.endswith(".html"),
) -> Fault:
    """A fault policy failing ``share`` of the matching requests at random."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def fault(path: str) -> str | None:
        if not only(path):
            return None
        with lock:
            return rng.choice(actions) if rng.random() < share else None

    return fault
