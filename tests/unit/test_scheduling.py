"""CrawlRotation: smooth weighted round-robin over crawls, idle backoff. Pure."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from consumer.scheduling import (
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
