"""Inline HTML → Markdown by regular expressions over libxml2-serialised fragments.

Why regexes and not a walk over inline elements: Sphinx prose is dense with tiny inline elements
(``<a><code><span class="pre">x</span></code></a>`` for every cross-reference); creating an lxml
proxy and a Python call for each of them was the dominant cost of extraction. Serialising a
paragraph is one C call, and a handful of C regex passes over it (with Python work only per
link, image and backtick-holding code span) does the same job several times faster; with a
std:doc entry the paragraphs of a whole page go through the passes together (``convert_many``).
The input is always libxml2's own serialisation of a well-formed tree, so tags are regular (no
stray "<", quoted attributes, proper nesting), which is what makes the regexes safe here.
"""

from __future__ import annotations

import html
import re

from lxml import etree

from .links import Linker
from .literals import CODE as _CODE
from .literals import TAG as _TAG
from .literals import TICK, literal_shapes, protect_ticks
from .text import Element, norm

_SPAN = re.compile(r"</?span\b[^>]*>")
_IMG = re.compile(r"<img\b([^>]*)>")
# An empty link's lazy text would run on to the next "</a>": never past a batch separator.
_LINK_BATCH = re.compile(r"<a\s[^>]*?\bhref=\"([^\"]*)\"[^>]*>\s*([^\x02]+?)\s*</a>")
_LINK = re.compile(r"<a\s[^>]*?\bhref=\"([^\"]*)\"[^>]*>\s*(.+?)\s*</a>", re.S)
# The same matches, ~3x faster: no lazy scan of the tag or the text. Exact unless some link is
# empty or blank (the lazy text then runs on past its "</a>"), hence BLANK_LINK.
#
# Every repetition is possessive and its alternatives disjoint (an "h" is either inside a
# word or at a word start not followed by 'ref="'), so a tag or text that never reaches
# its "</a>" fails in linear time: the earlier nested ``(?:[^<]+|...)*`` backtracked
# exponentially on a hostile page (found by tests/unit/test_hostile_properties.py), and
# a regex match cannot be interrupted. The text group keeps the link's trailing
# whitespace, which ``_links`` strips.
_LINK_FAST = re.compile(
    r'<a\s(?:[^>h]++|\Bh|\bh(?!ref="))*+\bhref="([^"]*)"[^>]*>'
    r"\s*+((?:[^<]++|<(?!/a>))*+)</a>"
)
_LINK_FAST_BATCH = re.compile(
    r'<a\s(?:[^>h\x02]++|\Bh|\bh(?!ref="))*+\bhref="([^"]*)"[^>]*>'
    r"\s*+((?:[^<\x02]++|<(?!/a>))*+)</a>"
)
BLANK_LINK = re.compile(r"<a\b[^>]*>\s*</a>")
# Open and close tags are replaced separately by constant strings: on CPython 3.11 a replacement
# template with group references runs Python code (re._parser.expand_template) for every match.
_CODE_TAG = re.compile(r"</?(?:code|tt|kbd|samp)\b[^>]*>")
_EMPH_OPEN = re.compile(r"<(?:em|i|cite|var|dfn)\b[^>]*>")
_EMPH_CLOSE = re.compile(r"</(?:em|i|cite|var|dfn)>")
_BOLD_OPEN = re.compile(r"<(?:strong|b)\b[^>]*>")
_BOLD_CLOSE = re.compile(r"</(?:strong|b)>")
# Emphasis is first written as sentinels and turned into Markdown markers once the text
# around them is final (``emphasis``): a marker must hug non-blank text (CommonMark
# leaves "* x *" literal), an emphasis of nothing but punctuation or blanks is dropped,
# and one nested in the same kind is dropped ("****x**" otherwise).
EM_OPEN, EM_CLOSE, STRONG_OPEN, STRONG_CLOSE = "\x03", "\x04", "\x05", "\x06"
_SENTINEL = re.compile("([\x03-\x06])")
_NEEDS_MARKERS = re.compile("[*\x03-\x06]")
# The common case, checked in one C pass: every emphasis is a non-nested pair around text
# that starts and ends with a non-blank and holds a letter or digit; the sentinels then
# simply become markers (``emphasis`` does the rest, in Python).
_PLAIN_PAIR = "{o}(?=[^\x03-\x06]*?\\w)[^\\s\x03-\x06](?:[^\x03-\x06]*+(?<!\\s))?{c}"
_WELL_FORMED = re.compile(
    "(?:[^\x03-\x06]++|"
    + _PLAIN_PAIR.format(o="\x03", c="\x04")
    + "|"
    + _PLAIN_PAIR.format(o="\x05", c="\x06")
    + ")*+\\Z"
)
_MARK = {EM_OPEN: "*", STRONG_OPEN: "**"}
_CLOSES = {EM_CLOSE: EM_OPEN, STRONG_CLOSE: STRONG_OPEN}
# Literal "*" of the text (not inside a code span or a link destination) is escaped, so
# that it can never pair with an emphasis marker.
_PROTECTED = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)|\]\([^)\s]*\)", re.S)
_BR = re.compile(r"<br\b[^>]*>")
# Names of the tags the passes of marks() act on (the trailing \b: "<b" is not "<br").
_NAMES = re.compile(r"<(span|img|code|tt|kbd|samp|a|em|i|cite|var|dfn|strong|b|br)\b")
_CODE_NAMES = frozenset(("code", "tt", "kbd", "samp"))
_EMPH_NAMES = frozenset(("em", "i", "cite", "var", "dfn"))
_SRC = re.compile(r'\bsrc="([^"]*)"')
_ALT = re.compile(r'\balt="([^"]*)"')
BR_MARK = "\x01"  # survives whitespace normalisation; becomes a Markdown hard break


