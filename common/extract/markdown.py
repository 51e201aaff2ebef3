"""Sphinx HTML → Markdown, written against the lxml tree we already have.

Why not markdownify or html-to-markdown: both need HTML serialised and parsed again for every
entry (markdownify/BeautifulSoup: ~0.5 s for CPython's os.html alone; the Rust html-to-markdown:
~30 ms for that page plus ~0.15 ms fixed cost per call, ×435 entries), and neither knows Sphinx
structure. Here block structure is walked in Python with the Markdown of every block memoised,
so nested bodies (std:doc ⊃ section ⊃ class ⊃ method) convert each element once per page;
inline runs go through the regex converter in ``inline.py``; code comes from libxml2's text
serializer.

Text is not Markdown-escaped (a deliberate speed/readability trade-off): prose rarely contains
sequences that change meaning, and code always sits in code spans or fences.
"""

from __future__ import annotations

import html
import re

from .inline import Linker, code_span, convert, finish, marks, serialize, wrap
from .signature import signature
from .text import HEADINGS, Element, class_tokens, has_class, norm, raw_text

_DROP = frozenset(
    (
        "script",
        "style",
        "nav",
        "form",
        "button",
        "input",
        "select",
        "textarea",
        "noscript",
        "template",
        "iframe",
        "object",
        "head",
        "title",
        "meta",
        "link",
    )
)
_BLOCK = frozenset(
    (
        "p",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "header",
        "footer",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "td",
        "th",
        "figure",
        "figcaption",
        "hr",
        "details",
        "summary",
        "address",
        "center",
        "caption",
        "body",
        "html",
        "colgroup",
        "col",
        *HEADINGS,
    )
)
_LANG = {
    "default": "python",
    "python3": "python",
    "py3": "python",
    "pycon3": "pycon",
    "ipython3": "ipython",
    "none": "",
    "text": "",
    "guess": "",
}
_ADMONITIONS = frozenset(
    (
        "admonition",
        "note",
        "warning",
        "tip",
        "hint",
        "important",
        "caution",
        "danger",
        "error",
        "attention",
        "seealso",
        "todo",
    )
)


def _fence(code: str, lang: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}{lang}\n{code}\n{fence}"


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    blank = rest.rstrip()  # ">" keeps a blockquote together across blank lines
    return "\n".join([first + lines[0], *[(rest + line) if line else blank for line in lines[1:]]])


# Lists made only of list items, paragraphs and inline content (toctrees, most prose lists) are
# converted from one serialisation with a token loop, instead of element by element: a site's
# contents page holds ~14,000 toctree items.
_LIST_BAIL = re.compile(r"<(?:pre|div|table|dl|blockquote|h[1-6]|section|figure|hr|aside)\b")
_LIST_TOKENS = re.compile(r"(</?(?:ul|ol|li|p)\b[^>]*>)")
_START = re.compile(r'\bstart="(\d+)"')


def _fast_list(fragment: str, linker: Linker) -> str | None:
    if _LIST_BAIL.search(fragment):
        return None
    out: list[str] = []
    lists: list[list[int]] = []  # per open list: [ordered, next number]
    indent = ""  # indentation of the current item's content
    indents: list[str] = []
    marker: str | None = None  # marker waiting for the item's first text
    item_text: list[str] = []
    paragraphs = 0  # paragraphs already written in the current item

    def flush() -> None:
        nonlocal marker, paragraphs
        if not item_text:
            return
        text = finish("".join(item_text))
        item_text.clear()
        if not text:
            return
        text = text.replace("\n", "\n" + indent)
        if marker is not None:
            out.append(indent[: len(indent) - len(marker)] + marker + text)
            marker = None
        else:
            if paragraphs:
                out.append("")
            out.append(indent + text)
        paragraphs += 1

    for i, token in enumerate(_LIST_TOKENS.split(marks(fragment, linker))):
        if not i % 2:  # split() with a capturing group alternates text and tags
            if token and not token.isspace():
                item_text.append(token)
            continue
        name = token[1:4].rstrip(" >").lstrip("/")
        closing = token[1] == "/"
        if name in ("ul", "ol"):
            flush()
            if closing:
                if lists:
                    lists.pop()
                    indent = indents.pop() if indents else ""
            else:
                start = _START.search(token) if name == "ol" else None
                lists.append([name == "ol", int(start.group(1)) if start else 1])
                indents.append(indent)
        elif name == "li":
            flush()
            if not closing and lists:
                current = lists[-1]
                marker = f"{current[1]}. " if current[0] else "- "
                current[1] += 1
                indent = (indents[-1] if indents else "") + " " * len(marker)
                paragraphs = 0
        else:  # <p>
            flush()
    flush()
    return "\n".join(out)


