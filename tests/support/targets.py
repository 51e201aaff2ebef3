"""Targets of extraction as tests write them: an entry on its page (``TaskEntry``, the one
shape from the plan to extraction), priority 1 unless it matters."""

from __future__ import annotations

from invcrawl.common.tasks import TaskEntry


def target(name: str, domain: str, role: str, anchor: str, dispname: str = "-") -> TaskEntry:
    return TaskEntry(name, domain, role, 1, anchor, dispname)
