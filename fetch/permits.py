"""The Scrapy side of fleet-wide host politeness: :class:`HostPermitMiddleware` takes a
permit of the process's :class:`~invcrawl.fetch.politeness.HostGate` right before each download
and gives it back when the response or the error is in; a 429/503 with ``Retry-After``
blocks the host for the fleet."""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response

from invcrawl.fetch.failures import parse_retry_after
from invcrawl.fetch.meta import PERMIT
from invcrawl.fetch.politeness import MAX_BLOCK, HostGate
from invcrawl.fetch.shared import SharedKey
from invcrawl.frontier.hosts import origin_of

# The process's gate (the consumer's Worker's, or the producer's), for its middlewares.
HOST_GATE: SharedKey[HostGate] = SharedKey("INVCRAWL_HOST_GATE")


class HostPermitMiddleware:
    """Scrapy downloader middleware: a host permit around every download. Off without a
    host gate in the settings (no Redis: ``invcrawl inventory``)."""

    def __init__(self, gate: HostGate) -> None:
        self.gate = gate

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostPermitMiddleware:
        gate = HOST_GATE.get(crawler.settings)
        if gate is None:
            raise NotConfigured
        return cls(gate)

    async def process_request(self, request: Request) -> None:
        origin = origin_of(request.url)
        if origin is None:
            return
        token = await self.gate.acquire(origin)
        request.meta[PERMIT] = (origin, token)

    async def process_response(self, request: Request, response: Response) -> Response:
        permit = request.meta.pop(PERMIT, None)
        if permit is None:
            return response
        origin, token = permit
        await self.gate.release(origin, token)
        if response.status in (429, 503):
            header = response.headers.get(b"Retry-After")
            retry_after = parse_retry_after(header.decode("latin-1") if header else None)
            if retry_after:
                await self.gate.block(
                    origin, min(retry_after, MAX_BLOCK), f"HTTP {response.status}"
                )
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        permit = request.meta.pop(PERMIT, None)
        if permit is not None:
            await self.gate.release(*permit)
