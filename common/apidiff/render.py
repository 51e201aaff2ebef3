"""The typed API diff (``common/apidiff/diff.py``) for people: a terminal summary (breaking
changes first, then the others, then counts per kind) and release-notes Markdown (a
section per module, breaking changes first in each, modules with breaking changes first).
Pure.

Everything in them but their own words comes from a site (keys, module names, parameter
names and values, versions, the project and version of each side), so each renderer
takes a :class:`Style` saying how such a string is written: :data:`MARKDOWN` writes names
and values as code spans fenced longer than any backtick run inside, and prose (module
names in headings, the title, versions) with every character that could start Markdown
or HTML backslash-escaped, line breaks as spaces: no stored ``<script>``, ``<img
onerror>`` or remote image renders live. The terminal's style is ``invcrawl/render.safe``
(control characters escaped), handed in by the command."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from invcrawl.common.apidiff.changes import (
    CHANGE_KINDS,
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
from invcrawl.common.apidiff.diff import ADDED, CHANGED, REMOVED, SymbolDiff

_LINE_BREAKS = re.compile(r"\r\n?|\n")
_TICKS = re.compile(r"`+")
# ASCII punctuation that can start Markdown (CommonMark and GFM) or HTML inline: code,
# emphasis, links and images, raw HTML and autolinks, entities, headings' closing
# hashes, tables, strikethrough, GFM's bare URL autolinks (the colon of "http:").
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>!&#|~:])")


def markdown_code(value: Any) -> str:
    """``value`` as a CommonMark code span: fenced with one backtick more than its longest
    run of them, padded with a space on each side (which the renderer takes off) where it
    starts or ends with a backtick or would lose its own spaces, line breaks as spaces."""
    text = _LINE_BREAKS.sub(" ", str(value))
    if not text:
        return ""  # (no code span is empty)
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    stripped = text[0] == text[-1] == " " and text.strip(" ")  # as a renderer strips it
    pad = " " if "`" in (text[0], text[-1]) or stripped else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_text(value: Any) -> str:
    """``value`` as inert Markdown text: every character that could start a construct
    backslash-escaped, line breaks as spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(value)))


@dataclass(frozen=True, slots=True)
class Style:
    """How a site's strings are written: ``code`` for names and values (keys, parameters,
    defaults, types), ``text`` for the rest (versions, modules, project and version)."""

    code: Callable[[Any], str]
    text: Callable[[Any], str]


PLAIN = Style(str, str)
MARKDOWN = Style(markdown_code, markdown_text)


def _words(ch: Change, c: Callable[[Any], str], t: Callable[[Any], str]) -> str:
    """One change in words: ``c`` writes a name or value (None as "none"), ``t`` a text
    of the site."""
    kind = ch.kind
    match ch:
        case ParamAdded():
            return f"new {'required parameter' if ch.required else 'parameter'} {c(ch.param)}"
        case ParamRemoved():
            return f"parameter {c(ch.param)} removed"
        case ParamChanged() if kind == ChangeKind.PARAM_DEFAULT_CHANGED:
            return f"default of {c(ch.param)}: {c(ch.old)} -> {c(ch.new)}"
        case ParamChanged() if kind == ChangeKind.PARAM_TYPE_CHANGED:
            return f"type of {c(ch.param)}: {c(ch.old)} -> {c(ch.new)}"
        case ParamChanged():
            return f"parameter {c(ch.param)} is now {t(ch.new)} (was {t(ch.old)})"
        case Replaced() if kind == ChangeKind.PARAM_RENAMED:
            return f"parameter {c(ch.old)} renamed to {c(ch.new)}"
        case Replaced() if kind == ChangeKind.RETURN_CHANGED:
            return f"returns {c(ch.new)} (was {c(ch.old)})"
        case Replaced() if kind == ChangeKind.SIGNATURE_CHANGED:
            return f"signature: {c(ch.old)} -> {c(ch.new)}"
        case Replaced():
            return f"extraction status {t(ch.old)} -> {t(ch.new)}"
        case RaisesChanged() if kind == ChangeKind.RAISES_ADDED:
            return f"may raise {c(ch.exception)}"
        case RaisesChanged():
            return f"no longer documented to raise {c(ch.exception)}"
        case Deprecated():
            return f"deprecated in {t(ch.version) if ch.version else 'this version'}"
        case LabelChanged() if kind == ChangeKind.LABEL_ADDED:
            return f"now {c(ch.label)}"
        case LabelChanged():
            return f"no longer {c(ch.label)}"
    return "documentation changed"


