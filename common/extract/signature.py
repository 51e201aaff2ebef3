"""Signature text and parameters, read from the ``dt`` elements of an object description."""

from __future__ import annotations

import re
from typing import Any

from invcrawl.common.params import (
    MARKERS,
    Slot,
    balanced,
    is_param_name,
    parse_c_arglist,
    parse_py_arglist,
    py_slot,
    with_kinds,
)

from .text import Element, has_class, norm, raw_text, text


def _with_class(el: Element, tag: str, name: str) -> list[Element]:
    # dt subtrees are small; a tag-filtered walk beats a compiled XPath call's fixed cost.
    out = []
    for e in el.iter(tag):
        cls = e.get("class")
        if cls is not None and (cls == name or name in cls.split()):
            out.append(e)
    return out


_MARK = "\x00"  # glues text to a bracket: no space after "(" / before ")" of a parameter dl
_MARKS = re.compile(r"\s*\x00\s*")


def dt_text(dt: Element, raw: str | None = None) -> str:
    """Signature text of one dt; permalinks and [source] links were already removed.

    ``raw``: ``raw_text(dt)`` when the caller has it already."""
    complex_el = next(dt.iter("dl", "br"), None)
    if complex_el is None or (
        complex_el.tag == "br"
        and complex_el.getnext() is None
        and next(dt.iter("dl"), None) is None
        and sum(1 for _ in dt.iter("br")) == 1
    ):
        return norm(
            raw_text(dt) if raw is None else raw
        )  # no nested dl, and at most a trailing <br> (CPython C-API dts)
    parts: list[str] = []
    _walk(dt, parts)
    return _MARKS.sub("", norm("".join(parts)))


def _walk(el: Element, parts: list[str]) -> None:
    if el.text:
        parts.append(el.text)
    for child in el:
        tag = child.tag
        if tag == "br":
            # C++ multi-line template signatures: one line per desc_signature_line.
            parts.append(" ")
        elif tag == "dl":
            # Sphinx >= 7.1 multi-line parameter list: one dd per parameter, each ending with ",".
            params = [text(dd) for dd in child if dd.tag == "dd"]
            joined = " ".join(p for p in params if p)
            if joined.endswith(","):
                joined = joined[:-1]  # the 8.2 trailing-comma option
            parts.append(_MARK + joined + _MARK)
        elif isinstance(tag, str):
            _walk(child, parts)
        if child.tail:
            parts.append(child.tail)


def _is_o(cls: str | None) -> bool:
    return cls is not None and (cls == "o" or cls.endswith(" o") or cls.startswith("o "))


def _structured(em: Element) -> Slot | None:
    """(name, type, default) of one ``em.sig-param`` from its parts, as Sphinx >= 3 writes
    them from the parsed signature: ``span.o`` stars or a ``*``/``/`` marker (Sphinx 9:
    ``span.keyword-only-separator.o``), ``span.n`` the name, ``span.p`` the colon, the
    annotation's elements, ``span.o`` "=", ``span.default_value`` last. None when the em
    does not start with such parts or they do not make a name (Sphinx's fallback parser
    writes a piece of the raw text as one span: ``scalars=(<class 'Mapping'>``).

    A few C calls per em (the name's spans, the default's, the whole text) rather than one
    per part: a page of the CPython docs has hundreds of parameters."""
    first = em[0]
    if not isinstance(first.tag, str):
        return None
    if _is_o(first.get("class")):
        name = raw_text(first).strip()
        second = em[1] if len(em) > 1 else None
        if second is not None and second.get("class") == "n":
            name += raw_text(second).strip()
            used = 2
        else:
            used = 1
    elif first.get("class") == "n":
        name = raw_text(first).strip()
        used = 1
    else:
        return None
    if name not in MARKERS and not is_param_name(name):
        return None
    if used == len(em):
        return name, None, None
    whole = norm(raw_text(em))
    last = em[-1]
    default = norm(raw_text(last)) if last.get("class") == "default_value" else None
    head = whole
    if default is not None and whole.endswith(default):
        head = whole[: len(whole) - len(default)].rstrip().removesuffix("=").rstrip()
    rest = head[len(name) :].strip() if head.startswith(name) else None
    if rest is None or (rest and not rest.startswith(":")):
        return None
    if default is None and "=" in rest:  # a default without its own span: read the text
        return py_slot(whole)
    return name, rest[1:].strip() or None, default or None


