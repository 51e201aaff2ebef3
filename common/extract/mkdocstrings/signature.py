"""A documented object's signature, labels and parameters, as mkdocstrings writes them.

The signature is in the heading's ``<code>`` (``separate_signature: false``, the default,
and every template of the 0.1x era) or apart from it, in ``div.doc-signature`` (material
and readthedocs) or ``pre > code.doc-signature`` (mkdocs theme), formatted over several
lines when it is long. The heading also holds the labels (``doc-labels`` > ``small.doc-label
-<name>`` since mkdocstrings-python 1.x; ``doc-properties`` > ``small.doc-property-<name>``
in the legacy templates), a permalink and a symbol badge (removed by ``locate.clean``).

Parameters are read from the signature's text with the same pieces as Sphinx's
(``common/params.py``): its kinds follow Python's rules, so both generators type a
function's parameters alike and ``invcrawl diff`` compares them.
"""

from __future__ import annotations

import re
from typing import Any

from invcrawl.common.params import parse_py_arglist, with_kinds

from ..brackets import closing
from ..labels import labels
from ..text import Element, drop, has_class, norm, raw_text
from .locate import DocObject

_LABEL_HOLDERS = ("doc-labels", "doc-properties")
_LABEL_ITEMS = ("doc-label", "doc-property")


def take_labels(obj: DocObject) -> list[str]:
    """The object's labels, in the page's order; their badges leave the heading (and the
    separate signature), so that the signature text is the code alone."""
    spellings: list[str] = []
    holders: list[Element] = []
    for where in (obj.heading, obj.signature):
        if where is None:
            continue
        for el in where.iter("span", "div", "small"):
            cls = el.get("class")
            if not cls:
                continue
            tokens = cls.split()
            if any(t in tokens for t in _LABEL_HOLDERS):
                holders.append(el)
            elif any(t in tokens for t in _LABEL_ITEMS):
                spellings.append(norm(raw_text(el)))
    for el in holders:
        drop(el)
    return labels(spellings)


_OPEN_SPACE = re.compile(r"([(\[{])\s+")
_CLOSE_SPACE = re.compile(r"\s+([)\]}])")
_TRAILING_COMMA = re.compile(r",\s*([)\]}])")
_SPACE_BEFORE_PAREN = re.compile(r"^([\w.]+)\s+\(")


def _one_line(raw: str) -> str:
    """A signature formatted over several lines (black, ruff: one parameter a line and a
    trailing comma) as the one line it stands for."""
    line = norm(raw)
    if "\n" not in raw.strip():
        return line
    line = _OPEN_SPACE.sub(r"\1", line)
    line = _CLOSE_SPACE.sub(r"\1", line)
    return _TRAILING_COMMA.sub(r"\1", line)


def code_of(obj: DocObject) -> Element | None:
    """The element holding the object's signature: the separate one, else the heading's
    ``<code>`` (the object's name alone when neither is there: the heading's name span)."""
    if obj.signature is not None:
        return obj.signature
    heading = obj.heading
    if heading is None:
        return None
    code = heading.find(".//code")
    return code if code is not None else heading


def signature_text(obj: DocObject) -> str | None:
    """The signature as one line; None for a module (mkdocstrings shows its path, Sphinx
    nothing) and for an object without a heading."""
    if obj.kind == "module":
        return None
    el = code_of(obj)
    if el is None:
        return None
    sig = _one_line(raw_text(el))
    # The legacy templates write the bases of a class apart from its name: "Base (ABC)".
    sig = _SPACE_BEFORE_PAREN.sub(r"\1(", sig)
    return sig or None


def bases_only(obj: DocObject) -> bool:
    """True when the parentheses of a class's signature hold its bases: the heading's plain
    ``<code>`` of the legacy templates (a signature is highlighted, or written apart)."""
    if obj.kind != "class" or obj.signature is not None:
        return False
    code = code_of(obj)
    return code is None or not has_class(code, "highlight")


_NAME = re.compile(r"\s*(?:async\s+|def\s+|class\s+)*[A-Za-z_][\w.]*\s*")


def _close(sig: str, start: int, closer: str) -> int:
    """Index of the bracket closing the one at ``start``, -1 if none or another kind."""
    end = closing(sig, start)
    return end if end is not None and sig[end] == closer else -1


def call_parts(sig: str) -> tuple[str, str] | None:
    """(parameter list, what follows its ``)``) when the signature is a call: a name, its
    type parameters (``f[T](x: T)``) and parentheses right after; None for a value
    (``X: T = f(a, b)``) or a bare name."""
    match = _NAME.match(sig)
    if match is None:
        return None
    at = match.end()
    if at < len(sig) and sig[at] == "[":
        end = _close(sig, at, "]")
        if end < 0:
            return None
        at = end + 1
        while at < len(sig) and sig[at] == " ":
            at += 1
    if at >= len(sig) or sig[at] != "(":
        return None
    end = _close(sig, at, ")")
    if end < 0:
        return sig[at + 1 :], ""
    return sig[at + 1 : end], sig[end + 1 :]


def params_and_return(
    sig: str | None, no_params: bool
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The parameters of a call signature, with their kinds, and its return annotation;
    None for a signature that shows no parameter list (a value, a bare name, a class's
    bases)."""
    if not sig or no_params:
        return None, None
    parts = call_parts(sig)
    if parts is None:
        return None, None
    inner, rest = parts
    rest = rest.strip()
    hint = norm(rest[2:]) if rest.startswith("->") else None
    return with_kinds(parse_py_arglist(inner), "py"), hint or None
