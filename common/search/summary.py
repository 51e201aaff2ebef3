"""An item's summary: the first sentence of its doc text (pure)."""

from __future__ import annotations

import re

SUMMARY_CHARS = 240  # a summary longer than this is cut at a word, ending with ELLIPSIS
ELLIPSIS = "…"
# Of the doc text looked at: a first sentence longer than a summary is cut anyway (and
# the consumers compute a summary per item they commit).
_SCAN_CHARS = 2 * SUMMARY_CHARS + 120
# A sentence ends at . ! ? followed by white space (or the end), unless the period ends
# an abbreviation a docstring uses mid-sentence or a single letter (initials, "a.").
_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf", "approx", "resp", "no", "ver", "incl")


def first_sentence(doc: str | None) -> str:
    """The first sentence of ``doc``, white space collapsed, at most SUMMARY_CHARS
    characters; '' for no text."""
    if not doc:
        return ""
    # A paragraph break (two newlines in the doc) ends a first line without a period.
    head = doc[:_SCAN_CHARS].split("\n\n", 1)[0]
    # White space collapsed: str.split() splits where re's \s+ would match (both are
    # str.isspace()), faster than re.sub (docs/performance.md, "Figures behind the
    # code's choices"; a consumer summarises each item).
    text = " ".join(head.split())
    for match in _END.finditer(text):
        before = text[: match.start()].rsplit(" ", 1)[-1].lower()
        if before.endswith(_ABBREVIATIONS) or (len(before) == 1 and before.isalpha()):
            continue
        text = text[: match.end()]
        break
    if len(text) > SUMMARY_CHARS:
        cut = text[:SUMMARY_CHARS].rsplit(" ", 1)[0]
        text = cut.rstrip(" ,;:") + ELLIPSIS
    return text