def serialize(el: Element) -> str:
    html_text: str = etree.tostring(el, encoding=str, method="html", with_tail=False)
    return html_text


_TICK_RUNS = re.compile(r"`+")


def code_span(code: str) -> str:
    if not code:
        return ""
    # One backtick more than the longest run inside (CommonMark closes a span at a run of
    # its fence's length): found in one pass, where growing the fence and searching again
    # was quadratic in a site's run of backticks.
    tick = "`" * (max((len(run) for run in _TICK_RUNS.findall(code)), default=0) + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{tick}{pad}{code}{pad}{tick}"


def wrap(mark: str, inner: str) -> str:
    """Emphasis markers must hug the text: move surrounding spaces outside them."""
    core = inner.strip()
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    return f"{lead}{mark}{core}{mark}{trail}"


def _code(match: re.Match[str]) -> str:
    # Entities stay escaped until the very end so that "&lt;cmd&gt;" is not mistaken for a tag.
    return code_span(norm(_TAG.sub("", match.group(2))))


def marks(fragment: str, linker: Linker, batch: bool = False) -> str:
    """Inline Markdown marks applied to serialised HTML; other tags are left in place.

    ``batch``: ``fragment`` is several fragments joined by ``_SEP``, none containing a
    backtick; matches never cross a separator, so each piece converts as it would alone.
    """

    def img(match: re.Match[str]) -> str:
        attrs = match.group(1)
        src = _SRC.search(attrs)
        if src is None:
            return ""
        alt = _ALT.search(attrs)
        return f"![{alt.group(1) if alt else ''}]({linker(src.group(1))})"

    s = fragment
    if "`" in s:
        s = protect_ticks(s)
    if "<span" in s:
        # The regex stops at every "<" of the fragment; C string replacement of the closing tag
        # and of the code-text span (nearly all inline spans) often leaves it nothing to do.
        # Same result: "<" only ever starts a tag here, so no removal can create a new match.
        s = s.replace("</span>", "").replace('<span class="pre">', "")
    if "<" in s:
        # The tag names present, from one regex pass, decide which passes run: a substring test
        # per tag costs a full scan of the fragment for every absent tag (most of them). The
        # passes only remove tags or write text without "<" (text and alt are escaped), so no
        # later pass meets a tag that was not there at this point.
        names = set(_NAMES.findall(s))
        if "span" in names:
            s = _SPAN.sub("", s)
        if not names.isdisjoint(_CODE_NAMES):
            s = literal_shapes(s)
        if "img" in names:
            s = _IMG.sub(img, s)
        if not names.isdisjoint(_CODE_NAMES):
            # Backticks inside code need a longer fence, hence the (slower) callback form.
            s = _CODE.sub(_code, s) if not batch and "`" in s else _CODE_TAG.sub("`", s)
        if "a" in names:
            if BLANK_LINK.search(s):
                s = _links(s, _LINK_BATCH if batch else _LINK, linker)
            else:
                s = _links(s, _LINK_FAST_BATCH if batch else _LINK_FAST, linker)
        if not names.isdisjoint(_EMPH_NAMES):
            s = _EMPH_CLOSE.sub(EM_CLOSE, _EMPH_OPEN.sub(EM_OPEN, s))
        if "strong" in names or "b" in names:
            s = _BOLD_CLOSE.sub(STRONG_CLOSE, _BOLD_OPEN.sub(STRONG_OPEN, s))
        if "br" in names:
            s = _BR.sub(BR_MARK, s)
    return s


def _links(s: str, pattern: re.Pattern[str], linker: Linker) -> str:
    """``[text](url)`` for every link: ``pattern.sub`` with a callback, but the Python work is
    one list comprehension instead of a callback and a match object per link."""
    parts = pattern.split(s)  # [before, href, text, between, href, text, …, after]
    if len(parts) == 1:
        return s
    urls = linker.many(parts[1::3])
    parts[1::3] = ["["] * len(urls)
    parts[2::3] = [f"{text.rstrip()}]({url})" for text, url in zip(parts[2::3], urls, strict=True)]
    return "".join(parts)


def finish(s: str) -> str:
    """Drop remaining tags, unescape entities, normalise whitespace, place hard breaks."""
    if "<" in s:
        s = _TAG.sub("", s)
    if "&" in s:
        s = html.unescape(s)
    s = norm(s)
    if _NEEDS_MARKERS.search(s):
        s = _markers(s)
    if TICK in s:
        s = s.replace(TICK, "\\`")
    return _breaks(s) if BR_MARK in s else s


def _markers(s: str) -> str:
    """Escape literal "*", then write the emphasis sentinels as valid markers."""
    if "*" in s:
        s = escape_stars(s)
    if not _SENTINEL.search(s):
        return s
    # Adjacent emphases of one kind are one ("<em>a</em><em>b</em>": "*ab*", not "*a**b*")
    s = s.replace(EM_CLOSE + EM_OPEN, "").replace(STRONG_CLOSE + STRONG_OPEN, "")
    if _WELL_FORMED.match(s):
        return (
            s.replace(EM_OPEN, "*")
            .replace(EM_CLOSE, "*")
            .replace(STRONG_OPEN, "**")
            .replace(STRONG_CLOSE, "**")
        )
    return emphasis(s)


def escape_stars(s: str) -> str:
    out, last = [], 0
    for match in _PROTECTED.finditer(s):
        out.append(s[last : match.start()].replace("*", "\\*"))
        out.append(match.group(0))
        last = match.end()
    out.append(s[last:].replace("*", "\\*"))
    return "".join(out)


def emphasis(s: str) -> str:
    """Sentinels to Markdown emphasis (see EM_OPEN): balanced pairs only, markers moved
    inside-out past blanks, empty or punctuation-only emphasis and emphasis nested in
    the same kind dropped; an unpaired sentinel is dropped."""
    out: list[str] = []
    stack: list[tuple[str, int]] = []  # (open sentinel, its index in out)
    for part in _SENTINEL.split(s):
        if part in _MARK:
            stack.append((part, len(out)))
            out.append("")
        elif part in _CLOSES:
            opener = _CLOSES[part]
            at = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == opener), None)
            if at is None:
                continue  # a close without its open
            _, index = stack[at]
            del stack[at:]  # opens left inside it are unpaired: they stay ""
            content = "".join(out[index + 1 :])
            del out[index:]
            core = content.strip()
            nested = any(kind == opener for kind, _ in stack)
            if nested or not any(ch.isalnum() for ch in core):
                out.append(content)
                continue
            lead = content[: len(content) - len(content.lstrip())]
            trail = content[len(content.rstrip()) :]
            mark = _MARK[opener]
            out.append(f"{lead}{mark}{core}{mark}{trail}")
        else:
            out.append(part)
    return "".join(out)


