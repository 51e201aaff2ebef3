"""Adaptive refresh intervals (``--every auto``): each crawl is refreshed on its own
interval, shortened when its last round found changes and lengthened when it found
none, within ``--refresh-min`` and ``--refresh-max``, and jittered so that crawls (and
producers) that share an interval do not hit their hosts in step.

The rule is Nutch's adaptive fetch schedule (``AdaptiveFetchSchedule``: an interval
multiplied by ``1 - DEC_RATE`` after a change, ``1 + INC_RATE`` after none, within
bounds), with steeper rates: a round costs a conditional GET per page and nothing more
when nothing changed, so backing off quickly is cheap to undo. From the geometric
middle of the default bounds (1 h, 7 d: about 13 h), a site that never changes reaches
7 d in 7 rounds, and one that changes every round reaches 1 h in 4.

Pure: the caller supplies the random source; Redis is ``frontier/refresh_schedule.py``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

SHORTEN = 0.5  # a round that found changes: the next one comes twice as soon
LENGTHEN = 1.5  # a round that found none: the next one comes 1.5 times later
JITTER = 0.1  # each delay is drawn within +-10% of the interval


@dataclass(frozen=True, slots=True)
class Bounds:
    """The shortest and the longest interval, seconds (``--refresh-min/--refresh-max``)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.high:
            raise ValueError(f"refresh bounds need 0 < min <= max, got {self.low}, {self.high}")

    def clamp(self, seconds: float) -> float:
        return min(self.high, max(self.low, seconds))


def initial(bounds: Bounds) -> float:
    """The interval of a crawl with no history: the geometric middle of the bounds (as
    many rounds from either bound)."""
    return bounds.clamp(math.sqrt(bounds.low * bounds.high))


def adapt(interval: float, changed: bool, bounds: Bounds) -> float:
    """The interval after a round that ``changed`` (found added, changed or removed
    items) or not; an interval from other bounds is brought within these first."""
    return bounds.clamp(bounds.clamp(interval) * (SHORTEN if changed else LENGTHEN))


def jitter(seconds: float, rng: random.Random | None = None) -> float:
    """``seconds`` +-10%: the delay until a round of ``--every DURATION`` (the
    ``produce`` and ``crawl`` loops) as of ``--every auto``."""
    uniform = rng.uniform if rng is not None else random.uniform
    return seconds * uniform(1 - JITTER, 1 + JITTER)


def jittered(interval: float, bounds: Bounds, rng: random.Random) -> float:
    """The delay until the next round: ``interval`` +-10%, within the bounds."""
    return bounds.clamp(jitter(interval, rng))
