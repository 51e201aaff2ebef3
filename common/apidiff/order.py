"""A symbol's history across versions as typed changes (pure): :func:`history_steps`
and :func:`summary_of`. The versions' order and ``PROJECT@VERSION`` references are
``common/version_order.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.apidiff.changes import Change
from invcrawl.common.apidiff.diff import REMOVED, SymbolChange, diff_items, live
from invcrawl.common.items import Item


@dataclass(slots=True)
class Step:
    """One version of a symbol's history: is it there, and what changed since the
    previous version (``change``: added / removed / changed, or None for no change)."""

    version: str
    crawl_id: str
    present: bool
    change: SymbolChange | None = None
    breaking: bool = False
    changes: list[Change] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "crawl_id": self.crawl_id,
            "present": self.present,
            "change": self.change,
            "breaking": self.breaking,
            "changes": [c.to_json() for c in self.changes],
        }


def history_steps(
    versions: Sequence[tuple[str, str, Item | None]],
) -> list[Step]:
    """(version, crawl id, the symbol's item or None) in version order → the steps:
    the first version where it exists is ``added``, one where it no longer does
    ``removed``, and each later version the typed changes since the one before."""
    steps = []
    previous: Item | None = None
    for version, crawl_id, item in versions:
        present = live(item)
        step = Step(version, crawl_id, present)
        found = diff_items(previous, item)
        if found is not None:
            step.change, step.breaking, step.changes = found.change, found.breaking, found.changes
        steps.append(step)
        previous = item if present else None
    return steps


def summary_of(steps: Sequence[Step]) -> dict[str, Any]:
    """The versions the symbol exists in, where it first appeared, where it last
    disappeared (None while it is in the newest version)."""
    present = [s.version for s in steps if s.present]
    removed = [s.version for s in steps if s.change == REMOVED]
    last_removed = removed[-1] if removed and not steps[-1].present else None
    return {
        "exists_in": present,
        "first": present[0] if present else None,
        "removed_in": last_removed,
    }
