"""Versions of one project side by side (pure): their order and ``PROJECT@VERSION``
references to crawls.

A crawl's project and version come from its inventory header (``# Project:``,
``# Version:``) unless ``--project`` / ``--version`` named them (docs/versions.md).
Apart from the API diff (``common/apidiff``, whose package imports its diff and change
records): a search picks and orders versions with these alone (issue 47, 5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

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
