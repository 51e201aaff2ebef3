"""Typed API diffs: what changed in one symbol between two items, and whether it can
break a caller. Pure: items in (as docs/items.md describes them), change records out.

Signatures are compared as parsed parameter lists (an item's ``params``: name, kind,
type, default), not as strings, so a theme or whitespace change is no change. A
symbol's changes, each a typed record (``common/apidiff/changes.py``) with a ``kind`` and
its facts:

=======================  ==========================  ===========================================
kind                     facts                       breaking when
=======================  ==========================  ===========================================
``param_added``          ``param``, ``required``     it is required (no default, not variadic)
``param_removed``        ``param``                   always
``param_renamed``        ``old``, ``new``            a caller can name it (not positional-only)
``param_default_changed`` ``param``, ``old``, ``new``  the default was removed (now required)
``param_type_changed``   ``param``, ``old``, ``new``  never
``param_kind_changed``   ``param``, ``old``, ``new``  made keyword-only or positional-only
``return_changed``       ``old``, ``new``            never
``raises_added``         ``exception``               never
``raises_removed``       ``exception``               never
``deprecated``           ``version``                 never
``label_added``          ``label``                   ``property``, ``async``, ``abstractmethod``
                                                     or ``final`` (a call, a sync caller, a
                                                     subclass or an override breaks)
``label_removed``        ``label``                   ``property`` (unless now a
                                                     ``cached_property``, or the reverse),
                                                     ``async``, ``classmethod`` or
                                                     ``staticmethod`` (``obj.x``, ``await``,
                                                     ``Cls.f()`` break)
``signature_changed``    ``old``, ``new``            the positional parameters changed order
``status_changed``       ``old``, ``new``            never (one side has no content: a dead
                                                     page, a page not found)
``doc_changed``          (none)                      never
=======================  ==========================  ===========================================

A removed symbol is breaking (except ``std`` entries: labels, pages, terms); an added one
is not. A rename is reported only where the evidence is clear: one parameter left and one
came, at the same place in the signature, of the same kind, with the same default, and the
same type or description (at least one of those shown); otherwise it is a removal and an
addition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from invcrawl.common.apidiff.changes import (
    Change,
    ChangeKind,
    Deprecated,
    LabelChanged,
    ParamAdded,
    ParamChanged,
    ParamRemoved,
    RaisesChanged,
    Replaced,
)
from invcrawl.common.content import Content, Param, VersionNote
from invcrawl.common.items import Item
from invcrawl.common.params import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
)


class SymbolChange(StrEnum):
    """How a symbol differs between two crawls (``change`` of a :class:`SymbolDiff`)."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


ADDED, REMOVED, CHANGED = SymbolChange.ADDED, SymbolChange.REMOVED, SymbolChange.CHANGED


# The members as globals too: the diff reads them in its loops per parameter, where a
# global is cheaper to read than an enum's attribute (docs/performance.md).
PARAM_ADDED = ChangeKind.PARAM_ADDED
PARAM_REMOVED = ChangeKind.PARAM_REMOVED
PARAM_RENAMED = ChangeKind.PARAM_RENAMED
PARAM_DEFAULT_CHANGED = ChangeKind.PARAM_DEFAULT_CHANGED
PARAM_TYPE_CHANGED = ChangeKind.PARAM_TYPE_CHANGED
PARAM_KIND_CHANGED = ChangeKind.PARAM_KIND_CHANGED
RETURN_CHANGED = ChangeKind.RETURN_CHANGED
RAISES_ADDED = ChangeKind.RAISES_ADDED
RAISES_REMOVED = ChangeKind.RAISES_REMOVED
DEPRECATED = ChangeKind.DEPRECATED
LABEL_ADDED = ChangeKind.LABEL_ADDED
LABEL_REMOVED = ChangeKind.LABEL_REMOVED
SIGNATURE_CHANGED = ChangeKind.SIGNATURE_CHANGED
STATUS_CHANGED = ChangeKind.STATUS_CHANGED
DOC_CHANGED = ChangeKind.DOC_CHANGED
# Statuses whose items carry extracted content (the others are empty: docs/items.md).
_CONTENT = frozenset(("ok", "anchor_missing"))
_REQUIRED_KINDS = frozenset((POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, KEYWORD_ONLY))
_POSITIONAL = frozenset((POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD))