def _has_block_child(el: Element) -> bool:
    return any(child.tag in _BLOCK for child in el)


class Markdown:
    """Per-page converter. ``members``/``has_members`` come from the page index and drive the
    "body minus nested member descriptions" rendering."""

    def __init__(
        self,
        url: str,
        members: set[Element],
        has_members: set[Element],
        signatures: dict[Element, str | None] | None = None,
    ) -> None:
        self.linker = Linker(url)
        self.members = members
        self.has_members = has_members
        self.signatures = signatures if signatures is not None else {}
        self._memo: dict[Element, str] = {}
        self._memo_excl: dict[Element, str] = {}

    def items(self, items: list[Element | str], exclude_members: bool) -> str:
        """Markdown of a body given as elements and text runs."""
        return "\n\n".join(self._flow(items, exclude_members))

    def signature(self, dt: Element) -> str | None:
        sig = self.signatures.get(dt, "")
        if sig == "":
            sig = self.signatures[dt] = signature([dt])
        return sig

    # -- blocks -------------------------------------------------------------------------------

    def _block(self, el: Element, excl: bool) -> str:
        if excl:
            if el in self.members:
                return ""
            if el not in self.has_members:
                excl = False
        memo = self._memo_excl if excl else self._memo
        cached = memo.get(el)
        if cached is None:
            cached = memo[el] = self._render_block(el, excl)
        return cached

    def _children(self, el: Element) -> list[Element | str]:
        items: list[Element | str] = [el.text] if el.text else []
        for child in el:
            items.append(child)
            if child.tail:
                items.append(child.tail)
        return items

    def _flow(self, items: list[Element | str], excl: bool) -> list[str]:
        """Group inline runs into paragraphs and render block children in order."""
        blocks: list[str] = []
        inline: list[str] = []  # serialised HTML of the current inline run
        for item in items:
            if isinstance(item, str):
                if not item.isspace():  # skip the newlines between blocks: most text runs
                    inline.append(html.escape(item, quote=False))
                elif inline:
                    inline.append(" ")
                continue
            tag = item.tag
            if not isinstance(tag, str) or tag in _DROP:
                continue
            if tag in _BLOCK:
                if inline:
                    para = convert("".join(inline), self.linker)
                    if para:
                        blocks.append(para)
                    inline = []
                md = self._block(item, excl)
                if md:
                    blocks.append(md)
            else:
                inline.append(serialize(item))
        if inline:
            para = convert("".join(inline), self.linker)
            if para:
                blocks.append(para)
        return blocks

    def _leaf_or_flow(self, el: Element, excl: bool) -> str:
        if not _has_block_child(el):
            return convert(serialize(el), self.linker)
        return "\n\n".join(self._flow(self._children(el), excl))

    def _render_block(self, el: Element, excl: bool) -> str:
        tag = el.tag
        if tag == "p":  # the HTML parser never leaves a block inside <p>
            return convert(serialize(el), self.linker)
        if tag in HEADINGS:
            title = convert(serialize(el), self.linker)
            return f"{'#' * int(tag[1])} {title}" if title else ""
        if tag == "pre":
            return _fence(raw_text(el).strip("\n"), "")
        if tag in ("ul", "ol"):
            return self._list(el, excl, ordered=tag == "ol")
        if tag == "dl":
            return self._dl(el, excl)
        if tag == "table":
            return self._table(el)
        if tag == "hr":
            return "---"
        if tag == "blockquote":
            inner = "\n\n".join(self._flow(self._children(el), excl))
            return _indent(inner, "> ", "> ") if inner else ""
        if tag == "div":
            tokens = class_tokens(el)
            for token in tokens:
                if token.startswith("highlight-"):
                    pre = next(el.iter("pre"), None)
                    lang = token[len("highlight-") :]
                    code = raw_text(pre if pre is not None else el).strip("\n")
                    return _fence(code, _LANG.get(lang, lang))
            if _ADMONITIONS.intersection(tokens):
                return self._admonition(el, excl)
        return "\n\n".join(self._flow(self._children(el), excl))

    def _list(self, el: Element, excl: bool, ordered: bool) -> str:
        fast = _fast_list(serialize(el), self.linker)
        if fast is not None:
            return fast
        out = []
        start = el.get("start") or "1"
        n = int(start) if ordered and start.isdigit() else 1
        for li in el:
            if li.tag != "li":
                continue
            body = self._leaf_or_flow(li, excl)
            marker = f"{n}. " if ordered else "- "
            out.append(_indent(body, marker, " " * len(marker)))
            n += 1
        return "\n".join(out)

    def _dl(self, el: Element, excl: bool) -> str:
        out = []
        field_list = has_class(el, "field-list")
        for child in el:
            tag = child.tag
            if tag == "dt":
                if field_list:
                    label = convert(serialize(child), self.linker).rstrip(":").rstrip()
                    out.append(f"**{label}:**")
                elif child.get("id") is not None or has_class(child, "sig"):
                    sig = self.signature(child)
                    if sig:
                        out.append(code_span(sig))
                else:
                    term = convert(serialize(child), self.linker)
                    if term:
                        out.append(wrap("**", term))
            elif tag == "dd":
                body = "\n\n".join(self._flow(self._children(child), excl))
                if body:
                    out.append(body)
        return "\n\n".join(out)

    def _admonition(self, el: Element, excl: bool) -> str:
        title = ""
        first = next((c for c in el if isinstance(c.tag, str)), None)
        if first is not None and has_class(first, "admonition-title"):
            title = convert(serialize(first), self.linker)
        else:
            first = None
        children: list[Element | str] = [el.text] if el.text else []
        for child in el:
            if child is not first:
                children.append(child)
                if child.tail:
                    children.append(child.tail)
        inner = "\n\n".join(self._flow(children, excl))
        head = f"**{title}**" if title else ""
        text = "\n\n".join(x for x in (head, inner) if x)
        return _indent(text, "> ", "> ") if text else ""

    def _table(self, el: Element) -> str:
        rows: list[list[str]] = []
        for tr in el.iter("tr"):
            cells = []
            for cell in tr:
                if cell.tag not in ("td", "th"):
                    continue
                md = self._leaf_or_flow(cell, False)
                cells.append(norm(md.replace("\n", " ")).replace("|", "\\|"))
            if cells:
                rows.append(cells)
        if not rows:
            return ""
        if has_class(el, "field-list"):  # html4 field lists: label/body pairs, not a grid
            return "\n\n".join(" ".join(c for c in row if c) for row in rows)
        width = max(len(r) for r in rows)
        lines = []
        for i, row in enumerate(rows):
            padded = row + [""] * (width - len(row))
            lines.append("| " + " | ".join(padded) + " |")
            if i == 0:
                lines.append("|" + "---|" * width)
        table = "\n".join(lines)
        caption = next((c for c in el if c.tag == "caption"), None)
        if caption is not None:
            title = convert(serialize(caption), self.linker)
            return f"{title}\n\n{table}" if title else table
        return table
