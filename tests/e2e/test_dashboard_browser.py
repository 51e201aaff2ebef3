"""The dashboard in a real headless browser (Debian's chromium, driven through its
DevTools protocol over aiohttp's websocket client): a crawl runs against a slow loopback
site, `invcrawl dashboard` serves the page, and the crawl's row appears and its progress
moves. The screenshot is kept in tests/artifacts/dashboard.png."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from frontier.server import RedisServer
from support.cli import clean_env
from support.httpserver import serve
from support.synthsite import generate

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer")


class Browser:
    """Just enough of the DevTools protocol: navigate, evaluate, screenshot."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.seq = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.seq += 1
        await self.ws.send_json({"id": self.seq, "method": method, "params": params})
        while True:
            msg = await self.ws.receive_json(timeout=30)
            if msg.get("id") == self.seq:
                assert "error" not in msg, msg
                return dict(msg.get("result", {}))

    async def eval(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_dashboard_shows_a_running_crawl_and_its_progress(tmp_path: Path) -> None:
    root = tmp_path / "site"
    generate(root, pages=40, per_page=3)
    dash_port, cdp_port = free_port(), free_port()
    with (
        RedisServer(tmp_path / "redis") as server,
        serve(root, lambda p: "delay:150" if p.endswith(".html") else None) as http,
    ):
        env = clean_env()
        crawl = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "crawl", http.url, "--redis", server.url,
             "--crawl-id", "watched", "--consumers", "1", "--concurrency", "2",
             "--progress", "none", "-o", str(tmp_path / "out.jsonl")],
            cwd=tmp_path, env=env, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        dash = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "dashboard", "--redis", server.url,
             "--port", str(dash_port)],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        browser = subprocess.Popen(
            [CHROMIUM or "", "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", f"--remote-debugging-port={cdp_port}",
             f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_http(f"http://127.0.0.1:{dash_port}/api/status", 30)
            wait_http(f"http://127.0.0.1:{cdp_port}/json/version", 30)
            shot, first, later, header = asyncio.run(
                _drive(f"http://127.0.0.1:{cdp_port}", f"http://127.0.0.1:{dash_port}/")
            )
        finally:
            for proc in (browser, dash, crawl):
                proc.terminate()
            for proc in (browser, dash, crawl):
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "dashboard.png").write_bytes(shot)
    assert shot.startswith(b"\x89PNG") and len(shot) > 10_000
    assert first is not None, "the crawl's row never appeared"
    assert later[0] > first[0], (first, later)  # its progress moved
    assert later[1] == first[1] == 40 + 1  # pages total (index + 40 pages)
    assert "redis://127.0.0.1:" in header


async def _drive(cdp: str, page: str) -> tuple[bytes, Any, Any, str]:
    async with aiohttp.ClientSession() as session:
        async with session.put(f"{cdp}/json/new?about:blank") as r:
            target = json.loads(await r.text())
        async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            b = Browser(ws)
            await b.call("Page.enable")
            await b.call("Page.navigate", url=page)
            row = "document.querySelector('tr.crawl[data-id=\"watched\"] td:nth-child(4)')"
            done = f"({row} ? {row}.textContent.split('/').map(Number) : null)"
            first = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (first := await b.eval(done)):
                await asyncio.sleep(0.2)
            later = first
            while time.monotonic() < deadline and first and later and later[0] <= first[0]:
                await asyncio.sleep(0.5)
                later = await b.eval(done)
            header = await b.eval("document.querySelector('#redis').textContent")
            png = await b.call("Page.captureScreenshot", format="png")
            return base64.b64decode(png["data"]), first, later, str(header)
