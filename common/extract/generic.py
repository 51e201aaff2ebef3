"""Pages of a generator nobody here knows (``Generator.UNKNOWN``): the Sphinx extractor's
rules, which fall back to generic ones (any content root, any id, ``<a name>`` targets,
definition lists), behind two generic rules of their own:

* **never page chrome**: the page's ``header``, ``nav``, ``footer`` and ``aside``
  landmarks (and their ARIA roles, and elements whose id or class names them: ``header``,
  ``navbar``, ``sidebar``, ``search``...) are removed before anything is read, except
  those holding an entry's fragment (a browser would scroll there, so the entry is
  there);
* **a heading is a header**: an object's entry (any domain but ``std``) whose fragment
  is a heading, a section, sits in a heading, or is an empty target right before one,
  has that heading as its header (``title``, ``signature`` and the parameters the
  heading shows) and the blocks after it, up to the next heading of its level or above,
  as its body: its doc never begins with its own heading; an object's entry without a
  fragment (a module's page) has the page's first ``h1`` as its title and the page
  without it as its doc. ``std`` labels and pages keep Sphinx's rule (a section is its
  heading and its text).

Why not an extractor of its own: the Sphinx extractor's fallbacks already read any HTML
(its content root, id lookup, the browser's fragment rule, empty targets, dt/dd pairs),
and are tested on hand-made themes; what a generic page needs beyond them is the two
rules above. See docs/extraction.md, "Other generators".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from invcrawl.common.items import ItemStatus
from invcrawl.common.params import parse_py_arglist, with_kinds
from invcrawl.common.tasks import TaskEntry

from .anchors import children_items
from .brackets import paren_span
from .doctext import DocText
from .markdown import Markdown
from .page import Page, find_content
from .sphinx import extract_sphinx
from .text import HEADINGS, Element, drop, heading_of, is_section, text

__all__ = ["extract_generic"]

_CHROME_TAGS = ("header", "nav", "footer", "aside")
_CHROME_ROLES = frozenset(("banner", "navigation", "contentinfo", "search", "complementary"))
# id or class tokens of layout elements that are chrome on hand-made and unknown themes
_CHROME_NAMES = frozenset(
    (
        "header",
        "footer",
        "nav",
        "navbar",
        "navigation",
        "sidebar",
        "side-bar",
        "menu",
        "breadcrumb",
        "breadcrumbs",
        "search",
        "searchbox",
        "search-box",
    )
)
_INLINE_TARGETS = frozenset(("a", "span"))
_CANDIDATES = (*_CHROME_TAGS, "div", "ul", "section")


def extract_generic(
    root: Element, body: bytes, url: str, targets: Sequence[TaskEntry]
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order, from a page of an unknown
    generator."""
    index = Page(root=root, main=root, url=url, has_members=set(), members=set())
    found = {t.anchor: index.fragment(t.anchor) for t in targets if t.anchor}
    _drop_chrome(root, [el for el in found.values() if el is not None])
    contents = extract_sphinx(root, body, url, targets)
    main, _ = find_content(root)
    text_of = DocText(main, set(), set())
    md = Markdown(url, set(), set())
    rendered: dict[tuple[Element, str], dict[str, Any]] = {}
    for t, content in zip(targets, contents, strict=True):
        el = found.get(t.anchor) if t.anchor else None
        # (std entries, labels and pages, keep Sphinx's rule: a section with its heading)
        heading = _heading_for(el) if el is not None and t.domain != "std" else None
        if heading is None or content["status"] != ItemStatus.OK:
            if content["signature"] and not content["params"] and t.domain != "std":
                content["params"] = _params(content["signature"], t.domain)
            continue
        # One rendering per heading, however many entries point under it (issue 46):
        # the entries share its values, each item copying its bounded result.
        shared = rendered.get((heading, t.domain))
        if shared is None:
            items = _after_heading(heading)
            words = text(heading)
            shared = rendered[(heading, t.domain)] = {
                "title": words or None,
                "doc": text_of.doc(items, False),
                "doc_markdown": md.items(items, False),
            }
            if t.domain != "std":
                shared["signature"] = words or None
                shared["params"] = _params(words, t.domain)
        content.update(shared)
        if content["parent"] is None and "." in t.name and t.domain in ("py", "js"):
            content["parent"] = t.name.rsplit(".", 1)[0]
    pages = [
        c for t, c in zip(targets, contents, strict=True) if not t.anchor and t.domain != "std"
    ]
    if pages:
        _without_title(main, pages, url)
    return contents


