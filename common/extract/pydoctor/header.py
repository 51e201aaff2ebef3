"""A pydoctor member's header (``div.functionHeader``) and a class page's signature line:
the signature text, the parameters with their kinds, the return annotation and the labels.

pydoctor 25 writes one ``span.rst-sig-param`` per parameter and ``span.rst-sig-symbol`` for
the bare ``*`` and ``/`` markers, decorators as ``span.decorator``; pydoctor 22 writes the
parameter list as plain text (annotations left out) and decorators as text lines before
the ``def`` keyword. Both put the name in ``span.py-defname`` and the ``def``/``async
def``/``class`` keyword in ``span.py-keyword``; permalinks (``a.headerLink``) and source
links (``a.sourceLink``) are dropped before anything reads the header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.params import KEYWORD_ONLY, parse_py_arglist, py_slot, with_kinds

from ..brackets import paren_span
from ..labels import label
from ..text import Element, class_tokens, norm, raw_text

# Labels a decorator or a member kind states (docs/items.md): other decorators
# (``@inlineCallbacks``, ``@deprecated(...)``) are the code's, not facts of the API's shape.
LABEL_DECORATORS = frozenset(
    (
        "property",
        "classmethod",
        "staticmethod",
        "abstractmethod",
        "cached_property",
        "overload",
        "final",
        "override",
    )
)
# The member div's class (``baseclassmethod``...) to the label its kind implies.
KIND_LABELS = {
    "classmethod": "classmethod",
    "staticmethod": "staticmethod",
    "property": "property",
    "classvariable": "class_attribute",
    "instancevariable": "instance_attribute",
}


_ESCAPED = "\x00"  # stands for an escaped quote while a parameter list is split


def member_kind(div: Element) -> str | None:
    """``method``, ``classmethod``, ``instancevariable``... from ``div.base<kind>``."""
    for token in class_tokens(div):
        if token.startswith("base") and len(token) > 4:
            return token[4:]
    return None


@dataclass(slots=True)
class Header:
    """A ``div.functionHeader`` and its parts, found in one pass over its spans."""

    el: Element
    keyword: Element | None = None  # span.py-keyword: def, async def, class
    defname: Element | None = None  # span.py-defname
    decorators: list[Element] = field(default_factory=list)  # 25: span.decorator
    pieces: list[Element] = field(default_factory=list)  # 25: rst-sig-param/-symbol spans

    @classmethod
    def read(cls, el: Element) -> Header:
        header = cls(el)
        for span in el.iter("span"):
            classes = span.get("class")
            if not classes:
                continue
            if "rst-sig-" in classes:
                tokens = classes.split()
                if "rst-sig-param" in tokens or "rst-sig-symbol" in tokens:
                    header.pieces.append(span)
            elif classes == "decorator" or "decorator" in classes.split():
                header.decorators.append(span)
            elif header.keyword is None and "py-keyword" in classes.split():
                header.keyword = span
            elif header.defname is None and "py-defname" in classes.split():
                header.defname = span
        return header


def decorators(header: Header) -> list[str]:
    """The decorator lines of a header, as written (``@classmethod``)."""
    if header.decorators:
        return [norm(raw_text(s)) for s in header.decorators]
    lines: list[str] = []
    chunk = header.el.text or ""
    for child in header.el:
        if child is header.keyword or child is header.defname:
            break
        chunk += raw_text(child) if child.tag != "br" else "\n"
        chunk += child.tail or ""
    for raw in chunk.splitlines():
        line = raw.strip()
        if line.startswith("@"):
            lines.append(line)
    return lines


def labels_of(header: Header, kind: str | None) -> list[str]:
    """Labels from the decorators, the ``async`` keyword and the member's kind."""
    out: list[str] = []
    for line in decorators(header):
        name = line.lstrip("@").split("(", 1)[0].strip().rsplit(".", 1)[-1]
        found = label(name)
        if found in LABEL_DECORATORS and found not in out:
            out.append(found)
    keyword = norm(raw_text(header.keyword)) if header.keyword is not None else ""
    if "async" in keyword.split():
        out.append("async")
    implied = KIND_LABELS.get(kind or "")
    if implied is not None and implied not in out:
        out.append(implied)
    return out


def signature_text(header: Header) -> str | None:
    """The header from the name on, without decorators, keywords, the trailing colon or
    an attribute's trailing ``=``: ``every_kind(a, b: int, /, c) -> bool``, ``color: str``."""
    name = header.defname
    if name is None:
        return None
    parts = [raw_text(name), name.tail or ""]
    for sib in name.itersiblings():
        parts.append(raw_text(sib) if sib.tag != "br" else " ")
        parts.append(sib.tail or "")
    text = norm("".join(parts))
    if text.endswith(":") and not text.endswith("::"):
        text = text[:-1].rstrip()
    if text.endswith("="):
        text = text[:-1].rstrip()
    return text or None


def class_signature(line: Element) -> str | None:
    """``class Widget(Base)``: a class page's signature line, keyword kept."""
    text = norm(raw_text(line))
    if text.endswith(":"):
        text = text[:-1].rstrip()
    return text or None


def call_params(header: Header, signature: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """The parameters of a function header (kinds by Python's rules) and its return
    annotation; ([], None) for an attribute (no parameter list after the name)."""
    name = header.defname
    if name is None or not signature:
        return [], None
    after = signature[len(norm(raw_text(name))) :]
    if not after.startswith("("):
        return [], None
    found = paren_span(after, 0)
    if found is None:
        return [], None
    inside, end = found
    rest = after[end:].strip()
    returns = rest[2:].strip() or None if rest.startswith("->") else None
    if header.pieces:  # pydoctor >= 23: one element per parameter
        slots = []
        for piece in header.pieces:
            slot = py_slot(norm(raw_text(piece)))
            if slot is not None:
                slots.append(slot)
    else:  # (an escaped quote in a default, 'don\\'t', would end the string for the splitter)
        slots = [
            (n, t, d.replace(_ESCAPED, "\\'") if d else d)
            for n, t, d in parse_py_arglist(inside.replace("\\'", _ESCAPED))
        ]
    return with_kinds(slots, "py"), returns


def constructor_params(params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A constructor's parameters as a caller passes them: without ``self``/``cls``."""
    if params and params[0]["name"] in ("self", "cls") and params[0]["kind"] != KEYWORD_ONLY:
        return [dict(p) for p in params[1:]]
    return [dict(p) for p in params]


__all__ = [
    "KIND_LABELS",
    "LABEL_DECORATORS",
    "Header",
    "call_params",
    "class_signature",
    "constructor_params",
    "decorators",
    "labels_of",
    "member_kind",
    "paren_span",
    "signature_text",
]
