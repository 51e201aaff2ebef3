"""Small text and element helpers shared by the extraction modules.

Everything here works on lxml elements from ``lxml.etree.HTMLParser`` (plain ``_Element``, not
``lxml.html.HtmlElement``: the html element-class lookup makes every proxy more expensive and we
need none of its helpers).
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

Element = Any  # lxml ships no type stubs we can rely on; keep the alias so signatures stay readable

HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))


def norm(text: str) -> str:
    """Collapse whitespace runs (including ``&nbsp;``) to one space and strip the ends."""
    # str.split() with no argument treats U+00A0 and the other Unicode spaces as separators,
    # which is exactly what "&nbsp;" normalisation needs, and it is faster than a regex.
    return " ".join(text.split())


_STRING = etree.XPath("string()")
_CONTAINERS = frozenset(("section", "main", "article", "body"))


def raw_text(el: Element) -> str:
    """All text below ``el`` (not its tail), computed in C, no Python walk.

    The text serializer has the lower fixed cost (small elements: code spans, dts); XPath
    string() is ~4x faster per character on large subtrees (sections, whole pages).
    """
    if el.tag in _CONTAINERS or len(el) > 16:
        big: str = _STRING(el)
        return big
    text: str = etree.tostring(el, method="text", encoding=str, with_tail=False)
    return text


def text(el: Element) -> str:
    return norm(raw_text(el))


def has_class(el: Element, name: str) -> bool:
    cls = el.get("class")
    return bool(cls) and name in cls.split()


def class_tokens(el: Element) -> list[str]:
    cls = el.get("class")
    return cls.split() if cls else []


def drop(el: Element) -> None:
    """Remove ``el`` but keep its tail text in place (lxml's remove() would drop the tail)."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        try:
            _move_tail(parent, prev, tail)
        except ValueError:  # lxml parsed control characters it refuses to set back
            _move_tail(parent, prev, _XML_INCOMPATIBLE.sub("", tail), clean=True)
    parent.remove(el)


# Characters lxml accepts from the HTML parser but refuses in assigned text.
_XML_INCOMPATIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _move_tail(parent: Element, prev: Element | None, tail: str, clean: bool = False) -> None:
    if prev is not None:
        head = prev.tail or ""
        prev.tail = (_XML_INCOMPATIBLE.sub("", head) if clean else head) + tail
    else:
        head = parent.text or ""
        parent.text = (_XML_INCOMPATIBLE.sub("", head) if clean else head) + tail


def is_section(el: Element) -> bool:
    # docutils < 0.17 writes <div class="section">, later versions <section>.
    tag = el.tag
    return tag == "section" or (tag == "div" and has_class(el, "section"))


def heading_of(section: Element) -> Element | None:
    """The section's own heading: the first h1-h6 child (the leading span targets come first)."""
    for child in section:
        if child.tag in HEADINGS:
            return child
        if is_section(child):
            return None
    return None
