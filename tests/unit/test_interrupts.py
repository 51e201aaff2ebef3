"""process/interrupts.py: stop signals become KeyboardInterrupt inside `interruptible`,
are recorded for the exit code, and the previous handlers come back afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from invcrawl import cli, live_redis
from invcrawl.process import interrupts


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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_recorded_signals_let_a_running_event_loop_finish_its_step(signum: int) -> None:
    # `crawl --every` between rounds runs short event loops (the next refresh's time):
    # a KeyboardInterrupt raised in the middle of one left its tasks' exceptions
    # unretrieved and printed their tracebacks. Recorded only, the step ends as usual
    # and the loop around it sees the signal.
    async def step() -> str:
        os.kill(os.getpid(), signum)
        await asyncio.sleep(0.05)
        return "done"

    interrupts.reset()
    before = signal.getsignal(signum)
    try:
        with interrupts.recorded():
            assert asyncio.run(step()) == "done"
            assert interrupts.first() == signum
            assert interrupts.sleep(30) is False  # a recorded stop ends the wait at once
        assert interrupts.exit_code() == 128 + signum
    finally:
        interrupts.reset()
    assert signal.getsignal(signum) is before


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_event_loop_gets_every_terminal_signal_as_its_callback(signum: int) -> None:
    # An event loop inside the CLI's `interruptible` (the dashboard): a signal its
    # handlers left out raised KeyboardInterrupt wherever the loop stood, in the middle
    # of a Redis reply too, and printed a traceback.
    async def serve() -> list[int]:
        seen: list[int] = []
        got = asyncio.Event()

        def callback(received: int) -> None:
            seen.append(received)
            got.set()

        with interrupts.loop_handlers(asyncio.get_running_loop(), callback):
            os.kill(os.getpid(), signum)
            await asyncio.wait_for(got.wait(), 60)
        return seen

    interrupts.reset()
    try:
        with interrupts.interruptible():
            assert asyncio.run(serve()) == [signum]
    finally:
        interrupts.reset()


def test_sleep_waits_its_time_without_a_signal() -> None:
    interrupts.reset()
    started = time.monotonic()
    assert interrupts.sleep(0.25) is True
    assert time.monotonic() - started >= 0.25


IGNORED_AT_START_CHECK = """
import asyncio, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a process started so finds them
signal.signal(signal.SIGHUP, signal.SIG_IGN)
from invcrawl.process import interrupts
SIGINT, SIGTERM, SIGHUP = signal.SIGINT, signal.SIGTERM, signal.SIGHUP
assert interrupts.IGNORED_AT_START == {SIGINT, SIGHUP}, interrupts.IGNORED_AT_START
with interrupts.interruptible():
    assert signal.getsignal(SIGHUP) == signal.SIG_IGN
    assert signal.getsignal(SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)
with interrupts.recorded():
    assert signal.getsignal(SIGINT) == signal.SIG_IGN
    assert signal.getsignal(SIGHUP) == signal.SIG_IGN
loop = asyncio.new_event_loop()
with interrupts.loop_handlers(loop, print, interrupts.TERMINAL_SIGNALS):
    assert signal.getsignal(SIGINT) == signal.SIG_IGN
    assert signal.getsignal(SIGHUP) == signal.SIG_IGN
loop.close()
signal.signal(SIGINT, lambda signum, frame: None)  # as Scrapy installs its own regardless
interrupts.chain()
assert signal.getsignal(SIGINT) == signal.SIG_IGN
print("ok")
"""


def test_signals_ignored_at_start_are_left_ignored() -> None:
    """A process started with SIGINT and SIGHUP ignored (a script's background job under
    nohup) installs no handler for them, and puts back SIG_IGN where a library (Scrapy)
    installed one: every command then leaves them ignored at every step."""

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", IGNORED_AT_START_CHECK],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_main_takes_over_the_start_up_handlers_with_no_default_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`python -m invcrawl` replaces SIGINT's and SIGTERM's handlers before its imports
    (invcrawl/__main__.py) and hands main() what they replaced: main() puts its own in
    place before it puts those back, so that no moment has SIGTERM's default action (a
    signal then ended the process by the signal, -15, not with 143) nor SIGINT's
    KeyboardInterrupt outside main's handling of it (a traceback)."""

    def starting_handler(signum: int, frame: FrameType | None) -> None:
        raise AssertionError("the start-up handler was left in place")

    installed: list[tuple[int, Any]] = []
    real_signal = signal.signal

    def recording_signal(signum: int, handler: Any) -> Any:
        installed.append((signum, handler))
        return real_signal(signum, handler)

    seen: dict[int, Any] = {}

    def run(argv: Any) -> int:
        seen.update({s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)})
        return 0

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            real_signal(signum, starting_handler)
        monkeypatch.setattr(signal, "signal", recording_signal)
        monkeypatch.setattr(cli, "_run", run)
        starting: dict[signal.Signals, cli.Handler] = {
            signal.SIGINT: signal.default_int_handler,
            signal.SIGTERM: signal.SIG_DFL,
        }
        assert cli.main([], starting=starting) == 0
    finally:
        for signum, handler in before.items():
            real_signal(signum, handler)
    assert seen[signal.SIGINT] is signal.default_int_handler
    term = seen[signal.SIGTERM]
    assert callable(term) and term is not starting_handler
    # SIGTERM went from the start-up handler to main's, and to its default only at the end
    terms = [handler for signum, handler in installed if signum == signal.SIGTERM]
    assert terms == [term, signal.SIG_DFL]


def test_a_stop_signal_as_the_preflight_ends_is_not_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop signal that comes as the preflight's check of Redis ends (its client
    closing, which swallows a cancellation) ends the command: left to asyncio.run's own
    SIGINT handler it was lost (the task cancelled, the cancellation swallowed, the run
    ended normally), and `consume` then served on until killed."""

    async def checked(url: str, wait: float, say: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        with contextlib.suppress(asyncio.CancelledError):  # (a client's close does so)
            await asyncio.sleep(5)

    monkeypatch.setattr(live_redis, "wait_for_redis", checked)
    interrupts.reset()
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            live_redis.preflight("redis://127.0.0.1:1/0", 0)
        assert interrupts.exit_code() == 130
    finally:
        interrupts.reset()
        signal.signal(signal.SIGINT, before)
