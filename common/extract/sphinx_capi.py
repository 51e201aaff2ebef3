"""CPython's C API annotations (its ``c_annotations`` Sphinx extension): before the body of
a C function the page says how the function treats the reference count of its result
("Return value: New reference.") and whether it is part of the Stable ABI ("Part of the
Stable ABI since version 3.7."), in elements of the classes ``refcount`` and ``stableabi``.
They are facts about the symbol, not its prose: they become labels (``refcount:new``,
``refcount:borrowed``, ``refcount:null``, ``stable-abi``, ``stable-abi:3.7``,
``limited-api``, ``limited-api:3.7``) and leave the text, whose first sentence is then the
description's (docs/items.md, "Labels")."""

from __future__ import annotations

import re

from .text import Element, class_tokens, drop, norm, raw_text

_CLASSES = frozenset(("refcount", "stableabi"))
_REFCOUNT = {"new": "refcount:new", "borrowed": "refcount:borrowed", "always null": "refcount:null"}
_RETURN = re.compile(r"return value:\s*(new|borrowed|always null)(?: reference)?\.?$", re.I)
_ABI = re.compile(
    r"part of the (stable abi|limited api)(?: \(as an opaque struct\))?"
    r"(?: since version (\d+(?:\.\d+)*))?\.?$",
    re.I,
)


def annotation_label(words: str) -> str | None:
    """The label an annotation's text states; None for a text this does not know."""
    found = _RETURN.match(words)
    if found is not None:
        return _REFCOUNT[found[1].lower()]
    found = _ABI.match(words)
    if found is not None:
        name = "stable-abi" if found[1].lower() == "stable abi" else "limited-api"
        return f"{name}:{found[2]}" if found[2] else name
    return None


def take_annotations(main: Element, raw: bytes) -> dict[Element, list[str]]:
    """The labels of every ``dd`` holding annotations, in the page's order, the annotations
    removed from the tree before any text is read (a page without them: one byte scan)."""
    if raw and b"refcount" not in raw and b"stableabi" not in raw:
        return {}
    found: dict[Element, list[str]] = {}
    for el in list(main.iter("em", "span", "p")):
        if _CLASSES.isdisjoint(class_tokens(el)):
            continue
        label = annotation_label(norm(raw_text(el)))
        dd = next((a for a in el.iterancestors() if a.tag == "dd"), None)
        if label is None or dd is None:
            continue
        labels = found.setdefault(dd, [])
        if label not in labels:
            labels.append(label)
        parent = el.getparent()
        drop(el)
        if parent is not None and parent.tag == "p" and parent is not dd and _empty(parent):
            drop(parent)  # a paragraph that held only annotations (later CPython releases)
    return found


def _empty(el: Element) -> bool:
    return not len(el) and not (el.text or "").strip()


__all__ = ["annotation_label", "take_annotations"]