@dataclass(slots=True)
class SymbolDiff:
    """One symbol that differs: one JSON line of ``invcrawl diff --json``."""

    key: str
    change: SymbolChange
    breaking: bool
    changes: list[Change] = field(default_factory=list)
    old: Item | None = None  # the items, for renderers (not in the JSON line)
    new: Item | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "change": self.change,
            "breaking": self.breaking,
            "changes": [c.to_json() for c in self.changes],
        }


def live(item: Item | None) -> bool:
    """An item that exists (a tombstone, ``status: removed``, does not)."""
    return item is not None and item.get("status") != "removed"


def diff_items(old: Item | None, new: Item | None) -> SymbolDiff | None:
    """The typed difference of one symbol between two items (None: absent, or a
    tombstone); None when nothing a reader would call a change differs (a theme, the
    site's address, whitespace)."""
    if not live(old) and not live(new):
        return None
    if not live(old):
        assert new is not None
        return SymbolDiff(new["key"], ADDED, False, [], None, new)
    if not live(new):
        assert old is not None
        return SymbolDiff(old["key"], REMOVED, old.get("domain") != "std", [], old, None)
    assert old is not None and new is not None
    changes = item_changes(old, new)
    if not changes:
        return None
    return SymbolDiff(new["key"], CHANGED, any(c.breaking for c in changes), changes, old, new)


# What the diff reads of an item: two items equal on these have no change (the fast path:
# most symbols of two versions are identical).
COMPARED = ("status", "signature", "params", "returns", "raises", "versions", "doc", "labels")
# Labels (docs/items.md) whose arrival, or whose loss, breaks a user's code.
BREAKING_LABEL_ADDED = frozenset(("property", "async", "abstractmethod", "final"))
BREAKING_LABEL_REMOVED = frozenset(
    ("property", "cached_property", "async", "classmethod", "staticmethod")
)
# Read as an attribute either way: one of them replacing the other breaks nobody.
_ATTRIBUTE_LABELS = frozenset(("property", "cached_property"))


def item_changes(old: Item, new: Item) -> list[Change]:
    """Every typed change from ``old`` to ``new`` (two live items of one key), each with
    its ``breaking`` flag."""
    if all(old.get(f) == new.get(f) for f in COMPARED):
        return []
    if old.get("status") not in _CONTENT or new.get("status") not in _CONTENT:
        if old.get("status") == new.get("status"):
            return []
        return [Replaced(STATUS_CHANGED, False, old=old.get("status"), new=new.get("status"))]
    was, now = Content.of(old), Content.of(new)  # (decoded once: notes are told by identity)
    old_params, new_params = _call_params(was, now), _call_params(now, was)
    same_params = old_params == new_params
    changes = [] if same_params else param_changes(old_params, new_params)
    old_return, new_return = _returns(was), _returns(now)
    if _squash(old_return) != _squash(new_return):
        changes.append(Replaced(RETURN_CHANGED, False, old=old_return, new=new_return))
    old_raises, new_raises = _raises(was), _raises(now)
    changes += [
        RaisesChanged(RAISES_ADDED, False, exception=e) for e in new_raises if e not in old_raises
    ]
    changes += [
        RaisesChanged(RAISES_REMOVED, False, exception=e) for e in old_raises if e not in new_raises
    ]
    reordered = _reordered(_positional_order(was), _positional_order(now))
    if _squash(old.get("signature")) != _squash(new.get("signature")) and (
        reordered or not changes
    ):
        changes.append(
            Replaced(
                SIGNATURE_CHANGED,
                reordered,
                old=old.get("signature"),
                new=new.get("signature"),
            )
        )
    seen = {v.version for v in _notes(was, "deprecated")}
    deprecations = [v for v in _notes(now, "deprecated") if v.version not in seen]
    changes += [Deprecated(DEPRECATED, False, version=v.version) for v in deprecations]
    if "labels" in old and "labels" in new:  # items of before the field have no labels
        old_labels, new_labels = old["labels"] or [], new["labels"] or []
        changes += [
            LabelChanged(LABEL_ADDED, x in BREAKING_LABEL_ADDED, label=x)
            for x in new_labels
            if x not in old_labels
        ]
        still_attribute = not _ATTRIBUTE_LABELS.isdisjoint(new_labels)
        changes += [
            LabelChanged(
                LABEL_REMOVED,
                x in BREAKING_LABEL_REMOVED and not (x in _ATTRIBUTE_LABELS and still_attribute),
                label=x,
            )
            for x in old_labels
            if x not in new_labels
        ]
    if (
        old.get("doc") != new.get("doc")
        and _squash(old.get("doc")) != _squash(new.get("doc"))
        and (
            _doc_text(old, was) != _doc_text(new, now)
            or _other_notes(was, []) != _other_notes(now, deprecations)
        )
    ):  # the text, or version notes other than a new deprecation (one taken away...)
        changes.append(Change(DOC_CHANGED, False))
    return changes


