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

The output is linear in the page, whatever its nesting. A list, block quote, admonition or
parameter list indents every line inside it, so each level of nesting repeats a prefix on
each line below, and each level costs Python frames (300 nested admonitions overflowed the
stack): beyond :data:`MAX_NESTING` such levels, or :data:`MAX_DEPTH` elements, a block is
its plain text. A table's rows are its own (a nested table's rows were rows of every table
around it: 22 levels gave 296 MB), and a cell holding a table is the cell's plain text.
"""

from __future__ import annotations

import html

from invcrawl.common.rope import ROPE_CHARS, Text, join, to_str

from .doctext import DocText
from .inline import (
    code_span,
    convert,
    convert_many,
    escape_stars,
    serialize,
    wrap,
)
from .links import Linker
from .mdblocks import (
    ADMONITIONS,
    BLOCK,
    BLOCK_STARTS,
    DROP,
    LANG,
    LEAF_BLOCKS,
    all_text,
    flat,
    has_block_child,
    has_marks,
    is_classifier,
    leaf_text,
    nests,
    own_rows,
)
from .mdlist import BAIL_TAGS, fast_list, fence, indent
from .signature import dt_text
from .text import HEADINGS, Element, class_tokens, has_class, norm, raw_text

MAX_NESTING = 10  # lists, quotes, admonitions, parameter lists around a block (real: < 6)
MAX_DEPTH = 128  # elements above a block (libxml2 stops at 256)
# An inline element holding another entry's body (nested spans with ids), with more plain
# text than this, is its plain text (a rope): converted, each would be a copy of those
# inside it.
INLINE_CHARS = 4 * ROPE_CHARS


class Markdown:
    """Per-page converter. ``members``/``has_members`` come from the page index and drive the
    "body minus nested member descriptions" rendering."""

    def __init__(
        self,
        url: str,
        members: set[Element],
        has_members: set[Element],
        signatures: dict[Element, str | None] | None = None,
        text: DocText | None = None,
    ) -> None:
        self.linker = Linker(url)
        # The page's plain texts: a block flattened (nested beyond the limits) is its
        # plain text, composed from the texts inside it rather than read again per block.
        self.text = text
        self.members = members
        self.has_members = has_members
        self.signatures = signatures if signatures is not None else {}
        # A block's Markdown holds its children's (a rope when long: ``common/rope.py``), so
        # that nested sections do not each copy the sections they contain.
        self._memo: dict[Element, Text] = {}
        self._memo_excl: dict[Element, Text] = {}
        self._dd: dict[tuple[Element, bool], Text] = {}
        self._inline: dict[Element, str] = {}
        self._dt_raw: dict[Element, str] = {}
        self._levels: dict[Element, tuple[int, int]] = {}  # element -> (depth, nesting)

    def prepare(self, leaves: list[Element]) -> None:
        """Convert the leaf fragments (``page.leaves``: every p, dt, heading of main) in one batch
        (``inline.convert_many``): the regex passes then run once per page, not once per
        paragraph. A <p> in a <li> is left out (lists take the one-serialisation path of
        ``mdlist.fast_list``), and so are signature dts (rendered from their text)."""
        todo = []
        inline = self._inline
        for el in leaves:
            tag = el.tag
            if tag == "p":
                parent = el.getparent()
                if parent is not None and parent.tag == "li":
                    continue
            elif tag == "dt" and (el.get("id") is not None or has_class(el, "sig")):
                continue
            if len(el):
                todo.append(el)
            else:
                inline[el] = leaf_text(el)
        fragments = [serialize(el) for el in todo]
        inline.update(zip(todo, convert_many(fragments, self.linker), strict=True))

    def items(self, items: list[Element | str], exclude_members: bool) -> Text:
        """Markdown of a body given as elements and text runs."""
        return join(self._flow(items, exclude_members), "\n\n")

    def dd_body(self, dd: Element, excl: bool) -> Text:
        """``items(children_items(dd), excl)``, memoised: shared by the entry and its parent."""
        if excl and dd not in self.has_members:
            excl = False
        key = (dd, excl)
        cached = self._dd.get(key)
        if cached is None:
            cached = self._dd[key] = join(self._flow_el(dd, excl), "\n\n")
        return cached

    def signature(self, dt: Element) -> str | None:
        sig = self.signatures.get(dt, "")
        if sig == "":
            sig = self.signatures[dt] = self.dt_text(dt) or None  # cached; None: no text
        return sig

    def dt_text(self, dt: Element) -> str:
        """``dt_text(dt)``, sharing the dt's raw text with ``dt_raw``."""
        return dt_text(dt, self.dt_raw(dt))

    def dt_raw(self, dt: Element) -> str:
        raw = self._dt_raw.get(dt)
        if raw is None:
            raw = raw_text(dt)
            # A long one (a dt holding nested descriptions, libxml2 having closed it
            # late) is read again rather than kept: one kept per nested dt is quadratic.
            if len(raw) <= ROPE_CHARS:
                self._dt_raw[dt] = raw
        return raw

    def _convert(self, el: Element) -> str:
        md = self._inline.get(el)
        if md is None:
            md = convert(serialize(el), self.linker) if len(el) else leaf_text(el)
        return md

    # -- blocks -------------------------------------------------------------------------------

    def _block(self, el: Element, excl: bool, tag: str | None = None) -> Text:
        if excl:
            if el in self.members:
                return ""
            if el not in self.has_members:
                excl = False
        memo = self._memo_excl if excl else self._memo
        cached = memo.get(el)
        if cached is None:
            cached = memo[el] = self._render_block(el, excl, el.tag if tag is None else tag)
        return cached

    def _flow(self, items: list[Element | str], excl: bool) -> list[Text]:
        """Group inline runs into paragraphs and render block children in order."""
        blocks: list[Text] = []
        inline: list[str] = []  # serialised HTML of the current inline run
        for item in items:
            if isinstance(item, str):
                if not item.isspace():  # skip the newlines between blocks: most text runs
                    inline.append(html.escape(item, quote=False))
                elif inline:
                    inline.append(" ")
                continue
            tag = item.tag
            if not isinstance(tag, str) or tag in DROP:
                continue
            long = None if tag in BLOCK else self._long_inline(item, excl)
            if tag in BLOCK or long is not None:
                if inline:
                    para = convert("".join(inline), self.linker)
                    if para:
                        blocks.append(para)
                    inline = []
                md = self._block(item, excl) if long is None else long
                if md:
                    blocks.append(md)
            else:
                inline.append(serialize(item))
        if inline:
            para = convert("".join(inline), self.linker)
            if para:
                blocks.append(para)
        return blocks

    def _flow_el(self, el: Element, excl: bool, skip: Element | None = None) -> list[Text]:
        """``_flow`` over ``el``'s text, children and tails (``skip`` and its tail left out),
        without building the item list. The hot loop of a page render."""
        blocks: list[Text] = []
        inline: list[str] = []
        leaves = self._inline
        text = el.text
        if text and not text.isspace():
            inline.append(html.escape(text, quote=False))
        for child in el:
            if child is skip:
                continue
            tag = child.tag
            if tag in BLOCK:  # (BLOCK and DROP do not overlap)
                if inline:
                    para = convert("".join(inline), self.linker)
                    if para:
                        blocks.append(para)
                    inline = []
                # A converted <p> is its own Markdown (no members can sit inside a <p>).
                md: Text | None = leaves.get(child) if tag == "p" else None
                if md is None:
                    md = self._block(child, excl, tag)
                if md:
                    blocks.append(md)
            elif isinstance(tag, str) and tag not in DROP:
                inline.append(serialize(child))
            text = child.tail
            if text:
                if not text.isspace():
                    inline.append(html.escape(text, quote=False))
                elif inline:
                    inline.append(" ")
        if inline:
            para = convert("".join(inline), self.linker)
            if para:
                blocks.append(para)
        return blocks

    def _leaf_or_flow(self, el: Element, excl: bool) -> str:
        if not has_block_child(el):
            # (a table cell converted in a batch by ``prepare``: mkdocstrings' section tables)
            md = self._inline.get(el)
            return md if md is not None else convert(serialize(el), self.linker)
        return to_str(join(self._flow_el(el, excl), "\n\n"))

    def _level(self, el: Element) -> tuple[int, int]:
        """(elements above ``el`` and itself, nesting blocks among them): memoised along
        the path, so the whole page costs O(elements)."""
        levels = self._levels
        found = levels.get(el)
        if found is not None:
            return found
        path = []
        node = el
        while node is not None and node not in levels:
            path.append(node)
            node = node.getparent()
        depth, nesting = levels[node] if node is not None else (0, 0)
        for node in reversed(path):
            depth += 1
            nesting += nests(node)
            levels[node] = (depth, nesting)
        return depth, nesting

    def _render_block(self, el: Element, excl: bool, tag: str) -> Text:
        if tag == "p":  # the HTML parser never leaves a block inside <p>
            return self._convert(el)
        if tag not in LEAF_BLOCKS:
            depth, nesting = self._levels.get(el) or self._level(el)
            if depth > MAX_DEPTH or nesting > MAX_NESTING:
                return self._flat(el)
        if tag in HEADINGS:
            title = self._convert(el)
            return f"{'#' * int(tag[1])} {title}" if title else ""
        if tag == "pre":
            return fence(raw_text(el).strip("\n"), "")
        if tag in ("ul", "ol"):
            return self._list(el, excl, ordered=tag == "ol")
        if tag == "dl":
            return self._dl(el, excl)
        if tag == "table":
            return self._table(el)
        if tag == "hr":
            return "---"
        if tag == "blockquote":
            inner = to_str(join(self._flow_el(el, excl), "\n\n"))
            return indent(inner, "> ", "> ") if inner else ""
        if tag == "div":
            tokens = class_tokens(el)
            for token in tokens:
                if token.startswith("highlight-"):
                    pre = next(el.iter("pre"), None)
                    lang = token[len("highlight-") :]
                    code = raw_text(pre if pre is not None else el).strip("\n")
                    return fence(code, LANG.get(lang, lang))
            if ADMONITIONS.intersection(tokens):
                return self._admonition(el, excl)
        return join(self._flow_el(el, excl), "\n\n")

    def _long_inline(self, el: Element, excl: bool) -> Text | None:
        """An inline body's plain text, when it holds another entry's body and is longer
        than INLINE_CHARS (see there); else None (converted as any inline run)."""
        text = self.text
        if text is None or not text.holds(el) or (excl and el in self.has_members):
            return None
        plain = text.plain(el)
        return self._flat(el) if plain is not None and len(plain) > INLINE_CHARS else None

    def _flat(self, el: Element) -> Text:
        """``mdblocks.flat(el)``: from the page's plain text of ``el`` when it has it (a
        rope, when long: 150 sections nested beyond MAX_DEPTH each read the text of all
        those inside it)."""
        plain = self.text.plain(el) if self.text is not None else None
        if plain is None:
            return flat(el)
        if isinstance(plain, str):
            return escape_stars(plain)
        if any("*" in leaf for leaf in plain.leaves()):
            return escape_stars(str(plain))
        return plain  # (escape_stars changes only a "*")

    def _list(self, el: Element, excl: bool, ordered: bool) -> str:
        # A C-level tag scan (no serialisation) decides between the two paths.
        if next(el.iter(*BAIL_TAGS), None) is None:
            room = MAX_NESTING - self._level(el)[1] + 1  # list levels inside that may indent
            return fast_list(serialize(el), self.linker, room)
        out = []
        start = el.get("start") or "1"
        n = int(start) if ordered and start.isdigit() else 1
        for li in el:
            if li.tag != "li":
                continue
            body = self._leaf_or_flow(li, excl)
            marker = f"{n}. " if ordered else "- "
            out.append(indent(body, marker, " " * len(marker)))
            n += 1
        return "\n".join(out)

    def _dl(self, el: Element, excl: bool) -> Text:
        # numpydoc's parameter lists (one C-level path search: most dls are not)
        if el.find("dt/span[@class='classifier']") is not None:
            return self._parameters(el, excl)
        out: list[Text] = []
        field_list = has_class(el, "field-list")
        for child in el:
            tag = child.tag
            if tag == "dt":
                if field_list:
                    label = self._convert(child).rstrip(":").rstrip()
                    out.append(f"**{label}:**")
                elif child.get("id") is not None or has_class(child, "sig"):
                    sig = self.signature(child)
                    if sig:
                        out.append(code_span(sig))
                else:
                    term = self._convert(child)
                    if term:  # a term with emphasis of its own is not wrapped again
                        out.append(term if has_marks(term) else wrap("**", term))
            elif tag == "dd":
                body = self.dd_body(child, excl)
                if body:
                    out.append(body)
        return join(out, "\n\n")

    def _parameters(self, el: Element, excl: bool) -> str:
        """A numpydoc-style list (``name`` + ``span.classifier`` types per ``dt``) as one
        Markdown list item per entry: ``- **name** (*type*): description``."""
        out: list[str] = []
        term = ""
        for child in el:
            if child.tag == "dt":
                if term:
                    out.append(indent(term, "- ", "  "))
                term = self._parameter(child)
            elif child.tag == "dd":
                body = to_str(self.dd_body(child, excl))
                if body and body[:1] not in BLOCK_STARTS:
                    item = f"{term}: {body}" if term else body
                else:
                    item = "\n\n".join(x for x in (term, body) if x)
                if item:
                    out.append(indent(item, "- ", "  "))
                term = ""
        if term:
            out.append(indent(term, "- ", "  "))
        return "\n".join(out)

    def _parameter(self, dt: Element) -> str:
        kept = [c for c in dt if not is_classifier(c)]
        skipped = [c for c in dt if is_classifier(c)]
        types = [norm(all_text(c)) for c in skipped if has_class(c, "classifier")]
        name = norm(
            (dt.text or "")
            + "".join(all_text(c) + (c.tail or "") for c in kept)
            + "".join((c.tail or "") for c in skipped)
        ).strip(" :")
        typed = ", ".join(f"*{escape_stars(t)}*" for t in types if t)
        head = f"**{escape_stars(name)}**" if name else ""
        return " ".join(x for x in (head, f"({typed})" if typed else "") if x)

    def _admonition(self, el: Element, excl: bool) -> str:
        title = ""
        first = next((c for c in el if isinstance(c.tag, str)), None)
        if first is not None and has_class(first, "admonition-title"):
            title = self._convert(first)
        else:
            first = None
        inner = to_str(join(self._flow_el(el, excl, skip=first), "\n\n"))
        head = f"**{title}**" if title else ""
        text = "\n\n".join(x for x in (head, inner) if x)
        return indent(text, "> ", "> ") if text else ""

    def _table(self, el: Element) -> str:
        rows: list[list[str]] = []
        for tr in own_rows(el):
            cells = []
            for cell in tr:
                if cell.tag not in ("td", "th"):
                    continue
                if next(cell.iter("table"), None) is not None:
                    md = flat(cell)  # tables inside tables flatten
                else:
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
