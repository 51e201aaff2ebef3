"""Inline HTML → Markdown by regular expressions over libxml2-serialised fragments.

Why regexes and not a walk over inline elements: Sphinx prose is dense with tiny inline elements
(``<a><code><span class="pre">x</span></code></a>`` for every cross-reference); creating an lxml
proxy and a Python call for each of them was the dominant cost of extraction. Serialising a
paragraph is one C call, and a handful of C regex passes over it (with Python callbacks only for
code spans, links and emphasis) does the same job several times faster. The input is always
libxml2's own serialisation of a well-formed tree, so tags are regular (no stray "<", quoted
attributes, proper nesting), which is what makes the regexes safe here.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

from lxml import etree

from .text import Element, norm

_SPAN = re.compile(r"</?span\b[^>]*>")
_IMG = re.compile(r"<img\b([^>]*)>")
_CODE = re.compile(r"<(code|tt|kbd|samp)\b[^>]*>(.*?)</\1>", re.S)
_LINK = re.compile(r"<a\s[^>]*?\bhref=\"([^\"]*)\"[^>]*>\s*(.+?)\s*</a>", re.S)
# Open and close tags are replaced separately by constant strings: on CPython 3.11 a replacement
# template with group references runs Python code (re._parser.expand_template) for every match.
_CODE_TAG = re.compile(r"</?(?:code|tt|kbd|samp)\b[^>]*>")
_EMPH_TAG = re.compile(r"</?(?:em|i|cite|var|dfn)\b[^>]*>")
_BOLD_TAG = re.compile(r"</?(?:strong|b)\b[^>]*>")
_BR = re.compile(r"<br\b[^>]*>")
_TAG = re.compile(r"<[^>]*>")
_SRC = re.compile(r'\bsrc="([^"]*)"')
_ALT = re.compile(r'\balt="([^"]*)"')
BR_MARK = "\x01"  # survives whitespace normalisation; becomes a Markdown hard break


class Linker:
    """Absolute URLs for hrefs, cached per page (a page repeats the same targets a lot).

    Plain relative paths ("x.html#a", "../y/z.html") are joined by hand: urllib's urljoin is
    ~10x slower and this runs for every distinct href of every page.
    """

    def __init__(self, url: str) -> None:
        self.base = url.split("#", 1)[0]
        self.base_dir = self.base[: self.base.rfind("/") + 1]
        self.root_len = self.base.find("//") + 2 if "//" in self.base else 0
        self.cache: dict[str, str] = {}

    def __call__(self, href: str) -> str:
        cached = self.cache.get(href)
        if cached is None:
            cached = self.cache[href] = self._join(href)
        return cached

    def _join(self, href: str) -> str:
        if href.startswith("#"):
            return self.base + href
        head = href.split("/", 1)[0]
        if not self.base_dir or ":" in head or href.startswith(("/", "?")) or "/./" in href:
            return urljoin(self.base, href)
        base_dir = self.base_dir
        while href.startswith(("../", "./")):
            if href.startswith("./"):
                href = href[2:]
                continue
            href = href[3:]
            cut = base_dir.rfind("/", 0, len(base_dir) - 1)
            if cut >= self.base.find("/", self.root_len):
                base_dir = base_dir[: cut + 1]
        return base_dir + href


def serialize(el: Element) -> str:
    html_text: str = etree.tostring(el, encoding=str, method="html", with_tail=False)
    return html_text


def code_span(code: str) -> str:
    if not code:
        return ""
    tick = "`"
    while tick in code:
        tick += "`"
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


def marks(fragment: str, linker: Linker) -> str:
    """Inline Markdown marks applied to serialised HTML; other tags are left in place."""

    def link(match: re.Match[str]) -> str:
        return f"[{match.group(2)}]({linker(match.group(1))})"

    def img(match: re.Match[str]) -> str:
        attrs = match.group(1)
        src = _SRC.search(attrs)
        if src is None:
            return ""
        alt = _ALT.search(attrs)
        return f"![{alt.group(1) if alt else ''}]({linker(src.group(1))})"

    s = _SPAN.sub("", fragment)
    if "<" in s:
        if "<img" in s:
            s = _IMG.sub(img, s)
        # Substring tests (C, no regex machinery) skip passes that cannot match.
        if "<code" in s or "<tt" in s or "<kbd" in s or "<samp" in s:
            # Backticks inside code need a longer fence, hence the (slower) callback form.
            s = _CODE.sub(_code, s) if "`" in s else _CODE_TAG.sub("`", s)
        if "<a" in s:
            s = _LINK.sub(link, s)
        if "<em" in s or "<i" in s or "<cite" in s or "<var" in s or "<dfn" in s:
            if "</em><em" in s:  # adjacent emphases would merge into "**"
                s = s.replace("</em><em", "</em> <em")
            s = _EMPH_TAG.sub("*", s)
        if "<strong" in s or "<b" in s:
            s = _BOLD_TAG.sub("**", s)
        if "<br" in s:
            s = _BR.sub(BR_MARK, s)
    return s


def finish(s: str) -> str:
    """Drop remaining tags, unescape entities, normalise whitespace, place hard breaks."""
    if "<" in s:
        s = _TAG.sub("", s)
    if "&" in s:
        s = html.unescape(s)
    s = norm(s)
    if BR_MARK in s:
        s = "  \n".join(line.strip() for line in s.split(BR_MARK)).strip()
    return s


def convert(fragment: str, linker: Linker) -> str:
    """Markdown for serialised inline HTML (tags of block wrappers are simply dropped).

    Substitutions use constant replacements, not templates or callbacks, whenever possible:
    on CPython 3.11 per-match Python code costs more than the whole C regex pass.
    """
    return finish(marks(fragment, linker))