def diff_all(old: Mapping[str, Item], new: Mapping[str, Item]) -> list[SymbolDiff]:
    """Every symbol that differs between two crawls (key -> latest item), by key."""
    out = []
    for key in sorted(old.keys() | new.keys()):
        found = diff_items(old.get(key), new.get(key))
        if found is not None:
            out.append(found)
    return out


# -- parameters ------------------------------------------------------------------------


def _bare(name: str | None) -> str:
    return (name or "").lstrip("*")


def required(p: Param) -> bool:
    """A caller must pass it: a named, non-variadic parameter of the signature without a
    default (a parameter only a field list names has no kind, and is not)."""
    return p.kind in _REQUIRED_KINDS and p.default is None


def param_changes(old: Iterable[Param], new: Iterable[Param]) -> list[Change]:
    """Changes between two parameter lists, matched by name (unnamed C parameters by
    position), in the order of the new list, removals last."""
    old_list, new_list = _keyed(old), _keyed(new)
    old_by = dict(old_list)
    new_by = dict(new_list)
    gone = [k for k, _ in old_list if k not in new_by]
    came = {k for k, _ in new_list if k not in old_by}  # (a set: 20,000 renamed are linear)
    renamed: dict[str, str] = {}  # new key -> old key
    if len(gone) == 1 and len(came) == 1 and _renamed(old_list, new_list, gone[0], *came):
        renamed[next(iter(came))] = gone[0]
        gone, came = [], set()
    out: list[Change] = []
    for key, p in new_list:
        if key in renamed:
            q = old_by[renamed[key]]
            kinds = {q.kind, p.kind}
            out.append(
                Replaced(
                    PARAM_RENAMED,
                    kinds != {POSITIONAL_ONLY},
                    old=q.name,
                    new=p.name,
                )
            )
            continue
        if key in came:
            out.append(ParamAdded(PARAM_ADDED, required(p), param=p.name, required=required(p)))
            continue
        out += _same_param(p.name, old_by[key], p)
    out += [ParamRemoved(PARAM_REMOVED, True, param=old_by[k].name) for k in gone]
    return out


def _call_params(item: Content, other: Content) -> list[Param]:
    """The item's params but those only its docstring named (kind None) that the other
    item lists as ``doc_only_params``: an item of before that field had them among its
    params, and their move is no change of the call."""
    params = list(item.params)
    names = {_bare(d.name) for d in other.doc_only_params}
    if not names:
        return params
    return [p for p in params if p.kind is not None or _bare(p.name) not in names]


def _keyed(params: Iterable[Param]) -> list[tuple[str, Param]]:
    out = []
    for i, p in enumerate(params):
        name = _bare(p.name)
        out.append((name or f"#{i}", p))
    return out


def _renamed(
    old_list: list[tuple[str, Param]],
    new_list: list[tuple[str, Param]],
    gone: str,
    came: str,
) -> bool:
    old_at = [k for k, _ in old_list].index(gone)
    new_at = [k for k, _ in new_list].index(came)
    q, p = old_list[old_at][1], new_list[new_at][1]
    if old_at != new_at or q.kind != p.kind or q.kind is None:
        return False
    if _squash(q.default) != _squash(p.default):
        return False
    pairs = ((q.type, p.type), (q.description, p.description), (q.default, p.default))
    evidence = [(a, b) for a, b in pairs if a or b]
    return bool(evidence) and all(_squash(a) == _squash(b) for a, b in evidence)


