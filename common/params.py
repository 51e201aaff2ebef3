"""Parameter lists as data: the pieces of a signature's parameter list, their kinds, and
which names are parameter names. Pure string logic, shared by the extractor
(``common/extract/signature.py``, ``fields.py``) and the API diff
(``common/apidiff/diff.py``).

A parameter is ``{name, kind, type, default, description}`` (docs/items.md). ``name``
keeps the ``*``/``**`` of a variadic parameter; ``kind`` is a :class:`ParamKind`, or
None for a parameter that only a field list names (its kind is not shown anywhere).
Bare ``*`` and ``/`` markers are not parameters: they set the kinds of their
neighbours, as in Python. C, C++ and JavaScript parameters are positional-only (no
caller names them); C's ``...`` is the var-positional parameter named ``...``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any


class ParamKind(StrEnum):
    """The ``kind`` of a parameter (docs/items.md): Python's, spelled with hyphens."""

    POSITIONAL_ONLY = "positional-only"
    POSITIONAL_OR_KEYWORD = "positional-or-keyword"
    KEYWORD_ONLY = "keyword-only"
    VAR_POSITIONAL = "var-positional"
    VAR_KEYWORD = "var-keyword"


POSITIONAL_ONLY = ParamKind.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD = ParamKind.POSITIONAL_OR_KEYWORD
KEYWORD_ONLY = ParamKind.KEYWORD_ONLY
VAR_POSITIONAL = ParamKind.VAR_POSITIONAL
VAR_KEYWORD = ParamKind.VAR_KEYWORD
KINDS = tuple(ParamKind)
POSITIONAL_DOMAINS = frozenset(("c", "cpp", "js"))
MARKERS = ("*", "/")

Slot = tuple[str, str | None, str | None]  # (name with its stars, or a marker; type; default)

_OPEN = "([{<"
_CLOSE = ")]}>"
_NESTING = re.compile(r"[(\[{<'\"]")
_SPECIAL: dict[str, re.Pattern[str]] = {}  # per separator: the characters split_top acts on


def split_top(s: str, sep: str) -> list[str]:
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


_BRACKETS = re.compile(r"[()\[\]{}'\"]")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def balanced(s: str) -> bool:
    """True when every bracket of ``s`` is closed and no quote is left open: a piece of a
    parameter list that Sphinx's fallback parser split at a comma inside a default
    (``scalars=(<class 'Mapping'>``) is not. ``<``/``>`` do not count: ``->`` and
    comparisons are common in defaults, and reprs (``<factory>``) close their own."""
    stack: list[str] = []
    quote = ""
    for match in _BRACKETS.finditer(s):
        ch = match.group()
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            stack.append(ch)
        elif stack and stack[-1] == _PAIRS[ch]:
            stack.pop()
        else:
            return True  # a stray closer: nothing later can balance it, take the text as is
    return not stack and not quote


def drop_optional_brackets(s: str) -> str:
    """``extreq[,serverctrls=None[,clientctrls=None]]`` → ``extreq,serverctrls=None,
    clientctrls=None``: the brackets of optional groups (written by hand in old-style
    signatures) go, subscripts (``List[int]``) and list defaults (``x=[1, 2]``) stay. An
    optional group opens at the start, after a comma or blank, or just before a comma."""
    if "[" not in s:
        return s
    out: list[str] = []
    stack: list[bool] = []  # per open "[": is it an optional group?
    quote = ""
    for i, ch in enumerate(s):
        if quote:
            if ch == quote:
                quote = ""
            out.append(ch)
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "[":
            optional = _opens_group(s, i)
            stack.append(optional)
            if optional:
                continue
        elif ch == "]" and stack and stack.pop():
            continue
        out.append(ch)
    return "".join(out)


_COMMA_NEXT = re.compile(r"\s*,")


def _opens_group(s: str, i: int) -> bool:
    """Is the ``[`` at ``i`` an optional group's? Yes at the start, after a comma or a
    blank (not after ``=``, ``:`` or ``(``: a list value), or just before a comma.
    Looks at the blanks around it only: linear over any text."""
    if _COMMA_NEXT.match(s, i + 1) or i == 0 or s[i - 1] == ",":
        return True
    if not s[i - 1].isspace():
        return False
    j = i - 1
    while j >= 0 and s[j].isspace():
        j -= 1
    return j < 0 or s[j] not in "=:("


def py_slot(raw: str) -> Slot | None:
    """One piece of a Python-like parameter list as (name, type, default); markers
    (``*``, ``/``) as (marker, None, None); None for nothing (``...``, an empty piece)."""
    raw = raw.strip().rstrip(",").strip()
    if not raw or raw in ("...", "\u2026", ","):
        return None
    head, *rest = split_top(raw, "=")
    default = "=".join(rest).strip() or None if rest else None
    name, *annot = split_top(head, ":")
    name = name.strip().replace("\\", "")
    type_ = ":".join(annot).strip() or None if annot else None
    if not name:
        return None
    return name, type_, default


def parse_py_arglist(text: str) -> list[Slot]:
    """The slots of a Python-like parameter list given as text (without its parentheses)."""
    slots = []
    for piece in split_top(drop_optional_brackets(text), ","):
        slot = py_slot(piece)
        if slot is not None:
            slots.append(slot)
    return slots


