"""Which stop signal ended the process, whoever handled it.

A command stopped by SIGINT exits 130 and one stopped by SIGTERM 143 (128 + the signal,
as a shell reports a process killed by it; README's exit codes), after stopping
gracefully. The handlers that do the graceful part are many and not all ours (Scrapy's
own, asyncio's, the crawl supervisor's): each records the signal here with
:func:`record`, or has :func:`chain` wrap it, and the CLI turns the first one recorded
into the exit code (:func:`exit_code`). Pure standard library: no Twisted, no Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# What a command run from a terminal stops on: Ctrl-C, `kill`/`docker stop`, the terminal closed.
TERMINAL_SIGNALS = (*STOP_SIGNALS, signal.SIGHUP)

# The stop signals this process was started with ignored, read when it imports this
# module (first thing in every command): ``nohup`` ignores SIGHUP so that a command
# outlives its terminal, a non-interactive shell starts a background job with SIGINT
# ignored. invcrawl leaves those ignored, as whoever started it asked, rather than stop
# on them at some steps and not at others.
IGNORED_AT_START = frozenset(
    signum for signum in TERMINAL_SIGNALS if signal.getsignal(signum) == signal.SIG_IGN
)

_received: list[int] = []


def honoured(signals: Sequence[int]) -> tuple[int, ...]:
    """``signals`` but those the process was started with ignored (:data:`IGNORED_AT_START`)."""
    return tuple(signum for signum in signals if signum not in IGNORED_AT_START)


def record(signum: int) -> None:
    """A stop signal arrived (safe inside a signal handler: one list append)."""
    _received.append(int(signum))


def first() -> int | None:
    """The first stop signal received, if any."""
    return _received[0] if _received else None


def exit_code() -> int | None:
    """128 + the first stop signal received (130 for SIGINT, 143 for SIGTERM), or None."""
    signum = first()
    return None if signum is None else 128 + signum


def reset() -> None:
    """Forget what was received (tests that run several commands in one process)."""
    _received.clear()


def chain() -> None:
    """Wrap the handlers now installed for SIGINT and SIGTERM so that they record the
    signal before doing what they did (call it once the library that installs them, e.g.
    Scrapy's process after its start-up, has done so)."""
    for signum in STOP_SIGNALS:
        if signum in IGNORED_AT_START:  # (Scrapy installs its SIGINT handler regardless)
            signal.signal(signum, signal.SIG_IGN)
            continue
        previous = signal.getsignal(signum)
        if getattr(previous, "_records", False):
            continue
        signal.signal(signum, _recording(previous))


def _recording(previous: Any) -> Callable[[int, FrameType | None], Any]:
    def handler(signum: int, frame: FrameType | None) -> Any:
        record(signum)
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_DFL:  # what the default would have done, as an exception
            raise KeyboardInterrupt
        return None  # SIG_IGN

    handler._records = True  # type: ignore[attr-defined]
    return handler


@contextlib.contextmanager
def loop_handlers(
    loop: asyncio.AbstractEventLoop,
    callback: Callable[[int], object],
    signals: Sequence[int] = TERMINAL_SIGNALS,
) -> Iterator[None]:
    """``callback(signum)`` on the loop for ``signals`` (every terminal signal unless
    told) while inside; the handlers that were there before come back afterwards. (A
    loop closed with its handlers still set leaves SIG_DFL behind: a `crawl --every`
    round that ended so left the next sleep to be killed outright by SIGTERM, exit -15
    rather than 143.) A terminal signal left out reaches the handler outside, which in
    a command is :func:`interruptible`'s: a KeyboardInterrupt raised wherever the loop
    stands, in the middle of a Redis reply too (the dashboard, which left SIGHUP out,
    printed "Task exception was never retrieved" and a traceback on a loaded machine)."""
    signals = honoured(signals)
    saved = {signum: signal.getsignal(signum) for signum in signals}
    for signum in signals:
        loop.add_signal_handler(signum, callback, signum)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def _handled(
    signals: Sequence[int], handler: Callable[[int, FrameType | None], None]
) -> Iterator[None]:
    """``handler`` for ``signals`` (those :func:`honoured`) while inside; the previous
    handlers come back after."""
    signals = honoured(signals)
    previous = [signal.signal(signum, handler) for signum in signals]
    try:
        yield
    finally:
        for signum, old in zip(signals, previous, strict=True):
            signal.signal(signum, old)


@contextlib.contextmanager
def interruptible(signals: Sequence[int] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """SIGTERM and SIGHUP end a blocking command as Ctrl-C does (``finally`` blocks run,
    the output is flushed; exit 128 + the signal) rather than killing it where it stands;
    the handlers that were there before come back afterwards."""
    with _handled(signals, _as_keyboard_interrupt):
        yield


def _as_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    record(signum)  # the exit code says which: 143 (SIGTERM), 129 (SIGHUP)
    raise KeyboardInterrupt


@contextlib.contextmanager
def recorded(
    signals: Sequence[int] = TERMINAL_SIGNALS,
) -> Iterator[None]:
    """Stop signals only recorded while inside (:func:`first` tells), for a loop whose
    steps each run an event loop (``crawl --every``): a KeyboardInterrupt raised at any
    point of one would leave it half closed, its tasks' exceptions never retrieved, and
    print their tracebacks. The loop checks :func:`first` between its steps and waits with
    :func:`sleep`; the event loops it runs install their own handlers meanwhile
    (:func:`loop_handlers`) and give these back."""
    with _handled(signals, _record):
        yield


def _record(signum: int, frame: FrameType | None) -> None:
    record(signum)


SLEEP_STEP = 0.1  # how soon a recorded stop signal ends :func:`sleep`


def sleep(seconds: float) -> bool:
    """Wait ``seconds``; False as soon as a stop signal has been recorded (within
    :data:`SLEEP_STEP`), True when the time is up."""
    deadline = time.monotonic() + seconds
    while first() is None:
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(left, SLEEP_STEP))
    return False
