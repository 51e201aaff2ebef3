"""common/interrupts.py: stop signals become KeyboardInterrupt inside `interruptible`,
are recorded for the exit code, and the previous handlers come back afterwards."""

from __future__ import annotations

import os
import signal
import time

import pytest

from common import interrupts


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_inside_interrupts_like_ctrl_c_and_is_recorded(signum: int) -> None:
    interrupts.reset()
    before = signal.getsignal(signum)
    try:
        with pytest.raises(KeyboardInterrupt), interrupts.interruptible():
            os.kill(os.getpid(), signum)
            for _ in range(100):  # the handler runs at the next check of the interpreter
                time.sleep(0.01)
            raise AssertionError("the signal did not interrupt")
        assert interrupts.exit_code() == 128 + signum
    finally:
        interrupts.reset()
    assert signal.getsignal(signum) is before


def test_handlers_come_back_even_without_a_signal() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    with interrupts.interruptible():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
