"""The typed API diff (``common/apidiff.py``) for people: a terminal summary (breaking
changes first, then the others, then counts per kind) and release-notes Markdown (a
section per module, breaking changes first in each, modules with breaking changes first).
Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from common.apidiff import ADDED, CHANGE_KINDS, CHANGED, REMOVED, SymbolDiff


def describe(change: dict[str, Any], code: str = "") -> str:
    """One change in words; ``code`` wraps names and values (Markdown: a backtick)."""

    def c(value: Any) -> str:
        return "none" if value is None else f"{code}{value}{code}"

    kind = change["kind"]
    if kind == "param_added":
        what = "required parameter" if change["required"] else "parameter"
        return f"new {what} {c(change['param'])}"
    if kind == "param_removed":
        return f"parameter {c(change['param'])} removed"
    if kind == "param_renamed":
        return f"parameter {c(change['old'])} renamed to {c(change['new'])}"
    if kind == "param_default_changed":
        return f"default of {c(change['param'])}: {c(change['old'])} -> {c(change['new'])}"
    if kind == "param_type_changed":
        return f"type of {c(change['param'])}: {c(change['old'])} -> {c(change['new'])}"
    if kind == "param_kind_changed":
        return f"parameter {c(change['param'])} is now {change['new']} (was {change['old']})"
    if kind == "return_changed":
        return f"returns {c(change['new'])} (was {c(change['old'])})"
    if kind == "raises_added":
        return f"may raise {c(change['exception'])}"
    if kind == "raises_removed":
        return f"no longer documented to raise {c(change['exception'])}"
    if kind == "deprecated":
        return f"deprecated in {change['version'] or 'this version'}"
    if kind == "signature_changed":
        return f"signature: {c(change['old'])} -> {c(change['new'])}"
    if kind == "status_changed":
        return f"extraction status {change['old']} -> {change['new']}"
    return "documentation changed"


def counts(diffs: Iterable[SymbolDiff]) -> Counter[str]:
    """Symbols added, removed, changed and breaking, and changes per kind."""
    total: Counter[str] = Counter()
    for d in diffs:
        total[d.change] += 1
        total["breaking"] += d.breaking
        total.update(c["kind"] for c in d.changes)
    return total


def _line(d: SymbolDiff, code: str = "", only_breaking: bool | None = None) -> str:
    if d.change == ADDED:
        return f"{code}{d.key}{code} added"
    if d.change == REMOVED:
        return f"{code}{d.key}{code} removed"
    picked = [c for c in d.changes if only_breaking is None or bool(c["breaking"]) == only_breaking]
    return f"{code}{d.key}{code}: " + "; ".join(describe(c, code) for c in picked)


def summary(diffs: Sequence[SymbolDiff], old: str, new: str) -> str:
    """The terminal summary of ``invcrawl diff``."""
    total = counts(diffs)
    out = [
        f"{old} -> {new}: {len(diffs)} symbols differ: {total[ADDED]} added, "
        f"{total[REMOVED]} removed, {total['changed']} changed; {total['breaking']} breaking"
    ]
    breaking = [d for d in diffs if d.breaking]
    if breaking:
        out += ["", "Breaking changes:"]
        out += ["  " + _line(d, only_breaking=True) for d in breaking]
    others = [
        _line(d, only_breaking=False)
        for d in diffs
        if (d.change == CHANGED and any(not c["breaking"] for c in d.changes))
        or (d.change != CHANGED and not d.breaking)
    ]
    if others:
        out += ["", "Other changes:"]
        out += ["  " + line for line in others]
    kinds = [(k, total[k]) for k in (ADDED, REMOVED, *CHANGE_KINDS) if total[k]]
    if kinds:
        out += ["", "Per kind:"]
        out += [f"  {kind:<22} {n}" for kind, n in kinds]
    return "\n".join(out)


class Modules:
    """The documented modules (``py:module`` names), for finding the section a symbol
    goes in: a tree of their dotted parts, so that a lookup walks the symbol's name once
    (a scan of every module per symbol made 15,000 modules take 136 s)."""

    _END = ""  # the key of a node's module name (a part is never "" in a path: see add)

    def __init__(self, modules: Iterable[str]) -> None:
        self._tree: dict[str, Any] = {}
        for module in modules:
            if module:
                node = self._tree
                for part in module.split("."):
                    node = node.setdefault("." + part, {})  # "." + part: never _END
                node[self._END] = module

    def longest(self, name: str) -> str:
        """The longest module that ``name`` is, or is inside (``a.b`` for ``a.b.C.m``);
        "" for none."""
        best, node = "", self._tree
        for part in name.split("."):
            found = node.get("." + part)
            if found is None:
                break
            node = found
            best = node.get(self._END, best)
        return best


def module_of(key: str, modules: Modules | Iterable[str]) -> str:
    """The section a symbol goes in: its longest documented module (``py:module``
    entries), else its domain."""
    known = modules if isinstance(modules, Modules) else Modules(modules)
    domain, _, rest = key.partition(":")
    name = rest.partition(":")[2]
    if domain == "py":
        best = known.longest(name)
        if best:
            return best
    return {"std": "Pages and labels", "c": "C API", "cpp": "C++ API"}.get(domain, domain)


def markdown(diffs: Sequence[SymbolDiff], old: str, new: str, modules: Iterable[str]) -> str:
    """Release-notes Markdown of ``invcrawl diff --markdown``."""
    known = Modules(modules)
    total = counts(diffs)
    sections: dict[str, list[SymbolDiff]] = {}
    for d in diffs:
        sections.setdefault(module_of(d.key, known), []).append(d)
    out = [
        f"# Changes from {old} to {new}",
        "",
        f"{total['breaking']} breaking, {total[ADDED]} added, {total[REMOVED]} removed, "
        f"{total['changed']} changed.",
    ]
    order = sorted(sections, key=lambda m: (not any(d.breaking for d in sections[m]), m))
    for module in order:
        out += ["", f"## {module}"]
        entries = sections[module]
        for title, picked in (
            ("Breaking", [d for d in entries if d.breaking]),
            ("Added", [d for d in entries if d.change == ADDED]),
            ("Changed", [d for d in entries if d.change != ADDED and not d.breaking]),
        ):
            if picked:
                out += ["", f"### {title}", ""]
                out += [f"- {_line(d, '`')}" for d in picked]
    return "\n".join(out) + "\n"