_SEP = "\x02"  # joins fragments for one batch: not whitespace, never produced by finish()


def finish_many(fragments: list[str]) -> list[str]:
    """``[finish(f) for f in fragments]`` in one pass of each C call instead of one per item.

    Exact: tags, entities and whitespace never span the separator (fragments are whole runs of
    serialised HTML), and a whitespace-normalised whole split at the separators gives the
    normalised pieces up to one space at their ends.
    """
    s = _SEP.join(fragments)
    if s.count(_SEP) != len(fragments) - 1:  # a separator inside the text itself
        return [finish(f) for f in fragments]
    return _finish_joined(s)


def _finish_joined(s: str) -> list[str]:
    if "<" in s:
        s = _TAG.sub("", s)
    if "&" in s:
        s = html.unescape(s)
    pieces = " ".join(s.split()).split(_SEP)
    if _NEEDS_MARKERS.search(s):  # one C scan for the batch; most pieces need nothing
        pieces = [_markers(p) if _NEEDS_MARKERS.search(p) else p for p in pieces]
    if TICK in s:  # a list item's literal backtick (mdlist.fast_list marks the whole list)
        pieces = [p.replace(TICK, "\\`") for p in pieces]
    if BR_MARK not in s:
        return [p.strip() for p in pieces]
    return [_breaks(p) if BR_MARK in p else p.strip() for p in pieces]


