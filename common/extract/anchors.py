"""Classify the element an anchor lands on and normalise it into signature rows and a body.

The shapes (docs/extraction.md, "How an entry is found", 4): a ``dt``; an empty
``span[id]`` inside a dt; a ``section`` or ``div.section``; an empty ``span`` as the leading
child of a section (label/module moved onto the section) or elsewhere (``span.target``
module targets, ``:no-typesetting:``); a glossary dt; a ``strong[id]`` in a production
list; any other block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .text import HEADINGS, Element, has_class, heading_of, is_section, text

# Inline tags whose id is a secondary target of the enclosing block (C++ _CPPv3/_CPPv2 spans,
# old Python ids, second option names, Breathe targets).
_INLINE = frozenset(
    (
        "span",
        "a",
        "em",
        "code",
        "strong",
        "b",
        "i",
        "tt",
        "samp",
        "kbd",
        "sup",
        "sub",
        "abbr",
        "cite",
        "small",
        "var",
    )
)


@dataclass(slots=True)
class Located:
    """Where an entry's content lives.

    ``body`` is a sequence of elements and text strings (text that sits between them, e.g. a
    ``dd``'s own text or an element's tail) whose rendering is the entry's documentation.
    """

    kind: str  # object | term | section | span | token | block | page | intro
    element: Element
    dts: list[Element] = field(default_factory=list)
    body: list[Element | str] = field(default_factory=list)
    dd: Element | None = None
    section: Element | None = None  # the section it labels or sits in (for the title)


def children_items(el: Element) -> list[Element | str]:
    """An element's content as body items: its text, then each child followed by its tail."""
    items: list[Element | str] = []
    if el.text:
        items.append(el.text)
    for child in el:
        items.append(child)
        if child.tail:
            items.append(child.tail)
    return items


def enclosing_section(el: Element, main: Element) -> Element | None:
    for anc in el.iterancestors():
        if is_section(anc):
            return anc
        if anc is main:
            break
    return None


def locate(el: Element, main: Element) -> Located:
    tag = el.tag
    if tag in _INLINE:
        dt = _enclosing_dt(el, main)
        if dt is not None:
            return _from_dt(dt)
        if tag == "strong" and _in_pre(el, main):
            return Located("token", el, body=[el], section=enclosing_section(el, main))
        if _empty_target(el):
            return _from_empty_span(el, main)
    if tag == "dt":
        return _from_dt(el)
    if is_section(el):
        return Located("section", el, body=[el], section=el)
    if tag in HEADINGS:
        parent = el.getparent()
        if parent is not None and is_section(parent) and heading_of(parent) is el:
            return Located("section", parent, body=[parent], section=parent)
        return Located(
            "span", el, body=[el, *_until_heading(el)], section=enclosing_section(el, main)
        )
    return Located("block", el, body=[el], section=enclosing_section(el, main))


def _empty_target(el: Element) -> bool:
    """An empty ``span`` target, or an empty ``<a name>`` (the fragment a browser finds by
    name: page.Page.fragment): it marks the place where its content follows."""
    if len(el) or (el.text or "").strip():
        return False
    return el.tag == "span" or (el.tag == "a" and el.get("name") is not None)


def _enclosing_dt(el: Element, main: Element) -> Element | None:
    for anc in el.iterancestors():
        tag = anc.tag
        if tag == "dt":
            return anc
        if tag not in _INLINE or anc is main:
            return None
    return None


def _in_pre(el: Element, main: Element) -> bool:
    for anc in el.iterancestors():
        if anc.tag == "pre":
            return True
        if anc is main:
            break
    return False


