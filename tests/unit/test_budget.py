"""The extraction budget counts the process's CPU time, not the clock (fetch/budget.py):
time spent waiting or preempted by other processes never fails a page."""

from __future__ import annotations

import time

import pytest

from fetch.budget import ExtractionTimeout, budget


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