def convert_many(fragments: list[str], linker: Linker) -> list[str]:
    """``[convert(f, linker) for f in fragments]``, the regex passes run once over all of them.

    A fragment with a backtick is converted on its own: its code spans take the callback form
    (see ``marks``), which must not leak to the others.
    """
    s = _SEP.join(fragments)
    if s.count(_SEP) != len(fragments) - 1:
        return [convert(f, linker) for f in fragments]
    plain = [f for f in fragments if "`" not in f] if "`" in s else fragments
    joined = s if plain is fragments else _SEP.join(plain)
    done = _finish_joined(marks(joined, linker, batch=True)) if plain else []
    if len(done) != len(plain):  # cannot happen (tags never hold a separator); stay exact
        return [convert(f, linker) for f in fragments]
    if plain is fragments:
        return done
    rest = iter(done)
    return [convert(f, linker) if "`" in f else next(rest) for f in fragments]


def _breaks(s: str) -> str:
    return "  \n".join(line.strip() for line in s.split(BR_MARK)).strip()


def plain(text: str) -> str:
    """Markdown for text without markup: ``convert`` of its escaped HTML, without a linker."""
    if BR_MARK not in text and "`" not in text and "*" not in text:
        return norm(text)
    return finish(html.escape(text, quote=False).replace("`", TICK))


def convert(fragment: str, linker: Linker) -> str:
    """Markdown for serialised inline HTML (tags of block wrappers are simply dropped).

    Substitutions use constant replacements, not templates or callbacks, whenever possible:
    on CPython 3.11 per-match Python code costs more than the whole C regex pass.
    """
    return finish(marks(fragment, linker))
