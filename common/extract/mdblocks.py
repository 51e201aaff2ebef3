"""What kind of block an element is, for the Markdown converter (``markdown.py``): the
tag sets it walks by, and the small tests and plain-text fallbacks it uses on them."""

from __future__ import annotations

from .inline import escape_stars, plain
from .text import HEADINGS, Element, has_class, norm, raw_text

# fmt: off
DROP = frozenset((
    "script", "style", "nav", "form", "button", "input", "select", "textarea", "noscript",
    "template", "iframe", "object", "head", "title", "meta", "link",
))
BLOCK = frozenset((
    "p", "div", "section", "article", "main", "aside", "header", "footer", "blockquote", "pre",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "td", "th",
    "figure", "figcaption", "hr", "details", "summary", "address", "center", "caption", "body",
    "html", "colgroup", "col", *HEADINGS,
))
LANG = {
    "default": "python",
    "python3": "python",
    "py3": "python",
    "pycon3": "pycon",
    "ipython3": "ipython",
    "none": "",
    "text": "",
    "guess": "",
}
ADMONITIONS = frozenset((
    "admonition", "note", "warning", "tip", "hint", "important", "caution", "danger", "error",
    "attention", "seealso", "todo",
))
LEAF_BLOCKS = frozenset(("p", "pre", "hr", *HEADINGS))
NESTS = frozenset(("ul", "ol", "blockquote", "table"))
SECTIONS = frozenset(("thead", "tbody", "tfoot"))
BLOCK_STARTS = frozenset("`>#|-*0123456789")  # a line starting so opens a block (fence, list...)
# fmt: on


def has_block_child(el: Element) -> bool:
    return any(child.tag in BLOCK for child in el)


def leaf_text(el: Element) -> str:
    """``convert(serialize(el))`` for an element without children: its text, normalised."""
    text = el.text
    if not text:
        return ""
    return plain(text)


def nests(el: Element) -> int:
    """1 for a block whose Markdown indents what it holds (or, a table, flattens it)."""
    tag = el.tag
    if tag in NESTS:
        return 1
    if tag == "div":
        cls = el.get("class")
        return 1 if cls and not ADMONITIONS.isdisjoint(cls.split()) else 0
    if tag == "dl":  # numpydoc's parameter lists indent ("- " items); other dls do not
        return 1 if el.find("dt/span[@class='classifier']") is not None else 0
    return 0


def flat(el: Element) -> str:
    """A block as one paragraph of its plain text (nesting beyond the limits)."""
    return escape_stars(norm(raw_text(el)))


def own_rows(table: Element) -> list[Element]:
    """The table's own rows: its tr children and those of its thead, tbody and tfoot (not
    the rows of a table nested in a cell)."""
    rows = []
    for child in table:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in SECTIONS:
            rows.extend(tr for tr in child if tr.tag == "tr")
    return rows


def is_classifier(el: Element) -> bool:
    return isinstance(el.tag, str) and (
        has_class(el, "classifier") or has_class(el, "classifier-delimiter")
    )


def all_text(el: Element) -> str:
    return "".join(el.itertext())


def has_marks(md: str) -> bool:
    return "**" in md.replace("\\*", "") or md.replace("\\*", "").count("*") >= 2
