"""Version notes of an mkdocstrings docstring: its admonitions that say a version.

MkDocs has no version directive: a docstring says "deprecated" or "added in version" in an
admonition (``!!! warning "Deprecated since 1.4"``, griffe's Google sections ``Deprecated:``
and ``Note: Added in version 1.2``, rendered as ``div.admonition`` or ``<details>``, which
``locate.clean`` turned into the same shape). An admonition is a version note when its
class (``deprecated``, ``versionadded``...) or its title says which kind; the version is the
first version number of its title, else of its text. The result has the shape of Sphinx's
``versions`` (``common/extract/version_notes.py``): ``{kind, version, text}``.
"""

from __future__ import annotations

import re
from typing import Any

from ..text import Element, class_tokens, has_class, norm, raw_text, text

_CLASS_KINDS = {
    "deprecated": "deprecated",
    "versionadded": "added",
    "versionchanged": "changed",
    "versionremoved": "removed",
    "deprecated-removed": "deprecated",
}
# The title's first words (English, as Sphinx and griffe write them).
_TITLE = re.compile(
    r"^(?:(?P<deprecated>deprecated)|(?P<added>added|new)|(?P<changed>changed)"
    r"|(?P<removed>removed))\b",
    re.I,
)
_VERSION = re.compile(r"\d+(?:\.\d+)*(?:[a-z]+\d*)?")
# "Deprecated since version 1.4:", "Added in version 1.2.", "New in 2.0:" before the text.
_LEAD = re.compile(
    r"^(?:deprecated|added|new|changed|removed)\b[^:.\d]*?(?:version\s*)?"
    r"\d+(?:\.\d+)*(?:[a-z]+\d*)?\s*[:.,]?\s*",
    re.I,
)


def _kind(tokens: list[str], title: str) -> tuple[str | None, bool]:
    """The note's kind, and whether its class said it (a title alone must show a version:
    "Changed the defaults" is no version note)."""
    for token in tokens:
        kind = _CLASS_KINDS.get(token)
        if kind is not None:
            return kind, True
    match = _TITLE.match(title)
    if match is None:
        return None, False
    return match.lastgroup, False


def _note(el: Element) -> dict[str, Any] | None:
    first = next((c for c in el if isinstance(c.tag, str)), None)
    title_el = first if first is not None and has_class(first, "admonition-title") else None
    title = text(title_el) if title_el is not None else ""
    kind, by_class = _kind(class_tokens(el), title)
    if kind is None:
        return None
    whole = norm(raw_text(el))
    body = whole[len(title) :].strip() if title and whole.startswith(title) else whole
    match = _VERSION.search(title)
    version = match.group(0) if match is not None else None
    if version is None:
        lead = _LEAD.match(body)
        if lead is not None:
            found = _VERSION.search(lead.group(0))
            version = found.group(0) if found is not None else None
    if version is None and not by_class:
        return None
    lead = _LEAD.match(body)
    if lead is not None:
        body = body[lead.end() :]
    return {"kind": kind, "version": version, "text": body.lstrip(" .:,").strip()}


# A reST directive left as text by griffe's Markdown (numpy docstrings written for Sphinx);
# consecutive directives without a blank line between them are one paragraph, each
# directive a note of its own.
_DIRECTIVE = re.compile(
    r"(?:^|\s)\.\.\s+(deprecated|versionadded|versionchanged|versionremoved)::(?=\s|$)"
)
_DIRECTIVE_VERSION = re.compile(r"\s*(\S+)?\s*(.*)$", re.S)


def _directives(p: Element) -> list[dict[str, Any]]:
    """``<p>.. deprecated:: 1.3 Use statistics.mean instead.</p>``, and every directive
    of ``<p>.. versionadded:: 1.0 .. versionchanged:: 1.1 Faster.</p>``."""
    whole = norm(raw_text(p))
    found = list(_DIRECTIVE.finditer(whole))
    if not found or found[0].start() != 0:
        return []
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(whole)
        rest = _DIRECTIVE_VERSION.match(whole[match.end() : end])
        version, body = (rest.group(1), rest.group(2)) if rest is not None else (None, "")
        kind = _CLASS_KINDS[match.group(1)]
        out.append({"kind": kind, "version": version, "text": body.strip()})
    return out


def versions(contents: Element) -> list[dict[str, Any]]:
    """Version notes among the doc-contents' own children (nested members keep theirs):
    admonitions, and reST version directives left as a paragraph's text."""
    out: list[dict[str, Any]] = []
    for child in contents:
        if child.tag == "p":
            head = child.text
            if head and head.lstrip().startswith(".."):
                out.extend(_directives(child))
            continue
        if child.tag != "div":
            continue
        cls = child.get("class")
        if not cls or "admonition" not in cls:
            continue
        note = _note(child)
        if note is not None:
            out.append(note)
    return out
