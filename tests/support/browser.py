"""A headless Debian ``chromium`` driven through its DevTools protocol (CDP) over a
websocket (aiohttp's client: no browser-automation package, no browser download).

``async with Browser.launch(profile_dir) as browser`` starts chromium with
``--remote-debugging-port=0``, reads the port it chose from ``DevToolsActivePort``,
and attaches to its first page. :meth:`Browser.send` sends one command and returns its
result; :meth:`Browser.evaluate` runs a JavaScript expression in the page. Only the
chromium process started here (and its own process group) is ever signalled.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, proc: subprocess.Popen[bytes], session: aiohttp.ClientSession) -> None:
        self.proc = proc
        self.session = session
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(
        cls, profile: Path, width: int = 1280, height: int = 900
    ) -> AsyncIterator[Browser]:
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed")
        profile.mkdir(parents=True, exist_ok=True)
        argv = [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",  # tests may run as root in a container
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        log = open(profile / "chromium.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        session = aiohttp.ClientSession()
        browser = cls(proc, session)
        try:
            port = await browser._port(profile / "DevToolsActivePort")
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t["type"] == "page")
            browser.ws = await session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
            await browser.send("Page.enable")
            await browser.send("Runtime.enable")
            yield browser
        finally:
            if browser.ws is not None:
                await browser.ws.close()
            await session.close()
            browser._stop()
            log.close()

    async def _port(self, active: Path, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrowserError(f"chromium exited with {self.proc.returncode}")
            with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
                return int(active.read_text().splitlines()[0])
            await asyncio.sleep(0.1)
        raise BrowserError("chromium did not open its DevTools port")

    def _stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        # chromium's own helpers (zygote, renderers) are in the group it leads
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.ws is not None
        call_id = next(self._ids)
        command = {"id": call_id, "method": method, "params": params or {}}
        await self.ws.send_str(json.dumps(command))
        async for message in self.ws:
            reply = json.loads(message.data)
            if reply.get("id") != call_id:
                continue  # an event
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error']}")
            result: dict[str, Any] = reply.get("result", {})
            return result
        raise BrowserError("the DevTools connection closed")

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def navigate(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})

    async def viewport(self, width: int, height: int, mobile: bool = False) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    async def screenshot(self, path: Path, full_page: bool = True) -> bytes:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        data = base64.b64decode((await self.send("Page.captureScreenshot", params))["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data
