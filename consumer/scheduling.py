"""Which crawl a consumer claims from next: smooth weighted round-robin over the crawls it
serves, with a backoff for crawls that had nothing to claim. Pure: no Redis, no Scrapy.

Every claim turn spreads the consumer's free capacity over the ready crawls in
proportion to their weights (nginx's smooth weighted round-robin: each pick adds every
ready crawl's weight to its credit, takes the crawl with the most credit and charges it
the total weight). Over time each backlogged crawl gets ``weight / total`` of the pages,
interleaved rather than in runs, so a small site queued behind a large one starts at the
next free slot instead of waiting for the large one to drain.

A crawl whose claim came back empty is *idle* for a while (50 ms, doubling to 1 s), so
a consumer serving thousands of crawls does not ask each of them every time a page ends.
"""

from __future__ import annotations

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


@dataclass(slots=True)
class _Lane:
    weight: int
    credit: int = 0
    idle_until: float = 0.0
    idle_for: float = 0.0
    started: bool = False  # has given us a task yet


class CrawlRotation:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lanes: dict[str, _Lane] = {}
        self._clock = clock

    def add(self, crawl_id: str, weight: int = 1) -> None:
        lane = self._lanes.get(crawl_id)
        if lane is None:
            self._lanes[crawl_id] = _Lane(max(1, weight))
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
        now = self._clock()
        return [c for c, lane in self._lanes.items() if lane.idle_until <= now]

    def turns(self, free: int) -> list[tuple[str, int]]:
        """How many tasks to ask of which ready crawl, in the order to ask them."""
        ready = self.ready()
        if free < 1 or not ready:
            return []
        total = sum(self._lanes[c].weight for c in ready)
        asks: dict[str, int] = {}
        for _ in range(free):
            for crawl_id in ready:
                self._lanes[crawl_id].credit += self._lanes[crawl_id].weight
            best = max(ready, key=lambda c: self._lanes[c].credit)
            self._lanes[best].credit -= total
            asks[best] = asks.get(best, 0) + 1
        return list(asks.items())

    def claimed(self, crawl_id: str, asked: int, got: int) -> None:
        """Record a claim's result: a crawl that gave nothing goes idle for a while."""
        lane = self._lanes.get(crawl_id)
        if lane is None:
            return
        if got:
            lane.idle_for = 0.0
            lane.idle_until = 0.0
            lane.started = True
        elif asked:
            low, high = (
                (IDLE_MIN, IDLE_MAX)
                if lane.started
                else (IDLE_MIN_BEFORE_START, IDLE_MAX_BEFORE_START)
            )
            lane.idle_for = min(high, max(low, lane.idle_for * 2))
            lane.idle_until = self._clock() + lane.idle_for
            # An idle crawl does not bank credit while it waits.
            lane.credit = 0

    def wake(self, crawl_id: str) -> None:
        """Make a crawl ready now (tasks may have arrived: a retry came due, a redrive)."""
        lane = self._lanes.get(crawl_id)
        if lane is not None:
            lane.idle_until = 0.0

    def next_ready_in(self) -> float:
        """Seconds until the first idle crawl is worth asking again (0 if one is ready)."""
        if not self._lanes:
            return IDLE_MAX
        return max(0.0, min(lane.idle_until for lane in self._lanes.values()) - self._clock())
