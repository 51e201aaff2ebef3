"""Brackets of a signature's text, as Python reads them: the bracket that closes the one
at a position, quotes (and backslash escapes inside them) skipped. Shared by the
generators whose signatures are plain text (mkdocstrings, pydoctor, the generic rules)."""

from __future__ import annotations

OPENERS = "([{"
CLOSERS = ")]}"


def closing(text: str, start: int) -> int | None:
    """Index of the bracket that brings the depth back to zero after the opening bracket
    at ``start``, whichever kind it is; None when the text ends first."""
    depth = 0
    quote = ""
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
            if depth == 0:
                return i
    return None


def paren_span(text: str, start: int) -> tuple[str, int] | None:
    """The text inside the parentheses opening at ``start`` and the index after them."""
    end = closing(text, start)
    return None if end is None else (text[start + 1 : end], end + 1)
