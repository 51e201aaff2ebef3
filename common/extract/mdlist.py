"""Markdown helpers for blocks that need no tree walk: code fences, indentation, and lists made
only of items, paragraphs and inline content (converted from one serialisation)."""

from __future__ import annotations

import re

from .inline import finish_many, marks
from .links import Linker


def fence(code: str, lang: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}{lang}\n{code}\n{fence}"


def indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    blank = rest.rstrip()  # ">" keeps a blockquote together across blank lines
    return "\n".join([first + lines[0], *[(rest + line) if line else blank for line in lines[1:]]])


# Lists made only of list items, paragraphs and inline content (toctrees, most prose lists) are
# converted from one serialisation with a token loop, instead of element by element: a site's
# contents page holds ~14,000 toctree items.
# Lists holding one of these are converted item by item (``Markdown._list``).
# fmt: off
BAIL_TAGS = (
    "pre", "div", "table", "dl", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "section",
    "figure", "hr", "aside",
)
# fmt: on
_LIST_TOKENS = re.compile(r"(<(/?)(ul|ol|li|p)\b[^>]*>)")
_START = re.compile(r'\bstart="(\d+)"')


def fast_list(fragment: str, linker: Linker, room: int = 1 << 30) -> str:
    """Markdown of a serialised list without any ``BAIL_TAGS`` element. Lists nested more
    than ``room`` levels deep are not indented further (``markdown.MAX_NESTING``): their
    items continue at the deepest level allowed."""
    room = max(1, room)
    # split() alternates text and the three groups of each tag: text, tag, "/" or "", name.
    tokens = _LIST_TOKENS.split(marks(fragment, linker))
    texts = finish_many(tokens[::4])  # every text run is finished in one batch
    out: list[str] = []
    lists: list[list[int]] = []  # per open list: [ordered, next number]
    indent = ""  # indentation of the current item's content
    indents: list[str] = []
    marker: str | None = None  # marker waiting for the item's first text
    paragraphs = 0  # paragraphs already written in the current item
    # The text before each tag, then the tag; the text after the last tag is texts[-1].
    tags = zip(texts, tokens[1::4], tokens[2::4], tokens[3::4], strict=False)  # texts: one more
    for item, tag, slash, name in tags:
        if item:
            text = item.replace("\n", "\n" + indent) if "\n" in item else item
            if marker is not None:
                out.append(indent[: len(indent) - len(marker)] + marker + text)
                marker = None
            else:
                if paragraphs:
                    out.append("")
                out.append(indent + text)
            paragraphs += 1
        if name == "li":
            if not slash and lists:
                current = lists[-1]
                marker = f"{current[1]}. " if current[0] else "- "
                current[1] += 1
                base = indents[min(len(indents), room) - 1] if indents else ""
                indent = base + " " * len(marker)
                paragraphs = 0
        elif name == "p":
            continue
        elif slash:  # </ul>, </ol>
            if lists:
                lists.pop()
                indent = indents.pop() if indents else ""
        else:  # <ul>, <ol>
            start = _START.search(tag) if name == "ol" else None
            lists.append([name == "ol", int(start.group(1)) if start else 1])
            indents.append(indent)
    item = texts[-1]
    if item:
        text = item.replace("\n", "\n" + indent) if "\n" in item else item
        if marker is not None:
            out.append(indent[: len(indent) - len(marker)] + marker + text)
        else:
            if paragraphs:
                out.append("")
            out.append(indent + text)
    return "\n".join(out)
