"""The typed change records of the API diff (``common/apidiff/diff.py`` makes them, the
renderers read their attributes), and their one codec with the JSON of ``invcrawl diff
--json``, ``history`` and the change feed: ``{"kind": ..., <facts>..., "breaking": ...}``,
the facts in the order of each record's fields (byte for byte the dicts of before)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any


class ChangeKind(StrEnum):
    """The ``kind`` of one typed change (the table of diff.py's docstring), in the
    order the terminal summary counts them."""

    PARAM_ADDED = "param_added"
    PARAM_REMOVED = "param_removed"
    PARAM_RENAMED = "param_renamed"
    PARAM_DEFAULT_CHANGED = "param_default_changed"
    PARAM_TYPE_CHANGED = "param_type_changed"
    PARAM_KIND_CHANGED = "param_kind_changed"
    RETURN_CHANGED = "return_changed"
    RAISES_ADDED = "raises_added"
    RAISES_REMOVED = "raises_removed"
    DEPRECATED = "deprecated"
    LABEL_ADDED = "label_added"
    LABEL_REMOVED = "label_removed"
    SIGNATURE_CHANGED = "signature_changed"
    STATUS_CHANGED = "status_changed"
    DOC_CHANGED = "doc_changed"


CHANGE_KINDS = tuple(ChangeKind)


@dataclass(frozen=True, slots=True)
class Change:
    """One typed change: its ``kind`` (a :class:`ChangeKind`, or the string of a kind
    this version does not know, read back from a newer one's JSON) and whether it can
    break a caller; each subclass adds its facts. A bare ``Change`` has none
    (``doc_changed``, or an unknown kind)."""

    kind: str
    breaking: bool

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self)[2:]:  # the facts: the subclass's own fields, in order
            out[f.name] = getattr(self, f.name)
        out["breaking"] = self.breaking
        return out

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Change:
        """A change as its JSON holds it (a missing fact is None, as ``.get`` read it)."""
        kind, breaking = d.get("kind"), bool(d.get("breaking"))
        record = _RECORDS.get(str(kind))
        if record is None:
            return Change(str(kind), breaking)
        facts = [d.get(f.name) for f in fields(record)[2:]]
        if record is ParamAdded:
            facts[1] = bool(facts[1])
        return record(_KINDS[str(kind)], breaking, *facts)


@dataclass(frozen=True, slots=True)
class ParamAdded(Change):
    param: str | None
    required: bool


@dataclass(frozen=True, slots=True)
class ParamRemoved(Change):
    param: str | None


@dataclass(frozen=True, slots=True)
class Replaced(Change):
    """A value that became another: a parameter's name (``param_renamed``), the return
    type, the signature, the extraction status."""

    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class ParamChanged(Change):
    """One fact of a parameter that changed: its default, type or kind."""

    param: str | None
    old: str | None
    new: str | None


@dataclass(frozen=True, slots=True)
class RaisesChanged(Change):
    exception: str


@dataclass(frozen=True, slots=True)
class Deprecated(Change):
    version: str | None


@dataclass(frozen=True, slots=True)
class LabelChanged(Change):
    label: str


_KINDS = {str(k): k for k in ChangeKind}
_RECORDS: dict[str, type[Change]] = {
    ChangeKind.PARAM_ADDED: ParamAdded,
    ChangeKind.PARAM_REMOVED: ParamRemoved,
    ChangeKind.PARAM_RENAMED: Replaced,
    ChangeKind.PARAM_DEFAULT_CHANGED: ParamChanged,
    ChangeKind.PARAM_TYPE_CHANGED: ParamChanged,
    ChangeKind.PARAM_KIND_CHANGED: ParamChanged,
    ChangeKind.RETURN_CHANGED: Replaced,
    ChangeKind.RAISES_ADDED: RaisesChanged,
    ChangeKind.RAISES_REMOVED: RaisesChanged,
    ChangeKind.DEPRECATED: Deprecated,
    ChangeKind.LABEL_ADDED: LabelChanged,
    ChangeKind.LABEL_REMOVED: LabelChanged,
    ChangeKind.SIGNATURE_CHANGED: Replaced,
    ChangeKind.STATUS_CHANGED: Replaced,
    ChangeKind.DOC_CHANGED: Change,
}
