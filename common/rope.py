"""Long texts made of the texts they contain, never copied until they are read (issue 46, 1).

Sections nest: a page's std:doc holds its sections, each section its subsections, and every
one of them may be an entry's body. Building each body's text as a string of its own
copied everything it contains once per level: 150 nested sections of a 2 MB page held
150 MB of ``doc`` and as much of ``doc_markdown`` before the output bound (32 MB there)
cut them. A :class:`Rope` is such a text as the parts it is joined from (strings, and the
ropes of the elements inside), so that a body costs its own parts, not a copy of what it
contains. Its length is known, its prefix can be read without the rest
(:meth:`Rope.head`), and the size bounds measure its JSON part by part
(``bounds.Sizer``): only what an item keeps, once bounded, is ever joined
(``pageitems.page_items``; ``extract_page`` joins every rope unless asked not to).

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

__all__ = ["ROPE_CHARS", "Rope", "Text", "head", "join", "materialise", "to_str"]

# A joined text longer than this stays a rope (a shorter one is a string: copying it into
# each text around it costs at most this much per level, and most texts of a page are).
ROPE_CHARS = 16 * 1024


class Rope:
    """A text: the concatenation of ``parts``, ``length`` characters in all."""

    __slots__ = ("length", "parts")

    def __init__(self, parts: tuple[str | Rope, ...], length: int) -> None:
        self.parts = parts
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __str__(self) -> str:
        return "".join(self.leaves())

    def __repr__(self) -> str:
        return f"Rope({self.length} characters in {len(self.parts)} parts)"

    def leaves(self) -> Iterator[str]:
        """Its strings, in order (no recursion: a rope may be as deep as the page)."""
        stack: list[Iterator[str | Rope]] = [iter(self.parts)]
        while stack:
            for part in stack[-1]:
                if isinstance(part, str):
                    yield part
                else:
                    stack.append(iter(part.parts))
                    break
            else:
                stack.pop()

    def head(self, chars: int) -> str:
        """Its first ``chars`` characters, joined without the rest."""
        out: list[str] = []
        left = chars
        if left > 0:
            for leaf in self.leaves():
                if len(leaf) >= left:
                    out.append(leaf[:left])
                    break
                out.append(leaf)
                left -= len(leaf)
        return "".join(out)

    def after(self, chars: int) -> Text:
        """Itself without its first ``chars`` characters (its other parts shared)."""
        if chars <= 0:
            return self
        parts = list(self.parts)
        skip = chars
        while parts and skip >= len(parts[0]):
            skip -= len(parts.pop(0))
        if parts and skip:
            parts[0] = parts[0][skip:] if isinstance(parts[0], str) else parts[0].after(skip)
        return join(parts)


Text = str | Rope


def join(parts: Sequence[Text], sep: str = "") -> Text:
    """``sep.join(parts)``: a string when short and made of strings, else a rope."""
    if len(parts) == 1:
        return parts[0]
    total = len(sep) * max(0, len(parts) - 1) + sum(len(p) for p in parts)
    if total <= ROPE_CHARS and all(isinstance(p, str) for p in parts):
        return sep.join(parts)  # type: ignore[arg-type]  # (all strings)
    if sep:
        spaced: list[Text] = []
        for i, part in enumerate(parts):
            if i:
                spaced.append(sep)
            spaced.append(part)
        parts = spaced
    return Rope(tuple(p for p in parts if p), total)


def to_str(text: Text) -> str:
    return text if isinstance(text, str) else str(text)


def head(text: Text, chars: int) -> str:
    """``text[:chars]``."""
    return text[:chars] if isinstance(text, str) else text.head(chars)


def materialise(contents: Sequence[MutableMapping[str, Any]]) -> None:
    """Every rope of the contents joined into a string, in place; contents sharing a
    rope share its string."""
    done: dict[int, tuple[Rope, str]] = {}
    for content in contents:
        for name, value in content.items():
            if isinstance(value, Rope):
                found = done.get(id(value))
                if found is None:
                    found = done[id(value)] = (value, str(value))
                content[name] = found[1]
