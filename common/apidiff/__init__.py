"""The typed API diff (pure): ``diff`` (what changed in one symbol between two items,
and whether it can break a caller: the change kinds and the breaking rule), ``render``
(the terminal summary and release-notes Markdown), ``changes`` (the typed change
records and their JSON), ``versions`` (a project's versions in
order, ``PROJECT@VERSION``, a symbol's history). The names of ``diff`` are exported here:
``from invcrawl.common.apidiff import diff_all``."""

from invcrawl.common.apidiff.changes import CHANGE_KINDS, Change, ChangeKind
from invcrawl.common.apidiff.diff import (
    ADDED,
    BREAKING_LABEL_ADDED,
    BREAKING_LABEL_REMOVED,
    CHANGED,
    COMPARED,
    NOTES_STRIPPED,
    REMOVED,
    SymbolChange,
    SymbolDiff,
    diff_all,
    diff_items,
    item_changes,
    live,
    param_changes,
    required,
)

__all__ = [
    "ADDED",
    "BREAKING_LABEL_ADDED",
    "BREAKING_LABEL_REMOVED",
    "CHANGED",
    "CHANGE_KINDS",
    "COMPARED",
    "NOTES_STRIPPED",
    "REMOVED",
    "Change",
    "ChangeKind",
    "SymbolChange",
    "SymbolDiff",
    "diff_all",
    "diff_items",
    "item_changes",
    "live",
    "param_changes",
    "required",
]
