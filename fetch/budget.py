"""A time budget for extracting one page.

Extraction runs on the reactor's thread (it is CPU work of ~10 ms a page; a thread pool
would cost more than it saves). A hostile or pathological page could hold that thread
for minutes: no other page progresses, and no lease is renewed. :func:`budget` arms a
one-shot ``SIGALRM`` timer around the call; when it fires, :class:`ExtractionTimeout`
is raised in the extracting code at its next Python instruction, the page is failed
with that reason (retried with backoff, dead-lettered after ``--max-tries``
deliveries) and the consumer carries on.

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


def _expired(signum: int, frame: FrameType | None) -> None:
    if _active:  # a signal arriving after the block ended is ignored
        seconds = _active.pop()
        raise ExtractionTimeout(f"extraction took longer than its {seconds:g}s budget")


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise :class:`ExtractionTimeout` in the block once ``seconds`` have passed.
    Without effect off the main thread, or with ``seconds <= 0``."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or _active:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expired)
    _active.append(seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        _active.clear()  # first: a signal from here on is ignored
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
