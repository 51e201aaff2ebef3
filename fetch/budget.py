"""A CPU-time budget for extracting one page.

Extraction runs on the reactor's thread (it is CPU work of ~10 ms a page; a thread pool
would cost more than it saves). A hostile or pathological page could hold that thread
for minutes: no other page progresses, and no lease is renewed. :func:`budget` arms a
one-shot profiling timer (``ITIMER_PROF``: the CPU time this process spends, user and
system) around the call; when it fires (``SIGPROF``), :class:`ExtractionTimeout` is
raised in the extracting code at its next Python instruction, the page is failed with
that reason (retried with backoff, dead-lettered after ``--max-tries`` deliveries) and
the consumer carries on.

CPU time, not the clock: what a page costs is the same on a loaded machine, so whether
it fits its budget does not depend on what else the machine runs (with a wall-clock
timer, a 100,000-element page that fits 0.3 s alone failed beside a CPU hog). A loaded
machine can still stretch an extraction past the task's lease: the lease then expires,
the task is reaped and redelivered, and the late commit is fenced, as below.

A call stuck inside C code (the signal is handled only when it returns) holds the thread
for that long: nothing renews its lease meanwhile, so the task is reaped and
redelivered to another consumer, and a late commit is fenced; after ``--max-tries``
such deliveries the reaper dead-letters it. Either way no lease is renewed forever.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class ExtractionTimeout(Exception):
    """Extraction of one page ran past its budget."""


_active: list[float] = []  # the budget in force (at most one: extraction does not nest)
# CPU seconds after which an expired budget raises again: the exception lands wherever
# the main thread is, and where that is a finalizer or a weakref callback (a garbage
# collection run inside the block) Python prints and drops it; raised again until it
# leaves the block, it always ends the work.
RAISE_AGAIN_S = 0.01


def _expired(signum: int, frame: FrameType | None) -> None:
    if _active:  # a signal arriving after the block ended is ignored
        seconds = _active[0]
        signal.setitimer(signal.ITIMER_PROF, RAISE_AGAIN_S)
        raise ExtractionTimeout(f"extraction took longer than its {seconds:g}s budget")


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise :class:`ExtractionTimeout` in the block once the process has spent
    ``seconds`` of CPU time in it.
    Without effect off the main thread, or with ``seconds <= 0``."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or _active:
        yield
        return
    previous = signal.signal(signal.SIGPROF, _expired)
    _active.append(seconds)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        _active.clear()  # first: a signal from here on is ignored
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
