"""The round planner of ``--every`` (common/rounds.py): which crawls a round takes, how
long to sleep before it, and what is recorded of each crawl's next round; pure, so
planned here without Redis or a clock."""

from __future__ import annotations

import random

import pytest

from invcrawl.common import rounds
from invcrawl.common.refresh_interval import LENGTHEN, SHORTEN, Bounds, initial

HOUR, WEEK = 3600.0, 7 * 86400.0
BOUNDS = Bounds(HOUR, WEEK)


def test_every_parses_to_a_fixed_period_or_adaptive_bounds() -> None:
    assert rounds.mode_of(900.0, BOUNDS) == rounds.FixedPeriod(900.0)
    assert rounds.mode_of("auto", BOUNDS) == rounds.Adaptive(BOUNDS)


def test_a_fixed_period_is_jittered_by_ten_percent_with_the_given_rng() -> None:
    mode = rounds.FixedPeriod(1000.0)
    delays = [rounds.fixed_delay(mode, random.Random(seed)) for seed in range(200)]
    assert all(900.0 <= d <= 1100.0 for d in delays)
    assert len(set(delays)) > 100  # jittered, not the period itself
    # the same seed, the same plan: a schedule can be replayed
    assert rounds.fixed_delay(mode, random.Random(7)) == rounds.fixed_delay(mode, random.Random(7))
    assert rounds.fixed_delay(mode, random.Random(7)) == 1000.0 * random.Random(7).uniform(0.9, 1.1)


def test_a_fixed_period_records_the_period_as_each_crawls_interval() -> None:
    planned = rounds.next_interval(rounds.FixedPeriod(600.0), 42.0, True, random.Random(1))
    assert planned.interval == 600.0  # neither the stored interval nor the change counts
    assert planned.delay == rounds.fixed_delay(rounds.FixedPeriod(600.0), random.Random(1))


def test_an_adaptive_crawl_with_no_history_starts_in_the_middle_of_its_bounds() -> None:
    planned = rounds.next_interval(rounds.Adaptive(BOUNDS), None, None, random.Random(3))
    assert planned.interval == initial(BOUNDS)
    assert 0.9 * planned.interval <= planned.delay <= 1.1 * planned.interval


@pytest.mark.parametrize(("changed", "factor"), [(True, SHORTEN), (False, LENGTHEN), (None, 1.0)])
def test_an_adaptive_interval_follows_what_the_round_found(
    changed: bool | None, factor: float
) -> None:
    stored = 10 * HOUR
    planned = rounds.next_interval(rounds.Adaptive(BOUNDS), stored, changed, random.Random(5))
    assert planned.interval == stored * factor  # None: not measured, kept
    assert HOUR <= planned.delay <= WEEK


def test_an_adaptive_interval_and_its_delay_stay_within_the_bounds() -> None:
    mode = rounds.Adaptive(Bounds(60.0, 120.0))
    for seed in range(100):
        rng = random.Random(seed)
        quiet = rounds.next_interval(mode, 120.0, False, rng)
        busy = rounds.next_interval(mode, 60.0, True, rng)
        assert quiet.interval == 120.0 and 60.0 <= quiet.delay <= 120.0
        assert busy.interval == 60.0 and 60.0 <= busy.delay <= 120.0
    # an interval stored under other bounds is brought within these
    assert rounds.next_interval(mode, 0.0, None, random.Random(0)).interval == 60.0


def test_the_supervisor_sleeps_until_the_soonest_due_crawl_and_takes_those_due_by_then() -> None:
    due_at = {"a": 5_000, "b": 3_000, "c": 3_000, "d": 9_000}
    wake = rounds.wake(due_at, now_ms=1_000)
    assert wake == rounds.Wake(at_ms=3_000, sleep=2.0)
    assert rounds.due_by(due_at, wake.at_ms) == ["b", "c"]  # in the crawls' order


def test_an_unscheduled_crawl_is_due_at_once() -> None:
    due_at: dict[str, int | None] = {"a": 5_000, "new": None}
    wake = rounds.wake(due_at, now_ms=1_000)
    assert wake.sleep == 4.0  # the scheduled one sets the sleep ...
    assert rounds.due_by(due_at, 1_000) == ["new"]  # ... the unscheduled one is due now
    assert rounds.due_by(due_at, wake.at_ms) == ["a", "new"]
    nothing = rounds.wake({"x": None}, now_ms=1_000)
    assert nothing == rounds.Wake(1_000, 0.0)


def test_an_overdue_crawl_means_no_sleep() -> None:
    assert rounds.wake({"a": 500, "b": 800}, now_ms=1_000) == rounds.Wake(500, 0.0)


def test_produce_looks_again_each_poll_while_a_round_is_under_way() -> None:
    assert rounds.nap({}, 1_000, busy=True) == rounds.POLL
    assert rounds.nap({"a": 1_000_000}, 1_000, busy=True) == rounds.POLL
    assert rounds.nap({"a": 1_300}, 1_000, busy=True) == pytest.approx(0.3)  # due sooner


def test_produce_sleeps_until_the_soonest_due_crawl_when_idle() -> None:
    assert rounds.nap({"a": 61_000, "b": 91_000}, 1_000, busy=False) == 60.0
    assert rounds.nap({"a": 10**10}, 1_000, busy=False) == rounds.IDLE
    assert rounds.nap({"a": 900}, 1_000, busy=False) == rounds.SHORTEST_NAP  # just passed


def test_produce_with_no_clock_or_nothing_scheduled_naps_by_default() -> None:
    assert rounds.nap({"a": 61_000}, None, busy=False) == rounds.IDLE  # Redis unreachable
    assert rounds.nap({"a": 61_000}, None, busy=True) == rounds.POLL
    assert rounds.nap({}, 1_000, busy=False) == rounds.POLL  # nothing scheduled yet
