"""Which crawl a consumer claims from next: weighted round-robin over the crawls it
serves, with a backoff for crawls that had nothing to claim. Pure: no Redis, no Scrapy.

Every claim turn spreads the consumer's free capacity over the ready crawls in
proportion to their weights, by stride scheduling: each crawl has a *pass*, the turn
takes the ready crawl with the lowest (the one served longest ago, ties in the order
they became ready) and advances its pass by ``STRIDE / weight``. Over time each
backlogged crawl gets ``weight / total`` of the pages, interleaved rather than in runs,
so a small site queued behind a large one starts at the next free slot instead of
waiting for the large one to drain.

A crawl whose claim came back empty is *idle* for a while (50 ms, doubling to 1 s), so
a consumer serving thousands of crawls does not ask each of them every time a page ends;
it comes back at the pass of the last crawl served (an idle crawl banks no turns).

The ready crawls are a heap by pass and the idle ones a heap by when they are due, so a
turn costs ``O(free · log n)`` of the ``n`` crawls served, not ``O(free · n)``: with
10,000 crawls open the list walks took half of a consumer's CPU (issue 39). Entries of a
crawl that went idle, woke or was removed are left in the heaps and skipped when they
come up (each carries the lane's ``version``).
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

IDLE_MIN = 0.05
IDLE_MAX = 1.0
# A crawl that never gave us a task is waiting for its producer's first pages: ask it
# often, or every consumer would start up to IDLE_MAX late (docs/performance.md).
IDLE_MAX_BEFORE_START = 0.1
# ... and from a shorter first wait: a refresh round's first pages are enqueued within a
# few tens of milliseconds of the round's start, when every consumer already serves it.
IDLE_MIN_BEFORE_START = 0.01
STRIDE = 720_720  # divisible by every weight 1..16: their passes stay exact


@dataclass(slots=True)
class _Lane:
    weight: int
    passed: int = 0  # the lane's pass: lowest is served next
    idle_until: float = 0.0  # 0: ready
    idle_for: float = 0.0
    started: bool = False  # has given us a task yet
    version: int = 0  # of its current heap entry; older entries are skipped


class CrawlRotation:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lanes: dict[str, _Lane] = {}
        self._clock = clock
        self._ready: list[tuple[int, int, str, int]] = []  # (pass, order, crawl, version)
        self._idle: list[tuple[float, int, str, int]] = []  # (due, order, crawl, version)
        self._order = itertools.count()
        self._now_pass = 0  # the pass of the last crawl served

    def add(self, crawl_id: str, weight: int = 1) -> None:
        lane = self._lanes.get(crawl_id)
        if lane is None:
            lane = self._lanes[crawl_id] = _Lane(max(1, weight))
            self._make_ready(crawl_id, lane)
        else:
            lane.weight = max(1, weight)

    def remove(self, crawl_id: str) -> None:
        self._lanes.pop(crawl_id, None)

    def __contains__(self, crawl_id: object) -> bool:
        return crawl_id in self._lanes

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._lanes))

    def __len__(self) -> int:
        return len(self._lanes)

    def ready(self) -> list[str]:
        """The ready crawls, in the order they were added (walks them all: for tests and
        reports, not for a turn)."""
        self._wake_due()
        return [c for c, lane in self._lanes.items() if not lane.idle_until]

    def turns(self, free: int) -> list[tuple[str, int]]:
        """How many tasks to ask of which ready crawl, in the order to ask them."""
        if free < 1:
            return []
        self._wake_due()
        asks: dict[str, int] = {}
        for _ in range(free):
            crawl_id = self._pop_ready()
            if crawl_id is None:
                break
            lane = self._lanes[crawl_id]
            self._now_pass = lane.passed
            lane.passed += STRIDE // lane.weight
            self._push_ready(crawl_id, lane)
            asks[crawl_id] = asks.get(crawl_id, 0) + 1
        return list(asks.items())

    def claimed(self, crawl_id: str, asked: int, got: int) -> None:
        """Record a claim's result: a crawl that gave nothing goes idle for a while."""
        lane = self._lanes.get(crawl_id)
        if lane is None:
            return
        if got:
            lane.idle_for = 0.0
            lane.started = True
            if lane.idle_until:
                self._make_ready(crawl_id, lane)
        elif asked:
            low, high = (
                (IDLE_MIN, IDLE_MAX)
                if lane.started
                else (IDLE_MIN_BEFORE_START, IDLE_MAX_BEFORE_START)
            )
            lane.idle_for = min(high, max(low, lane.idle_for * 2))
            lane.idle_until = self._clock() + lane.idle_for
            lane.version += 1
            heapq.heappush(self._idle, (lane.idle_until, next(self._order), crawl_id, lane.version))

    def wake(self, crawl_id: str) -> None:
        """Make a crawl ready now (tasks may have arrived: a retry came due, a redrive)."""
        lane = self._lanes.get(crawl_id)
        if lane is not None and lane.idle_until:
            self._make_ready(crawl_id, lane)

    def next_ready_in(self) -> float:
        """Seconds until the first idle crawl is worth asking again (0 if one is ready)."""
        if not self._lanes:
            return IDLE_MAX
        self._wake_due()
        if self._peek_ready() is not None:
            return 0.0
        while self._idle:
            due, _, crawl_id, version = self._idle[0]
            lane = self._lanes.get(crawl_id)
            if lane is not None and lane.version == version:
                return max(0.0, due - self._clock())
            heapq.heappop(self._idle)
        return IDLE_MAX

    # -- the heaps ----------------------------------------------------------------------

    def _make_ready(self, crawl_id: str, lane: _Lane) -> None:
        lane.idle_until = 0.0
        lane.passed = max(lane.passed, self._now_pass)  # no turns banked while away
        lane.version += 1
        self._push_ready(crawl_id, lane)

    def _push_ready(self, crawl_id: str, lane: _Lane) -> None:
        heapq.heappush(self._ready, (lane.passed, next(self._order), crawl_id, lane.version))

    def _live(self, crawl_id: str, version: int) -> _Lane | None:
        lane = self._lanes.get(crawl_id)
        return lane if lane is not None and lane.version == version else None

    def _peek_ready(self) -> str | None:
        while self._ready:
            _, _, crawl_id, version = self._ready[0]
            lane = self._live(crawl_id, version)
            if lane is not None and not lane.idle_until:
                return crawl_id
            heapq.heappop(self._ready)
        return None

    def _pop_ready(self) -> str | None:
        crawl_id = self._peek_ready()
        if crawl_id is not None:
            heapq.heappop(self._ready)
        return crawl_id

    def _wake_due(self) -> None:
        """Idle crawls whose wait is over become ready."""
        now = self._clock()
        while self._idle and self._idle[0][0] <= now:
            _, _, crawl_id, version = heapq.heappop(self._idle)
            lane = self._live(crawl_id, version)
            if lane is not None and lane.idle_until:
                self._make_ready(crawl_id, lane)
