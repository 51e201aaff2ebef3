"""The adaptive refresh interval (common/refresh_interval.py) and the composite cursor of the
change feed across crawls (frontier/every_crawl.py): pure rules."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from invcrawl.common.refresh_interval import LENGTHEN, SHORTEN, Bounds, adapt, initial, jittered
from invcrawl.common.settings.parsers import cursor, every
from invcrawl.frontier.every_crawl import format_cursor, parse_cursor

HOUR, WEEK = 3600.0, 7 * 86400.0


def test_changes_shorten_the_interval_and_quiet_rounds_lengthen_it_within_bounds() -> None:
    bounds = Bounds(HOUR, WEEK)
    start = initial(bounds)
    assert HOUR < start < WEEK
    assert adapt(start, True, bounds) == start * SHORTEN
    assert adapt(start, False, bounds) == start * LENGTHEN
    busy, quiet = start, start
    for _ in range(4):
        busy = adapt(busy, True, bounds)
    for _ in range(7):
        quiet = adapt(quiet, False, bounds)
    assert busy == HOUR and quiet == WEEK  # the module's figures: 4 and 7 rounds
    assert adapt(HOUR, True, bounds) == HOUR and adapt(WEEK, False, bounds) == WEEK


def test_an_interval_from_other_bounds_is_brought_within() -> None:
    assert adapt(10.0, False, Bounds(60, 120)) == 90.0  # 60 * 1.5
    assert adapt(10_000.0, True, Bounds(60, 120)) == 60.0


@given(
    interval=st.floats(1, 1e7),
    low=st.floats(1, 1e5),
    span=st.floats(1, 100),
    seed=st.integers(0, 2**32),
)
def test_jittered_delays_stay_within_ten_percent_and_the_bounds(
    interval: float, low: float, span: float, seed: int
) -> None:
    bounds = Bounds(low, low * span)
    delay = jittered(interval, bounds, random.Random(seed))
    assert bounds.low <= delay <= bounds.high
    inside = bounds.clamp(interval)
    assert delay >= min(inside * 0.9, bounds.clamp(interval * 0.9)) - 1e-6


def test_jitter_spreads_crawls_that_share_an_interval() -> None:
    rng = random.Random(7)
    delays = {round(jittered(HOUR * 10, Bounds(HOUR, WEEK), rng)) for _ in range(50)}
    assert len(delays) > 40 and min(delays) >= 9 * HOUR and max(delays) <= 11 * HOUR


def test_bounds_must_be_ordered() -> None:
    with pytest.raises(ValueError, match="min <= max"):
        Bounds(10, 5)


def test_every_takes_a_duration_or_auto() -> None:
    assert every("auto") == "auto" and every("AUTO") == "auto"
    assert every("6h") == 21600.0
    with pytest.raises(ValueError, match="or 'auto'"):
        every("sometimes")


def test_the_composite_cursor_round_trips_and_leaves_out_crawls_at_their_start() -> None:
    positions = {"b.org": "1732400000100-3", "a.org": "1732400000000-0", "new": "0-0"}
    text = format_cursor(positions)
    assert text == "a.org=1732400000000-0,b.org=1732400000100-3"
    assert cursor(text) == text  # the option's parser takes it
    assert parse_cursor(text) == ({"a.org": "1732400000000-0", "b.org": "1732400000100-3"}, "0-0")
    assert parse_cursor(None) == ({}, "0-0") and parse_cursor("0") == ({}, "0-0")
    assert parse_cursor("1732400000000-5") == ({}, "1732400000000-5")  # every crawl
    assert parse_cursor("$") == ({}, "$")
    assert format_cursor({"x": "0-0"}) == "0"
    for bad in ("a=1", "a=1-2,b", "=1-2", "a b=1-2", "1732400000000"):
        with pytest.raises(ValueError, match="cursor printed by"):
            cursor(bad)