def _same_param(name: str | None, q: Param, p: Param) -> list[Change]:
    out: list[Change] = []
    old_kind, new_kind = q.kind, p.kind
    if old_kind and new_kind and old_kind != new_kind:
        breaking = new_kind in (KEYWORD_ONLY, POSITIONAL_ONLY) or (
            new_kind in (VAR_POSITIONAL, VAR_KEYWORD)  # no longer one named parameter
        )
        out.append(
            ParamChanged(PARAM_KIND_CHANGED, breaking, param=name, old=old_kind, new=new_kind)
        )
    if _squash(q.default) != _squash(p.default):
        became_required = q.default is not None and p.default is None
        out.append(
            ParamChanged(
                PARAM_DEFAULT_CHANGED,
                became_required and new_kind in _REQUIRED_KINDS,
                param=name,
                old=q.default,
                new=p.default,
            )
        )
    if _squash(q.type) != _squash(p.type):
        out.append(
            ParamChanged(
                PARAM_TYPE_CHANGED,
                False,
                param=name,
                old=q.type,
                new=p.type,
            )
        )
    return out


def _reordered(old: list[str], new: list[str]) -> bool:
    """Do the parameters positional in both versions come in another order?"""
    in_old, in_new = set(old), set(new)
    return [n for n in old if n in in_new] != [n for n in new if n in in_old]


def _positional_order(item: Content) -> list[str]:
    return [_bare(p.name) for p in item.params if p.kind in _POSITIONAL]


# -- the rest of the item --------------------------------------------------------------

_BLANKS = re.compile(r"\s+")


def _squash(text: Any) -> str | None:
    """Text compared without its whitespace (a theme or a wrapped line changes nothing)."""
    return None if text is None else _BLANKS.sub("", str(text))


def _returns(item: Content) -> str | None:
    types = [r.type for r in item.returns if r.type]
    return "; ".join(types) if types else None


def _raises(item: Content) -> dict[str, None]:
    """The exception names, in order, each once (a dict: an ordered set)."""
    out: dict[str, None] = {}
    for r in item.raises:
        name = " ".join((r.type or "").split())
        if name:
            out[name] = None
    return out


def _notes(item: Content, kind: str) -> list[VersionNote]:
    return [v for v in item.versions if v.kind == kind]


def _other_notes(
    item: Content, reported: list[VersionNote]
) -> list[tuple[str | None, str | None, str | None]]:
    """The item's version notes but ``reported`` (notes of this very item: by identity)."""
    skip = {id(v) for v in reported}
    return [(v.kind, v.version, _squash(v.text)) for v in item.versions if id(v) not in skip]


# Version notes taken out of a doc before it is compared: each is a pass over the doc,
# so their number is bounded (real items have up to 25: subprocess.Popen); notes past it
# stay in the text, where a change shows as doc_changed.
NOTES_STRIPPED = 64
# A note's translated lead-in ("Deprecated since version"): one to six words before its
# version, read backwards from the version (the longest run: where a regex searching
# forwards would start its match).
_LEAD_BACKWARDS = re.compile(r"[^\W\d]+(?: [^\W\d]+){0,5}")


def _doc_text(item: Mapping[str, Any], content: Content) -> str:
    """The item's text without its version notes (reported apart), whitespace squashed."""
    doc = " ".join(str(item.get("doc") or "").split())
    for note in content.versions[:NOTES_STRIPPED]:
        version = note.version
        if not version:
            continue
        rest = " ".join((note.text or "").split())
        doc = _without_note(doc, version, rest)
    return _BLANKS.sub("", doc)


def _without_note(doc: str, version: str, rest: str) -> str:
    """``doc`` without the first place a note shows: its lead-in ("Deprecated since
    version 1.4:") and its text. One search finds " VERSION" (a literal the regex engine
    looks for fast) after a word and before the note's text; the lead-in is then read
    backwards from there (a regex trying the lead-in at every position of a 4 MB doc
    took seconds per note)."""
    literal = re.escape(" " + version)
    found = re.search(
        literal + r"(?<=[^\W\d]" + literal + r")[.:]?" + (r" ?" + re.escape(rest) if rest else ""),
        doc,
    )
    if found is None:
        return doc
    at = found.start()
    lead = _LEAD_BACKWARDS.match(doc[:at][::-1])
    start = at - (lead.end() if lead else 0)
    return doc[:start] + doc[found.end() :]
