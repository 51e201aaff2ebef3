"""The fleet list (``status --json``, the dashboard) shows the consumers that run: a
consumer that exits cleanly (SIGTERM, SIGINT) leaves it at once; one that is killed
cannot say goodbye and ages out by its heartbeat (three of its leases)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support.cli import clean_env, invcrawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PATIENCE = 90.0  # only a guard against hanging: every wait below ends on a state


def fleet(redis_url: str, cwd: Path) -> dict[int, dict[str, Any]]:
    result = invcrawl("status", "--redis", redis_url, "--json", cwd=cwd)
    assert result.code == 0, result.stderr
    return {int(c["pid"]): c for c in json.loads(result.stdout)["consumers"] if c.get("pid")}


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not check():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.1)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_consumer_that_exits_leaves_the_fleet_at_once(
    redis_url: str, tmp_path: Path, stop: signal.Signals
) -> None:
    consumer = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "consume", "--redis", redis_url, "--lease", "1"],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for(lambda: fleet(redis_url, tmp_path).get(consumer.pid, {}).get("alive"), "alive")
        consumer.send_signal(stop)
        consumer.wait(PATIENCE)
    finally:
        consumer.kill()
        consumer.wait()
    assert consumer.pid not in fleet(redis_url, tmp_path)


def test_a_killed_consumer_ages_out_by_its_heartbeat(redis_url: str, tmp_path: Path) -> None:
    consumer = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "consume", "--redis", redis_url, "--lease", "1"],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: fleet(redis_url, tmp_path).get(consumer.pid, {}).get("alive"), "alive")
    finally:
        consumer.kill()
        consumer.wait()
    # Listed until its last beat is three leases old, then shown not alive.
    wait_for(lambda: not fleet(redis_url, tmp_path)[consumer.pid]["alive"], "not alive")
