"""This consumer's side of fleet-wide politeness per host (the Redis side is
``frontier/hosts.py``).

:class:`HostGate` takes a permit before each request to a host (at most
``--host-concurrency`` in flight on a host across the fleet, starts at least
``--host-delay`` apart), keeps the permits it holds leased (the Worker's heartbeat renews
them; a consumer killed while holding one leaks it for one lease at most), releases each
when its response is in, and blocks a host for every consumer when it answers 429/503
with ``Retry-After``. It also remembers how long each host is unavailable, so that the
Worker claims pages of other hosts meanwhile instead of holding pages that cannot start.

``fetch/permits.HostPermitMiddleware`` applies it to every request of a Scrapy process
with a gate (the consumer's, and the producer's with Redis), right before download:
pages, inventories and robots.txt alike. No Scrapy here: the Worker uses the gate too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import defaultdict, deque
from collections.abc import Coroutine
from typing import Any

from invcrawl.frontier.hosts import Hosts
from invcrawl.frontier.retry import Outages

# A request that would wait longer than this for its host goes back to Redis as a
# postponed task instead (its claim is released with a not-before time), so that long
# blocks do not hold claims, leases and concurrency.
MAX_WAIT = 5.0
# A grant whose reply took longer than this to reach us (our event loop was busy, e.g.
# extracting a page) would start its request late, too close to the host's next start:
# it is handed back and asked for again. Only where a delay between starts is in force.
STALE_GRANT = 0.010
# A host cannot block the fleet for longer than this with one Retry-After (a hostile or
# broken header such as ``Retry-After: 99999999``); it can answer 429 again afterwards.
MAX_BLOCK = 3600.0
# Where no delay between starts is in force, a permit whose response is in is kept for
# this consumer's next request to the same host instead of a release and an acquire (two
# Redis round trips per page, measured at a fifth of the consumer's Redis work), for at
# most REUSE_WINDOW after Redis granted it: a block or a lower limit set meanwhile by
# another consumer reaches a reused permit within that time. A spare permit that no
# request takes within SPARE_IDLE goes back to Redis. Not less: a consumer's next request
# to the same host comes tens of ms after a response, and a shorter wait gives most
# spares back just before it (docs/performance.md, "Fleet levers").
REUSE_WINDOW = 0.5
SPARE_IDLE = 0.1


class HostBusy(Exception):
    """The host will not take a request for a while: postpone the page."""

    def __init__(self, origin: str, wait: float, why: str) -> None:
        super().__init__(f"{origin} is {why} for {wait:.1f}s")
        self.origin = origin
        self.wait = wait
        self.why = why


class HostGate:
    def __init__(
        self,
        hosts: Hosts,
        consumer_id: str,
        *,
        limit: int,
        delay: float,
        lease: float,
        outages: Outages,
        max_wait: float = MAX_WAIT,
        reuse: bool = True,
    ) -> None:
        self.hosts = hosts
        # A consumer hands a page whose host is not free within this back to Redis; the
        # producer, which has nothing else to do, waits longer for its inventory.
        self.max_wait = max_wait
        self.consumer_id = consumer_id
        self.limit = limit
        self.delay_ms = int(delay * 1000)
        self.lease = lease
        self.lease_ms = int(lease * 1000)
        # Redis outages are ridden out here as in the delivery loop: a permit is never
        # assumed, and never an error taken for the page's own failure.
        self.outages = outages
        self.stat = outages.stat
        self.held: dict[str, set[str]] = defaultdict(set)  # spare permits included
        self._seq = itertools.count(1)
        self._unavailable_until: dict[str, float] = {}  # monotonic
        self._granted_at: dict[str, float] = {}  # token -> monotonic time of its grant
        self._reusable: dict[str, bool] = {}  # origin -> no delay in force at last grant
        self._spare: dict[str, list[str]] = defaultdict(list)  # origin -> idle permits
        # origin -> requests of this consumer waiting for a full host: a permit this
        # consumer may reuse goes to the first of them at once, instead of waiting up to
        # 25 ms for its next look at Redis (host_acquire.lua's 'full' retry time).
        self._waiters: dict[str, deque[asyncio.Future[str | None]]] = defaultdict(deque)
        self._closing = not reuse  # a short-lived process (the producer) never keeps one
        self._background: set[asyncio.Task[None]] = set()

    async def acquire(self, origin: str, max_wait: float | None = None) -> str:
        """A permit for one request on ``origin``; waits (without blocking the loop) while
        the host is full or its next start is not due; raises :class:`HostBusy` when
        the wait would exceed ``max_wait``."""
        token = f"{self.consumer_id}:{next(self._seq)}"
        max_wait = self.max_wait if max_wait is None else max_wait
        waited = 0.0
        while True:
            spare = self._take_spare(origin)
            if spare is not None:
                self.stat("invcrawl/host_permits_reused", 1)
                return spare
            asked = time.monotonic()
            grant = await self.outages.call(
                lambda: self.hosts.acquire(origin, token, self.limit, self.delay_ms, self.lease_ms),
                give_up_when_stopping=True,
            )
            if grant is None:  # stopping during an outage: the page goes back to Redis
                raise HostBusy(origin, 1.0, "unreachable (Redis is down)")
            if grant.granted:
                late = time.monotonic() - asked
                if grant.wait_ms and late > min(STALE_GRANT, grant.wait_ms / 4000):
                    await self._release_now(origin, token)
                    self.stat("invcrawl/host_stale_grants", 1)
                    waited += late
                    continue
                self.held[origin].add(token)
                self._granted_at[token] = time.monotonic()
                self._reusable[origin] = grant.wait_ms == 0
                self.stat("invcrawl/host_permits", 1)
                return token
            wait = grant.wait_ms / 1000
            if grant.why == "blocked":
                self._unavailable_until[origin] = time.monotonic() + wait
            if waited + wait > max_wait:
                self.stat("invcrawl/host_postponed", 1)
                raise HostBusy(origin, wait, grant.why)
            self.stat(f"invcrawl/host_wait/{grant.why}", 1)
            if grant.why == "full":
                handed = await self._wait_for_handover(origin, wait)
                if handed is not None:
                    self.stat("invcrawl/host_permits_reused", 1)
                    return handed
                waited += wait
                continue
            # A little jitter, so that consumers waiting on one host do not ask in step.
            pause = wait * random.uniform(1.0, 1.2)
            await asyncio.sleep(pause)
            waited += pause

    async def release(self, origin: str, token: str) -> None:
        """The request is done with its permit: keep it for the next request to the host
        (see REUSE_WINDOW) or give it back."""
        if self._can_reuse(origin, token):
            if self._hand_over(origin, token):
                return
            self._spare[origin].append(token)
            asyncio.get_running_loop().call_later(SPARE_IDLE, self._spare_idle, origin, token)
            return
        await self._release_now(origin, token)

    async def close(self) -> None:
        """Give back the spare permits (the process is stopping)."""
        self._closing = True
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        for origin, tokens in list(self._spare.items()):
            for token in list(tokens):
                tokens.remove(token)
                await self._release_now(origin, token)

    def _can_reuse(self, origin: str, token: str) -> bool:
        granted_at = self._granted_at.get(token)
        return (
            not self._closing
            and self._reusable.get(origin, False)
            and granted_at is not None
            and time.monotonic() - granted_at < REUSE_WINDOW
            and self.unavailable_for(origin) == 0
        )

    async def _wait_for_handover(self, origin: str, timeout: float) -> str | None:
        """Wait up to ``timeout`` for a permit this consumer releases on ``origin``."""
        loop = asyncio.get_running_loop()
        handover: asyncio.Future[str | None] = loop.create_future()
        timer = loop.call_later(timeout, _settle, handover, None)
        waiters = self._waiters[origin]
        waiters.append(handover)
        try:
            return await handover
        except asyncio.CancelledError:  # the download was cancelled: never keep a permit
            if handover.done() and not handover.cancelled() and handover.result():
                self._in_background(self._release_now(origin, str(handover.result())))
            raise
        finally:
            timer.cancel()
            with contextlib.suppress(ValueError):
                waiters.remove(handover)

    def _hand_over(self, origin: str, token: str) -> bool:
        waiters = self._waiters.get(origin)
        while waiters:
            handover = waiters.popleft()
            if not handover.done():
                handover.set_result(token)
                return True
        return False

    def _take_spare(self, origin: str) -> str | None:
        spares = self._spare.get(origin)
        while spares:
            token = spares.pop()
            if self._can_reuse(origin, token):
                return token
            self._in_background(self._release_now(origin, token))
        return None

    def _spare_idle(self, origin: str, token: str) -> None:
        spares = self._spare.get(origin)
        if spares and token in spares:
            spares.remove(token)
            self._in_background(self._release_now(origin, token))

    def _in_background(self, release: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(release)
        self._background.add(task)  # the loop keeps only a weak reference
        task.add_done_callback(self._background.discard)

    async def _release_now(self, origin: str, token: str) -> None:
        """Give a permit back; through an outage, until its lease would have run out."""
        self.held[origin].discard(token)
        self._granted_at.pop(token, None)
        await self.outages.call(
            lambda: self.hosts.release(origin, token), deadline=time.monotonic() + self.lease
        )

    async def block(self, origin: str, seconds: float, reason: str) -> None:
        """The host asked us to back off (429/503 with Retry-After): block it fleet-wide."""
        self._unavailable_until[origin] = time.monotonic() + seconds
        for token in self._spare.pop(origin, []):
            await self._release_now(origin, token)
        self.stat("invcrawl/host_blocks", 1)
        await self.outages.call(
            lambda: self.hosts.block(origin, int(seconds * 1000), reason),
            deadline=time.monotonic() + seconds,
        )

    def waiting(self, origin: str) -> int:
        """How many of this consumer's requests wait for a permit of ``origin`` to be
        released (a full host)."""
        return sum(1 for handover in self._waiters.get(origin, ()) if not handover.done())

    def unavailable_for(self, origin: str | None) -> float:
        """Seconds before ``origin`` takes requests again, as this consumer last learnt."""
        if origin is None:
            return 0.0
        return max(0.0, self._unavailable_until.get(origin, 0.0) - time.monotonic())

    def room(self, origin: str | None, held_pages: int) -> int:
        """How many more pages of ``origin`` are worth holding: no more than could be in
        flight on it at once (pages beyond that would only wait)."""
        if origin is None:
            return 1 << 30
        return max(0, self.limit - held_pages)

    async def renew(self) -> None:
        """Heartbeat: extend the permits held; forget the ones whose lease ran out."""
        for origin, tokens in list(self.held.items()):
            if not tokens:
                del self.held[origin]
                continue
            lost = await self.hosts.renew(origin, list(tokens), self.lease_ms)
            if lost:
                self.stat("invcrawl/host_permits_lost", len(lost))
                self.held[origin] = tokens - lost
                spares = self._spare.get(origin, [])
                spares[:] = [token for token in spares if token not in lost]


def _settle(future: asyncio.Future[str | None], value: str | None) -> None:
    if not future.done():
        future.set_result(value)
