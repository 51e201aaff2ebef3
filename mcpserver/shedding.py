"""Shedding slow clients of ``invcrawl mcp --http`` (issue 46.2). uvicorn closes a
connection idle between two requests (``timeout_keep_alive``), but nothing bounds a
connection that never finishes its headers (nor its body): 150 of them, before any token
is checked, held every descriptor of a server limited to 128 and every normal call timed
out. So the HTTP protocol of :func:`shedding_protocol` (uvicorn's h11 one) adds, below
the ASGI app and so before the token check:

* a header deadline: a request's headers complete within ``Limits.header_s`` of the
  connection's start or of the previous answer, or the connection is answered 408 and
  closed (a deadline, not an idle timer: a byte every few seconds does not extend it);
* an idle bound on a body: silence of ``Limits.idle_s`` while a request's body is awaited
  is answered 408 too (no bound while the server itself works on an answer);
* caps on open connections: ``Limits.per_client`` of one client address and
  ``Limits.total`` in all (below the descriptor limit, so that Redis and the normal
  calls always have descriptors); a connection beyond either is answered 503 at once.

The answers are written raw: the connection is closed after them, whatever state h11
had reached."""

from __future__ import annotations

import asyncio
import json
import resource
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DESCRIPTORS_KEPT = 48  # for Redis, the listening socket, logs and imports
# Connections asyncio accepts in one turn of the loop, before any is shed (its batch is
# the listen backlog): descriptors kept for them too. asyncio (3.11) that meets EMFILE
# mid-batch logs it for every remaining turn of the batch and schedules as many retries,
# which starved the loop: 150 connections at once left it answering nothing.
ACCEPT_BATCH = 32
MOST_CONNECTIONS = 1024
PER_CLIENT = 32


def connection_cap(
    kept: int = DESCRIPTORS_KEPT + ACCEPT_BATCH, most: int = MOST_CONNECTIONS
) -> int:
    """Open connections that leave ``kept`` descriptors of this process's soft limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return most
    return max(8, min(most, soft - kept))


def server_limits() -> Limits:
    """The limits of a server in this process: one address holds at most half of all
    connections, so that it cannot shed another's."""
    total = connection_cap()
    return Limits(total=total, per_client=min(PER_CLIENT, max(1, total // 2)))


@dataclass(frozen=True, slots=True)
class Limits:
    header_s: float = 10.0  # to the end of a request's headers
    idle_s: float = 10.0  # silence while a body is awaited
    keep_alive_s: int = 5  # an idle connection between two requests (uvicorn's own)
    per_client: int = PER_CLIENT  # open connections of one client address
    total: int = MOST_CONNECTIONS  # open connections in all


def raw_answer(status: int, reason: str, error: str, extra: str = "") -> bytes:
    """A whole HTTP/1.1 answer that closes the connection: ``{"error": ...}`` as the
    Guard's refusals (``mcpserver/http.py``) are written."""
    body = json.dumps({"error": error}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n{extra}\r\n"
    )
    return head.encode() + body


class SheddingProtocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and caps of :class:`Limits`; a subclass
    per server (:func:`shedding_protocol`) holds them and its count of connections."""

    limits: ClassVar[Limits] = Limits()
    open_by_client: ClassVar[Counter[str]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._address: str | None = None  # admitted: counted in open_by_client
        self._headers_due: asyncio.TimerHandle | None = None
        self._body_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else ""
        # Only admitted connections count: one being shed is gone a moment later, and a
        # batch of them must not make the caps shed another address's (len(connections)
        # counted them).
        if self.open_by_client[address] >= self.limits.per_client:
            self._shed(503, "Service Unavailable", "too many open connections from this address")
        elif self.open_by_client.total() >= self.limits.total:
            self._shed(503, "Service Unavailable", "too many open connections")
        else:
            self._address = address
            self.open_by_client[address] += 1
            self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._address is not None:  # admitted
            self.open_by_client[self._address] -= 1
            if self.open_by_client[self._address] <= 0:
                del self.open_by_client[self._address]
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next, pipelined, request
        self._watch()

    def _watch(self) -> None:
        """The timer the client's state calls for: waiting for headers, the deadline
        (armed once per request); for a body, the idle bound (armed again on each
        byte); else, the server works or the connection ends: none."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._headers_due is None:
                self._headers_due = self.loop.call_later(
                    self.limits.header_s, self._expired, "headers"
                )
            self._cancel_body()
            return
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None
        self._cancel_body()
        if state is h11.SEND_BODY:
            self._body_due = self.loop.call_later(self.limits.idle_s, self._expired, "body")

    def _expired(self, what: str) -> None:
        self._headers_due = self._body_due = None
        if self.transport.is_closing():
            return
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # nothing written yet
            seconds = self.limits.header_s if what == "headers" else self.limits.idle_s
            error = (
                f"request headers not complete within {seconds:g}s"
                if what == "headers"
                else f"request body idle for {seconds:g}s"
            )
            self.transport.write(raw_answer(408, "Request Timeout", error))
        self.transport.close()

    def _shed(self, status: int, reason: str, error: str) -> None:
        self.transport.write(raw_answer(status, reason, error, "retry-after: 1\r\n"))
        self.transport.close()

    def _cancel_body(self) -> None:
        if self._body_due is not None:
            self._body_due.cancel()
            self._body_due = None

    def _cancel(self) -> None:
        self._cancel_body()
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None


def shedding_protocol(limits: Limits) -> type[SheddingProtocol]:
    """The protocol class of one server: ``limits``, and a count of its own."""
    return type(
        "ServerSheddingProtocol",
        (SheddingProtocol,),
        {"limits": limits, "open_by_client": Counter()},
    )