def _em_slots(ems: list[Element]) -> list[Slot]:
    """Slots of the parameter ems. Texts of ems without structure are parsed as text, and
    an em whose text leaves a bracket or quote open is joined with the next ones first:
    Sphinx's fallback parser (a signature Python's parser rejects) splits at every comma,
    also inside defaults (``(<class 'Mapping'>, <class 'str'>)``) and annotations."""
    slots: list[Slot] = []
    pending = ""
    for em in ems:
        if not pending and next(iter(em), None) is not None:
            slot = _structured(em)
            if slot is not None:
                slots.append(slot)
                continue
        piece = text(em)
        pending = f"{pending}, {piece}" if pending else piece
        if balanced(pending):
            slots += parse_py_arglist(pending)
            pending = ""
    if pending:
        slots += parse_py_arglist(pending)
    return slots


_PARENS = re.compile(r"[()]")


def _paren_span(sig: str, start: int) -> str | None:
    """Text inside the first balanced (...) at or after ``start``."""
    open_at = sig.find("(", start)
    if open_at < 0:
        return None
    depth = 0
    for match in _PARENS.finditer(sig, open_at):  # only the brackets change the depth
        if match.group() == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return sig[open_at + 1 : match.start()]
    return sig[open_at + 1 :]


_NO_PARAMS = frozenset(("rst",))  # directives and their options: arguments, not parameters


def params(dt: Element, domain: str, sig: str | None = None) -> list[dict[str, Any]]:
    """Parameters of the first signature dt, with their kinds: from the ``em.sig-param``
    elements where Sphinx writes them (Python-like domains), else from the text between
    the parentheses that follow the object's name (C and C++, Sphinx < 2.1). A value
    (``A = array([...])``, ``X: T = f(a, b)``) has no parameters: its parentheses do not
    follow the name.

    ``sig``: ``dt_text(dt)`` when the caller has it already."""
    if domain in _NO_PARAMS:
        return []
    c_like = domain in ("c", "cpp")
    if not c_like:
        ems = _with_class(dt, "em", "sig-param")
        if not ems:
            # Sphinx < 2.1: bare <em> children of the dt; the <em class="property"> is the
            # "class "/"async " annotation or an attribute's value, not a parameter.
            ems = [el for el in dt if el.tag == "em" and not has_class(el, "property")]
        if ems:
            return with_kinds(_em_slots(ems), domain)
    if sig is None:
        sig = dt_text(dt)
    names = (
        _with_class(dt, "span", "sig-name")
        or _with_class(dt, "code", "descname")
        or _with_class(dt, "tt", "descname")
    )
    start = 0
    if names:
        name_text = text(names[0])
        found = sig.find(name_text) if name_text else -1
        start = found + len(name_text) if found >= 0 else 0
    if not c_like and not sig[start:].lstrip().startswith("("):
        return []
    inner = _paren_span(sig, start)
    if inner is None or not inner.strip():
        return []
    slots = parse_c_arglist(inner) if c_like else parse_py_arglist(inner)
    return with_kinds(slots, domain)


def return_annotation(dt: Element, raw: str | None = None) -> str | None:
    if raw is None:
        raw = raw_text(dt)
    if "\u2192" not in raw:  # both forms show the arrow; most signatures have no annotation
        return None
    hint = _with_class(dt, "span", "sig-return-typehint")
    if hint:
        return text(hint[0]) or None
    if "\u2192" in raw:  # Sphinx < 4.1 writes a bare " → type" after the parameters
        return norm(raw.rsplit("\u2192", 1)[1]) or None
    return None