def _from_dt(dt: Element) -> Located:
    """The dt group sharing one dd: multi-signature directives, overloads, glossary synonyms."""
    dl = dt.getparent()
    dts = [dt]
    prev = dt.getprevious()
    while prev is not None and prev.tag == "dt":
        dts.insert(0, prev)
        prev = prev.getprevious()
    dd = None
    nxt = dt.getnext()
    while nxt is not None:
        if nxt.tag == "dd":
            dd = nxt
            break
        if nxt.tag == "dt":
            dts.append(nxt)
        nxt = nxt.getnext()
    glossary = dl is not None and has_class(dl, "glossary")
    if not glossary and dl is not None and (dd is None or _empty(dd)):
        # A directive whose content follows it unindented (Django's reference pages):
        # its description is the prose after it, as a reader sees it under the signature.
        return Located("object", dt, dts=dts, body=_written_after(dl))
    body = children_items(dd) if dd is not None else []
    return Located("term" if glossary else "object", dt, dts=dts, body=body, dd=dd)


def _empty(dd: Element) -> bool:
    return not len(dd) and not (dd.text or "").strip()


def _object_dl(el: Element) -> bool:
    """An object description: a ``dl`` whose terms are targets (not a glossary)."""
    return el.tag == "dl" and any(c.tag == "dt" and c.get("id") for c in el)


def _described_here(dl: Element) -> bool:
    """An object description with a description of its own."""
    return any(c.tag == "dd" and not _empty(c) for c in dl)


def _written_after(dl: Element) -> list[Element | str]:
    """The blocks after an object description whose ``dd`` is empty, up to the next object
    description, heading, section or target: first over the empty descriptions that
    directly follow it (``.. method:: incr`` then ``.. method:: decr``, one prose for both)."""
    items: list[Element | str] = []
    sib = dl.getnext()
    tail = dl.tail
    while sib is not None and not (tail or "").strip() and _object_dl(sib):
        if _described_here(sib):
            return []
        tail, sib = sib.tail, sib.getnext()
    if tail and tail.strip():
        items.append(tail)
    while sib is not None:
        if sib.tag in HEADINGS or is_section(sib) or _object_dl(sib) or sib.get("id"):
            break
        if sib.tag == "span" and not len(sib) and not (sib.text or "").strip():
            break  # an empty target: a label of what follows
        items.append(sib)
        if sib.tail and sib.tail.strip():
            items.append(sib.tail)
        sib = sib.getnext()
    return items


def _is_leading(span: Element, parent: Element) -> bool:
    """True when only other empty target spans precede ``span`` in ``parent``."""
    if (parent.text or "").strip():
        return False
    prev = span.getprevious()
    while prev is not None:
        if (
            prev.tag != "span"
            or len(prev)
            or (prev.text or "").strip()
            or (prev.tail or "").strip()
        ):
            return False
        prev = prev.getprevious()
    return True


def _until_heading(el: Element) -> list[Element | str]:
    """Following siblings (and their tails) up to the next heading or section."""
    items: list[Element | str] = []
    if el.tail and el.tail.strip():
        items.append(el.tail)
    sib = el.getnext()
    while sib is not None and sib.tag not in HEADINGS and not is_section(sib):
        items.append(sib)
        if sib.tail and sib.tail.strip():
            items.append(sib.tail)
        sib = sib.getnext()
    return items


def _has_content(items: list[Element | str]) -> bool:
    return any(
        isinstance(i, str) or i.tag != "span" or len(i) or (i.text or "").strip() for i in items
    )


def _from_empty_span(span: Element, main: Element) -> Located:
    parent = span.getparent()
    if parent is not None and is_section(parent) and _is_leading(span, parent):
        return Located("section", span, body=[parent], section=parent)
    section = enclosing_section(span, main)
    current = span
    while True:
        after = current.getnext()
        if after is not None and is_section(after) and not (current.tail or "").strip():
            # The target directly precedes a section: it labels that section.
            return Located("section", span, body=[after], section=after)
        body = _until_heading(current)
        if _has_content(body):
            return Located("span", span, body=body, section=section)
        if after is not None and after.tag in HEADINGS:
            return Located("span", span, body=[after, *_until_heading(after)], section=section)
        # A target alone at the end of a wrapper (<p><span id></span></p>): go on after it.
        wrapper = current.getparent()
        if wrapper is None or wrapper is main or is_section(wrapper):
            return Located("span", span, body=body, section=section)
        current = wrapper


def section_title(section: Element | None) -> str | None:
    if section is None:
        return None
    heading = heading_of(section)
    return text(heading) if heading is not None else None
