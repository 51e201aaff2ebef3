"""CrawlRotation: smooth weighted round-robin over crawls, idle backoff. Pure."""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Callable

import pytest

from invcrawl.consumer.scheduling import (
    IDLE_MAX,
    IDLE_MAX_BEFORE_START,
    IDLE_MIN,
    IDLE_MIN_BEFORE_START,
    CrawlRotation,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def picks(rotation: CrawlRotation, turns: int, free: int = 1) -> Counter[str]:
    got: Counter[str] = Counter()
    for _ in range(turns):
        for crawl, n in rotation.turns(free):
            got[crawl] += n
    return got


def test_equal_weights_alternate_page_by_page() -> None:
    rotation = CrawlRotation(Clock())
    rotation.add("a")
    rotation.add("b")
    order = [rotation.turns(1)[0][0] for _ in range(6)]
    assert order.count("a") == order.count("b") == 3
    assert all(x != y for x, y in itertools.pairwise(order))  # interleaved


def test_weights_share_pages_in_proportion_within_every_turn() -> None:
    rotation = CrawlRotation(Clock())
    rotation.add("big", weight=3)
    rotation.add("small", weight=1)
    assert picks(rotation, 40) == Counter({"big": 30, "small": 10})
    assert dict(rotation.turns(4)) == {"big": 3, "small": 1}


def test_an_empty_crawl_backs_off_and_banks_no_credit() -> None:
    clock = Clock()
    rotation = CrawlRotation(clock)
    rotation.add("a")
    rotation.add("b")
    rotation.claimed("b", asked=1, got=1)  # started: its backoff may grow to IDLE_MAX
    rotation.claimed("b", asked=1, got=0)
    assert rotation.ready() == ["a"]
    assert dict(rotation.turns(3)) == {"a": 3}
    assert rotation.next_ready_in() == 0.0
    clock.now += IDLE_MIN
    assert rotation.ready() == ["a", "b"]
    for _ in range(10):  # doubling, capped
        rotation.claimed("b", asked=1, got=0)
    clock.now += IDLE_MAX - 0.01
    assert "b" not in rotation.ready()
    rotation.wake("b")
    assert "b" in rotation.ready()
    rotation.claimed("b", asked=2, got=1)  # work again: no more backoff
    assert dict(rotation.turns(2)) == {"a": 1, "b": 1}


def test_a_crawl_that_never_gave_a_task_is_asked_again_soon() -> None:
    """Waiting for its producer's first pages: the backoff stays short."""
    clock = Clock()
    rotation = CrawlRotation(clock)
    rotation.add("new")
    rotation.claimed("new", asked=1, got=0)
    assert rotation.next_ready_in() == pytest.approx(IDLE_MIN_BEFORE_START)  # a short first wait
    for _ in range(10):
        rotation.claimed("new", asked=1, got=0)
    assert rotation.next_ready_in() <= IDLE_MAX_BEFORE_START
    clock.now += IDLE_MAX_BEFORE_START
    assert rotation.ready() == ["new"]
    rotation.claimed("new", asked=1, got=1)
    for _ in range(10):
        rotation.claimed("new", asked=1, got=0)
    assert rotation.next_ready_in() > IDLE_MAX_BEFORE_START  # started: the full backoff


def test_removed_crawls_are_never_picked() -> None:
    rotation = CrawlRotation(Clock())
    rotation.add("a")
    rotation.add("b")
    rotation.remove("a")
    assert picks(rotation, 5) == Counter({"b": 5}) and "a" not in rotation


def python_calls(step: Callable[[], object]) -> int:
    """Python-level calls ``step`` makes (sys.setprofile): work that walks every crawl
    shows as calls per crawl (a key function, a generator), whatever the machine's load."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        step()
    finally:
        sys.setprofile(None)
    return calls


def rotation_of(size: int, clock: Clock) -> CrawlRotation:
    rotation = CrawlRotation(clock)
    for n in range(size):
        rotation.add(f"c{n:05d}")
    for n in range(0, size, 2):  # half of them idle
        rotation.claimed(f"c{n:05d}", asked=1, got=0)
    return rotation


def test_a_turn_costs_the_same_at_ten_and_at_ten_thousand_crawls() -> None:
    """A claim turn, a claim's result and the next wake-up do not walk every crawl
    (issue 39: with 10,000 open crawls the walks took half of a consumer's CPU)."""
    counts = {}
    for size in (10, 10_000):
        clock = Clock()
        rotation = rotation_of(size, clock)
        rotation.turns(8)  # (the first turn after adding: every lane's first entry)

        def cycle(rotation: CrawlRotation = rotation) -> None:
            for crawl_id, asked in rotation.turns(8):
                rotation.claimed(crawl_id, asked, got=asked)
            rotation.next_ready_in()

        counts[size] = python_calls(cycle)
    # the same but for entries of idle crawls skipped on the way (at most one per
    # crawl that went idle: amortized), against ~80,000 calls when a turn walked them all
    assert counts[10_000] < 2 * counts[10]


def test_every_crawl_of_ten_thousand_is_served_in_turn() -> None:
    """Fairness at scale: equal weights, each ready crawl once per 10,000 picks; idle
    ones come back when due and are served next."""
    clock = Clock()
    rotation = rotation_of(10_000, clock)
    served = picks(rotation, 625, free=8)
    assert len(served) == 5_000 and set(served.values()) == {1}  # the ready half, once each
    clock.now += IDLE_MAX_BEFORE_START
    again = picks(rotation, 625, free=8)
    assert set(again) == {f"c{n:05d}" for n in range(0, 10_000, 2)}  # due: served first
