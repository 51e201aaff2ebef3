"""Signature text and parameters, read from the ``dt`` elements of an object description."""

from __future__ import annotations

import re
from typing import Any

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
_C_NAME = re.compile(r"([A-Za-z_]\w*|\.\.\.)\s*(?:\[[^\]]*\]\s*)*$")
_OPEN = "([{<"
_CLOSE = ")]}>"


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


def signature(dts: list[Element]) -> str | None:
    lines = [line for line in (dt_text(dt) for dt in dts) if line]
    return "\n".join(lines) if lines else None


_NESTING = re.compile(r"[(\[{<'\"]")


_SPECIAL: dict[str, re.Pattern[str]] = {}  # per separator: the characters _split_top acts on


def _split_top(s: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    if _NESTING.search(s) is None:
        return s.split(sep)  # the common case: no brackets, no quotes
    special = _SPECIAL.get(sep)
    if special is None:
        special = _SPECIAL[sep] = re.compile("[" + re.escape(_OPEN + _CLOSE + "'\"" + sep) + "]")
    out: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for match in special.finditer(s):  # every other character changes nothing
        ch = match.group()
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            i = match.start()
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def _param(name: str, type_: str | None, default: str | None) -> dict[str, Any]:
    return {"name": name, "type": type_ or None, "default": default or None, "description": None}


def _py_param(raw: str, default: str | None) -> dict[str, Any] | None:
    raw = raw.strip().rstrip(",").strip()
    if not raw or raw in ("*", "/", "[", "]", "...", "[,", ","):
        return None  # bare keyword-only / positional-only markers are not parameters
    head, *rest = _split_top(raw, "=")
    if default is None and rest:
        default = "=".join(rest).strip()
    name, *annot = _split_top(head, ":")
    name = name.strip().strip("[]").strip()
    if not name:
        return None
    type_ = ":".join(annot).strip() if annot else None
    return _param(name, type_, default)


def _c_param(raw: str) -> dict[str, Any] | None:
    raw = raw.strip()
    if not raw or raw == "void":
        return None
    head, *rest = _split_top(raw, "=")
    default = "=".join(rest).strip() if rest else None
    head = head.strip()
    match = _C_NAME.search(head)
    if match is None or match.start() == 0:
        # An unnamed parameter ("int") or a function pointer: keep it whole as the type.
        return _param(head, head if match is None else None, default) if head else None
    return _param(match.group(1), head[: match.start()].strip() or None, default)


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


def params(dt: Element, domain: str, sig: str | None = None) -> list[dict[str, Any]]:
    """Parameters from the first signature dt (structure first, text as the fallback).

    ``sig``: ``dt_text(dt)`` when the caller has it already."""
    if domain not in ("c", "cpp"):
        ems = _with_class(dt, "em", "sig-param")
        if not ems:
            # Sphinx < 2.1: bare <em> children of the dt; the <em class="property"> is the
            # "class "/"async " annotation, not a parameter.
            ems = [el for el in dt if el.tag == "em" and not has_class(el, "property")]
        if ems:
            out = []
            for em in ems:
                # The default is split off textually: the default_value span (3.0+) holds the
                # same text as what follows the top-level "=".
                p = _py_param(text(em), None)
                if p is not None:
                    out.append(p)
            return out
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
    inner = _paren_span(sig, start)
    if inner is None or not inner.strip():
        return []
    c_like = domain in ("c", "cpp")
    result = []
    for raw in _split_top(inner, ","):
        p = _c_param(raw) if c_like else _py_param(raw, None)
        if p is not None:
            result.append(p)
    return result


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
