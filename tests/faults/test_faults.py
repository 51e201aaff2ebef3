"""Delivery under real faults: SIGKILLed and paused consumers, a poison page, Redis
SIGKILLed and restarted from its AOF, a flaky HTTP server, a whole-system crash; and two
broken control consumers that the same harness must catch (support/faults.py).

The scenarios that kill Redis also run under the shipped configuration (``shipped``:
the ACL users of deploy/redis/users.acl.in, appendfsync always), where every restart
must load the whole AOF: nothing refused, nothing lost.

Each run is bounded by progress (it fails after ``STALL`` seconds in which nothing
moved), not by a total time: the pytest timeout below only catches a hung harness."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.faults import SCENARIOS, Site, run_scenario
from support.synthsite import generate

pytestmark = [pytest.mark.faults, pytest.mark.timeout(1800)]

STALL = 120.0
REAL = [name for name, s in SCENARIOS.items() if s.control == "none"]
SHIPPED = [name for name, s in SCENARIOS.items() if s.redis_kills or s.crash_all]
CONTROLS = [name for name, s in SCENARIOS.items() if s.control != "none"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("synth")
    generate(root, pages=150, per_page=6)
    return Site(root)


@pytest.mark.parametrize(
    ("name", "shipped"),
    [(name, False) for name in REAL] + [(name, True) for name in SHIPPED],
    ids=[*REAL, *(f"{name}-shipped" for name in SHIPPED)],
)
def test_nothing_lost_nothing_duplicated(
    name: str, shipped: bool, site: Site, tmp_path: Path
) -> None:
    report = run_scenario(name, site, tmp_path, lease=2.0, stall=STALL, shipped=shipped)
    detail = f"{report}"
    assert report.refused_on_load == 0, detail
    assert report.completed, detail
    assert report.lost == 0, detail
    assert report.duplicates == 0, detail
    assert report.items_written == report.items_expected, detail
    assert report.verdict == "ok", detail
    scenario = SCENARIOS[name]
    if scenario.kill_consumers:
        assert report.consumers_killed >= 3, detail
    if scenario.redis_kills:
        assert report.redis_restarts == scenario.redis_kills, detail
    if scenario.redis_down:  # leases expired during the outage: their commits fenced
        assert report.fenced >= 1, detail
    assert report.unexpected_exits == 0, detail
    if scenario.sigterm:
        assert any("exited 143, left 0 lease(s)" in note for note in report.notes), detail
    if scenario.sigstop:
        assert report.fenced >= 1, detail
    if scenario.poison:
        assert report.dead_pages == 1, detail
        assert report.failed_items == 6 + 3, detail  # its 9 entries, as `failed` items
    else:
        assert report.dead_pages == 0 and report.failed_items == 0, detail


@pytest.mark.parametrize("name", CONTROLS)
def test_broken_controls_are_caught(name: str, tmp_path: Path) -> None:
    root = tmp_path / "site"
    generate(root, pages=80, per_page=6)
    report = run_scenario(name, Site(root), tmp_path / "run", lease=2.0, stall=STALL)
    assert report.consumers_killed >= 1, report
    if name == "control-ack-first":  # acknowledged, then killed before its items: lost
        assert report.lost > 0, report
    else:  # items appended, then killed before the acknowledgement: appended again
        assert report.duplicates > 0, report
    assert any("SIGKILLed itself in its broken window" in n for n in report.notes), report
    assert report.verdict == "caught"
