"""The round planner of ``--every`` (pure): which crawls a refresh round takes, how long
to sleep before it, and what to record of each crawl's next round. Its two drivers keep
only how a round runs: the ``crawl`` supervisor (``invcrawl/adaptive.py``: a crawl run
per round, a connection per Redis step between runs) and ``produce --every``
(``producer/schedule.py``: one long-running Scrapy process and client).

* :class:`FixedPeriod` (``--every DURATION``): every crawl together, every period
  jittered by 10% (:func:`fixed_delay`), so that many producers do not hit their hosts
  in step.
* :class:`Adaptive` (``--every auto``): each crawl on its own interval
  (``common/refresh_interval.py``), set once its round is over (:func:`next_interval`) and kept
  with its next round's time in its meta (``frontier/refresh_schedule.py``, which reads them
  back as the due times planned on here: :func:`wake`, :func:`due_by`, :func:`nap`).

Due times are milliseconds by the Redis clock (the one clock every process shares); a
crawl with no due time (None) was never scheduled, or its schedule was cleared: it is
due at once. The caller supplies the random source.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from invcrawl.common.refresh_interval import Bounds, adapt, initial, jitter, jittered

POLL = 1.0  # produce --every auto: seconds between two looks at crawls whose round is under way
IDLE = 3600.0  # ... and at most between two looks when no round is under way or due
SHORTEST_NAP = 0.05  # ... and at least (a due time just passed is not spun on)


@dataclass(frozen=True, slots=True)
class FixedPeriod:
    """``--every DURATION``: every crawl, every ``seconds`` (jittered)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Adaptive:
    """``--every auto``: each crawl on its own interval within ``bounds``."""

    bounds: Bounds  # --refresh-min, --refresh-max


Mode = FixedPeriod | Adaptive


def mode_of(every: float | str, bounds: Bounds) -> Mode:
    """The mode of ``--every`` (seconds, or "auto" within ``bounds``)."""
    if every == "auto":
        return Adaptive(bounds)
    assert not isinstance(every, str), f"--every is parsed to seconds or 'auto', not {every!r}"
    return FixedPeriod(every)


@dataclass(frozen=True, slots=True)
class Interval:
    """What to record of a crawl's next round."""

    interval: float  # seconds: the crawl's interval now
    delay: float  # seconds from now until its next round (the interval, jittered)


def fixed_delay(mode: FixedPeriod, rng: random.Random | None = None) -> float:
    """``--every DURATION``: the sleep until the next round of every crawl, which is also
    what is recorded as each crawl's next refresh (the period +-10%)."""
    return jitter(mode.seconds, rng)


def next_interval(
    mode: Mode, stored: float | None, changed: bool | None, rng: random.Random
) -> Interval:
    """A crawl's interval and next round once its round is over (or when a scheduler
    starts): adapted from the ``stored`` interval (None: no history) by whether the
    round ``changed`` anything (None: not measured), or the fixed period."""
    if isinstance(mode, Adaptive):
        bounds = mode.bounds
        interval = initial(bounds) if stored is None else stored
        if changed is not None:
            interval = adapt(interval, changed, bounds)
        interval = bounds.clamp(interval)
        return Interval(interval, jittered(interval, bounds, rng))
    return Interval(mode.seconds, fixed_delay(mode, rng))


@dataclass(frozen=True, slots=True)
class Wake:
    """When the next round comes: the soonest due time, and the sleep until it."""

    at_ms: int  # the soonest due time (now when no crawl has one)
    sleep: float  # seconds from now (0: at once)


def wake(due_at: Mapping[str, int | None], now_ms: int) -> Wake:
    """The crawl supervisor's ``--every auto``: sleep until the soonest due time."""
    soonest = min((at for at in due_at.values() if at), default=now_ms)
    return Wake(soonest, max(0.0, (soonest - now_ms) / 1000))


def due_by(due_at: Mapping[str, int | None], at_ms: int) -> list[str]:
    """The crawls due by ``at_ms`` (one with no due time is due at once), in the order
    of ``due_at``: they are refreshed together, in one round."""
    return [c for c, at in due_at.items() if at is None or at <= at_ms]


def nap(due_at: Mapping[str, int], now_ms: int | None, busy: bool) -> float:
    """``produce --every auto``: seconds until the next look at the schedule. A round
    under way (``busy``: its crawl, or crawls not measured yet) is looked at each
    :data:`POLL`; else the next look is at the soonest due time, within
    :data:`SHORTEST_NAP` and :data:`IDLE`. ``now_ms`` None: the clock could not be read
    (Redis unreachable): a look again in a moment."""
    seconds = POLL if busy or not due_at else IDLE
    if due_at and now_ms:
        seconds = min(seconds, (min(due_at.values()) - now_ms) / 1000)
    return max(SHORTEST_NAP, seconds)
