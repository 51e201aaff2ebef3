"""A stop signal ends a command's job even when the job (or a library under it) swallows
the first cancellation: invcrawl/scope.py cancels again until the job ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from invcrawl.common.settings.config import load_config
from invcrawl.errors import Terminated
from invcrawl.process import interrupts
from invcrawl.scope import with_frontier
from support.cli import clean_env


@pytest.mark.timeout(30)
def test_a_swallowed_cancellation_is_repeated(tmp_path: Path) -> None:
    config = load_config({"redis": "redis://127.0.0.1:1/0", "data_dir": str(tmp_path)})
    swallowed: list[int] = []

    async def job(frontier: object) -> int:
        asyncio.get_running_loop().call_later(0.1, os.kill, os.getpid(), signal.SIGTERM)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            swallowed.append(1)  # as a read completing in the same loop turn would
        await asyncio.sleep(60)  # ...and the loop goes on: only a second cancel ends it
        return 0

    interrupts.reset()
    try:
        with pytest.raises(Terminated):
            with_frontier(config, job)
        assert swallowed == [1]
        assert interrupts.exit_code() == 143
    finally:
        interrupts.reset()


@pytest.mark.timeout(60)
def test_sigusr1_prints_where_a_command_is(tmp_path: Path) -> None:
    """README: `kill -USR1 PID` prints a stuck command's stacks and it keeps running."""

    argv = [sys.executable, "-m", "invcrawl", "status", "--redis", "redis://127.0.0.1:1/0"]
    proc = subprocess.Popen(
        [*argv, "--redis-wait", "50"], cwd=tmp_path, env=clean_env(),
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        assert "waiting" in proc.stderr.readline().lower()  # in preflight, waiting for Redis
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        assert proc.poll() is None  # still running
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "Current thread" in err and "preflight" in err, err
    assert proc.returncode == 143
