"""The extraction budget counts the process's CPU time, not the clock (fetch/budget.py):
time spent waiting or preempted by other processes never fails a page."""

from __future__ import annotations

import time

import pytest

from invcrawl.fetch.budget import ExtractionTimeout, budget


def test_waiting_spends_no_budget() -> None:
    with budget(0.05):
        time.sleep(0.3)  # wall time six times the budget, no CPU: not a timeout


def test_cpu_work_past_the_budget_is_interrupted() -> None:
    start = time.process_time()
    with pytest.raises(ExtractionTimeout, match=r"longer than its 0\.05s budget"), budget(0.05):
        while time.process_time() - start < 30:  # bounded: the timer fires long before
            pass


def test_a_budget_that_ended_leaves_no_timer() -> None:
    with budget(0.05):
        pass
    start = time.process_time()
    while time.process_time() - start < 0.2:  # past the old budget: nothing fires
        pass


def test_a_timeout_dropped_where_it_landed_is_raised_again() -> None:
    """The timeout is raised wherever the main thread is; where that is a finalizer or a
    weakref callback run by a garbage collection inside the block, Python prints and
    drops it (robots.txt parsing kept going that way). Dropped once, it comes again."""
    dropped = []
    with pytest.raises(ExtractionTimeout), budget(0.005):
        try:
            while True:  # CPU work until the budget is spent
                pass
        except ExtractionTimeout:
            dropped.append(1)  # as the interpreter does with a finalizer's exception
        limit = time.process_time() + 5
        while time.process_time() < limit:  # the work goes on: interrupted again
            pass
        pytest.fail("the budget did not interrupt the work again")
    assert dropped == [1]