def _without_title(main: Element, contents: list[dict[str, Any]], url: str) -> None:
    """An entry of the whole page (no fragment) has the page's first ``h1`` as its title
    (the Sphinx rule), and its doc is the page without it."""
    h1 = next(main.iter("h1"), None)
    if h1 is None:
        return
    drop(h1)
    doc = DocText(main, set(), set()).doc([main], False)
    markdown = Markdown(url, set(), set()).items([main], False)
    for content in contents:
        content["doc"], content["doc_markdown"] = doc, markdown


def _drop_chrome(root: Element, keep: list[Element]) -> None:
    """Remove the page's chrome, but for the elements holding a fragment of an entry.
    Linear in the page whatever its nesting: each element's ancestors are walked once."""
    holders: set[Element] = set()
    for el in keep:
        node: Element | None = el
        while node is not None and node not in holders:
            holders.add(node)
            node = node.getparent()
    inside: dict[Element, bool] = {}  # element -> it is chrome or inside chrome

    def within(el: Element) -> bool:
        path = []
        node = el.getparent()
        found = False
        while node is not None:
            known = inside.get(node)
            if known is not None:
                found = known
                break
            path.append(node)
            node = node.getparent()
        for node in path:  # (document order: a chrome ancestor was classified first)
            inside[node] = found
        return found

    chrome: list[Element] = []
    for el in root.iter(*_CANDIDATES):
        outer = within(el)
        is_chrome = el not in holders and _is_chrome(el)
        inside[el] = outer or is_chrome
        if is_chrome and not outer:
            chrome.append(el)
    for el in chrome:
        drop(el)


def _is_chrome(el: Element) -> bool:
    if el.tag in _CHROME_TAGS or el.get("role") in _CHROME_ROLES:
        return True
    names = [el.get("id") or "", *(el.get("class") or "").split()]
    return any(n.lower() in _CHROME_NAMES for n in names)


def _heading_for(el: Element) -> Element | None:
    """The heading that heads a fragment's element: itself, a section's own heading, the
    heading it sits in, or the heading right after an empty target
    (``<a name="x"></a><h3>``)."""
    if el.tag in HEADINGS:
        return el
    if is_section(el):
        return heading_of(el)
    for anc in el.iterancestors():
        if anc.tag in HEADINGS:
            return anc
        if anc.tag not in _INLINE_TARGETS:
            break
    if el.tag in _INLINE_TARGETS and not len(el) and not (el.text or "").strip():
        if (el.tail or "").strip():
            return None
        nxt = el.getnext()
        while nxt is not None and nxt.tag in _INLINE_TARGETS and not len(nxt):
            nxt = nxt.getnext()  # other empty targets of the same place
        if nxt is not None and nxt.tag in HEADINGS:
            return nxt
    return None


def _after_heading(heading: Element) -> list[Element | str]:
    """The body a heading heads: the rest of its section when it is the section's own
    heading, else the blocks after it up to the next heading of its level or above."""
    parent = heading.getparent()
    if parent is not None and is_section(parent) and heading_of(parent) is heading:
        rest = children_items(parent)
        return rest[rest.index(heading) + 1 :]
    level = int(heading.tag[1])
    items: list[Element | str] = []
    if heading.tail and heading.tail.strip():
        items.append(heading.tail)
    sib = heading.getnext()
    while sib is not None:
        if (sib.tag in HEADINGS and int(sib.tag[1]) <= level) or is_section(sib):
            break
        if sib.tag in _INLINE_TARGETS and not len(sib) and not (sib.text or "").strip():
            after = sib.getnext()  # the next entry's target before its heading
            if after is not None and after.tag in HEADINGS and int(after.tag[1]) <= level:
                break
        items.append(sib)
        if sib.tail and sib.tail.strip():
            items.append(sib.tail)
        sib = sib.getnext()
    return items


def _params(signature: str, domain: str) -> list[dict[str, Any]]:
    """The parameters a heading shows, ``name(a, b=1)``: read as Python's."""
    at = signature.find("(")
    if at <= 0:
        return []
    found = paren_span(signature, at)
    if found is None:
        return []
    return with_kinds(parse_py_arglist(found[0]), domain)