def describe(change: Change, style: Style = PLAIN) -> str:
    """One change in words, the site's names and values written in ``style`` (a kind
    this version does not know, from a newer one, reads as a documentation change)."""

    def c(value: Any) -> str:
        return "none" if value is None else style.code(value)

    return _words(change, c, style.text)


def counts(diffs: Iterable[SymbolDiff]) -> Counter[str]:
    """Symbols added, removed, changed and breaking, and changes per kind."""
    total: Counter[str] = Counter()
    for d in diffs:
        total[d.change] += 1
        total["breaking"] += d.breaking
        total.update(str(c.kind) for c in d.changes)
    return total


def _line(d: SymbolDiff, style: Style = PLAIN, only_breaking: bool | None = None) -> str:
    key = style.code(d.key)
    if d.change == ADDED:
        return f"{key} added"
    if d.change == REMOVED:
        return f"{key} removed"
    picked = [c for c in d.changes if only_breaking is None or c.breaking == only_breaking]
    return f"{key}: " + "; ".join(describe(c, style) for c in picked)


def summary(diffs: Sequence[SymbolDiff], old: str, new: str, style: Style = PLAIN) -> str:
    """The terminal summary of ``invcrawl diff`` (``old`` and ``new``: the labels of the
    two sides, from the site: written in ``style``)."""
    total = counts(diffs)
    out = [
        f"{style.text(old)} -> {style.text(new)}: {len(diffs)} symbols differ: "
        f"{total[ADDED]} added, {total[REMOVED]} removed, {total['changed']} changed; "
        f"{total['breaking']} breaking"
    ]
    breaking = [d for d in diffs if d.breaking]
    if breaking:
        out += ["", "Breaking changes:"]
        out += ["  " + _line(d, style, only_breaking=True) for d in breaking]
    others = [
        _line(d, style, only_breaking=False)
        for d in diffs
        if (d.change == CHANGED and any(not c.breaking for c in d.changes))
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

    _END = ""  # the key of a node's module name; a child's key is "." + its part

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
    """Release-notes Markdown of ``invcrawl diff --markdown``: every string of the site
    written inert (:data:`MARKDOWN`)."""
    known = Modules(modules)
    total = counts(diffs)
    sections: dict[str, list[SymbolDiff]] = {}
    for d in diffs:
        sections.setdefault(module_of(d.key, known), []).append(d)
    out = [
        f"# Changes from {markdown_text(old)} to {markdown_text(new)}",
        "",
        f"{total['breaking']} breaking, {total[ADDED]} added, {total[REMOVED]} removed, "
        f"{total['changed']} changed.",
    ]
    order = sorted(sections, key=lambda m: (not any(d.breaking for d in sections[m]), m))
    for module in order:
        out += ["", f"## {markdown_text(module)}"]
        entries = sections[module]
        for title, picked in (
            ("Breaking", [d for d in entries if d.breaking]),
            ("Added", [d for d in entries if d.change == ADDED]),
            ("Changed", [d for d in entries if d.change != ADDED and not d.breaking]),
        ):
            if picked:
                out += ["", f"### {title}", ""]
                out += [f"- {_line(d, MARKDOWN)}" for d in picked]
    return "\n".join(out) + "\n"