_C_NAME = re.compile(r"([A-Za-z_]\w*|\.\.\.)\s*(?:\[[^\]]*\]\s*)*$")
_C_FUNC_POINTER = re.compile(r"\(\s*[*&^]+\s*([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*\)\s*\(")
_C_WORDS = frozenset(
    [
        "void",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "const",
        "volatile",
        "struct",
        "union",
        "enum",
        "bool",
        "size_t",
        "ssize_t",
        "auto",
        "register",
        "restrict",
        "static",
        "inline",
        "typename",
        "class",
    ]
)


def c_slot(raw: str) -> Slot | None:
    """One C/C++ parameter as (name, type, default): the last identifier of its
    declarator (``int *x``, ``char buf[]``), a function pointer's own name
    (``void (*cb)(int)``), ``...`` for the variadic part; an unnamed parameter (``int``)
    gets the name "" (its text is its type); a lone word is a macro's parameter. None
    for ``void`` and empty pieces."""
    raw = raw.strip()
    if not raw or raw == "void":
        return None
    head, *rest = split_top(raw, "=")
    default = "=".join(rest).strip() or None if rest else None
    head = head.strip()
    if head == "...":
        return "...", None, default
    pointer = _C_FUNC_POINTER.search(head)
    if pointer is not None:
        return pointer.group(1), head, default
    match = _C_NAME.search(head)
    if match is None or match.group(1) in _C_WORDS:
        return "", head or None, default  # unnamed: the text is its type
    if match.start() == 0:  # one word: a macro's parameter (a lone type is a keyword above)
        return match.group(1), None, default
    return match.group(1), head[: match.start()].strip() or None, default


def parse_c_arglist(text: str) -> list[Slot]:
    slots = []
    for piece in split_top(text, ","):
        slot = c_slot(piece)
        if slot is not None:
            slots.append(slot)
    return slots


_NAME = re.compile(r"\*{0,2}[^\W\d]\w*")


def is_param_name(name: str | None) -> bool:
    """An identifier, optionally prefixed by ``*`` or ``**``."""
    return bool(name) and _NAME.fullmatch(name or "") is not None


def with_kinds(slots: Iterable[Slot], domain: str) -> list[dict[str, Any]]:
    """Parameters (``{name, kind, type, default, description}``) from slots: markers set
    the kinds around them and are dropped, and so is every slot whose name is not a
    parameter name (a base class in a class signature, a value Sphinx's fallback parser
    split at a comma)."""
    out: list[dict[str, Any]] = []
    if domain in POSITIONAL_DOMAINS:
        for name, type_, default in slots:
            if name == "...":
                out.append(param("...", VAR_POSITIONAL, type_, default))
            elif name == "" or is_param_name(name):
                out.append(param(name or None, POSITIONAL_ONLY, type_, default))
        return out
    kind = POSITIONAL_OR_KEYWORD
    for name, type_, default in slots:
        if name == "/":
            for p in out:
                if p["kind"] == POSITIONAL_OR_KEYWORD:
                    p["kind"] = POSITIONAL_ONLY
            continue
        if name == "*":
            kind = KEYWORD_ONLY
            continue
        if not is_param_name(name):
            continue
        if name.startswith("**"):
            out.append(param(name, VAR_KEYWORD, type_, default))
        elif name.startswith("*"):
            out.append(param(name, VAR_POSITIONAL, type_, default))
            kind = KEYWORD_ONLY
        else:
            out.append(param(name, kind, type_, default))
    return out


def param(
    name: str | None,
    kind: ParamKind | None,
    type_: str | None = None,
    default: str | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "type": type_ or None,
        "default": default or None,
        "description": description,
    }


# -- names written in field lists ------------------------------------------------------

# (each repetition stops at the one character that ends it: linear on any input)
_TYPED = re.compile(r"(?P<names>[^:()]+)(?::(?P<colon>.*)|\((?P<paren>.*)\))\Z", re.S)
_ELLIPSIS_EDGE = re.compile(r"^(?:\.\.\.|[\u2026\u22ef])?\s*|\s*(?:\.\.\.|[\u2026\u22ef])?$")


def field_names(raw: str) -> tuple[list[str], str | None]:
    """The parameter names a field list's entry documents, and the type written with
    them: ``x1, x2`` (two names), ``name: type`` without numpydoc's space before the
    colon, ``x (u)``, ``x1, …, xn`` (the ellipsis is no name), ````**kwargs````,
    ``\\*args``. A piece that is not a parameter name (a prose sentence, a dotted
    name, ``.. deprecated: 0.13``) is left out."""
    text = " ".join(raw.replace("`", "").replace("\\", "").split())
    type_ = None
    match = _TYPED.match(text)
    if match is not None and all(
        is_param_name(name) or not name
        for name in map(_bare_of_ellipsis, match["names"].split(","))
    ):
        text = match["names"]
        type_ = (match["colon"] if match["colon"] is not None else match["paren"]).strip() or None
    names = [_bare_of_ellipsis(n) for n in text.split(",")]
    return [n for n in names if is_param_name(n)], type_


def _bare_of_ellipsis(piece: str) -> str:
    """A piece of a list of names without blanks and an elision (``… xn``: ``xn``)."""
    return _ELLIPSIS_EDGE.sub("", piece.strip())
