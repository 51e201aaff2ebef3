"""Version notes (``versionadded``/``versionchanged``/``deprecated``/``versionremoved``)."""

from __future__ import annotations

import re
from typing import Any

from .text import Element, class_tokens, norm, raw_text

# The div class carries the kind; the text is translated ("New in version", "Added in version"
# since 7.3, "Nouveau dans la version"), so only the version number is read from it.
_KINDS = {
    "versionadded": "added",
    "versionchanged": "changed",
    "deprecated": "deprecated",
    "deprecated-removed": "deprecated",  # CPython's own directive
    "versionremoved": "removed",
}
_VERSION = re.compile(r"\d+(?:\.\d+)*(?:[a-z]+\d*)?")


def _kind(el: Element) -> str | None:
    for token in class_tokens(el):
        kind = _KINDS.get(token)
        if kind is not None:
            return kind
    return None


def _one(el: Element, kind: str) -> dict[str, Any]:
    label = next((s for s in el.iter("span") if "versionmodified" in class_tokens(s)), None)
    whole = norm(raw_text(el))
    version = None
    rest = whole
    if label is not None:
        label_text = norm(raw_text(label))
        match = _VERSION.search(label_text)
        version = match.group(0) if match else None
        if whole.startswith(label_text):
            rest = whole[len(label_text) :]
    else:
        match = _VERSION.search(whole)
        if match is not None:
            version = match.group(0)
            rest = whole[match.end() :]
    rest = rest.lstrip(" .:,").strip()
    return {"kind": kind, "version": version, "text": rest}


def versions(items: list[Element | str]) -> list[dict[str, Any]]:
    """Version notes placed directly in the body (nested members keep their own)."""
    out = []
    for item in items:
        if isinstance(item, str) or item.tag not in ("div", "p"):
            continue
        cls = item.get("class")
        if cls is None or ("version" not in cls and "deprecated" not in cls):
            continue
        kind = _kind(item)
        if kind is not None:
            out.append(_one(item, kind))
    return out


def after_notes(body: list[Element | str]) -> list[Element | str]:
    """``body`` from its first item that is not a version note (nor blank)."""
    for i, item in enumerate(body):
        if isinstance(item, str):
            if item.strip():
                return body[i:]
        elif not _blank(item) and not versions([item]):
            return body[i:]
    return []


def described_after_notes(
    body: list[Element | str], members: set[Element]
) -> list[Element | str] | None:
    """``body`` after the version notes it begins with, when prose follows them; None
    when it does not begin with one, or when nothing but notes and member descriptions
    follow (the notes are then the object's own text)."""
    for i, item in enumerate(body):
        if isinstance(item, str):
            if item.strip():
                return None
        elif not _blank(item):
            if not versions([item]):
                return None
            rest = after_notes(body[i:])
            prose = any(
                item.strip() if isinstance(item, str) else item not in members for item in rest
            )
            return rest if prose else None
    return None


def _blank(el: Element) -> bool:
    """An empty target (``span``, ``a``) or a rule: nothing a reader reads before a module's
    prose (CPython puts an ``hr`` under its "Source code:" line, or alone)."""
    return el.tag in ("span", "a", "hr") and not len(el) and not (el.text or "").strip()
