"""Versions of one project side by side (pure): their order, ``PROJECT@VERSION``
references to crawls, and a symbol's history across versions as typed changes.

A crawl's project and version come from its inventory header (``# Project:``,
``# Version:``) unless ``--project`` / ``--version`` named them (docs/versions.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from invcrawl.common.apidiff.changes import Change
from invcrawl.common.apidiff.diff import REMOVED, SymbolChange, diff_items, live
from invcrawl.common.items import Item

_RUNS = re.compile(r"(\d+)")


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key of a version string: PEP 440 order where it parses (``2.0rc1`` before
    ``2.0``, ``1.10`` after ``1.9``), else a natural order of its digit runs; versions
    that parse sort before those that do not. Total: any string gives a key that
    compares with every other (a run of 4,301 digits, which ``int`` refuses, is compared
    as digits: its length without leading zeros, then its text)."""
    try:
        return (0, Version(version), ())
    except ValueError:  # InvalidVersion, or a number int() refuses to convert
        parts = tuple(
            (0, len(run.lstrip("0")), run.lstrip("0")) if run.isdigit() else (1, 0, run.lower())
            for run in _RUNS.split(version)
            if run
        )
        return (1, Version("0"), parts)


@dataclass(frozen=True, slots=True)
class CrawlRef:
    """``PROJECT@VERSION`` (case-sensitive first, then case-insensitive on the project)."""

    project: str
    version: str


def parse_ref(text: str) -> CrawlRef | None:
    """``PROJECT@VERSION`` → its parts; None for a plain crawl id (ids have no ``@``)."""
    project, at, version = text.rpartition("@")
    if not at:
        return None
    return CrawlRef(project.strip(), version.strip())


def matches(ref: CrawlRef, project: str, version: str, exact: bool) -> bool:
    if version != ref.version:
        return False
    return project == ref.project if exact else project.casefold() == ref.project.casefold()


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
