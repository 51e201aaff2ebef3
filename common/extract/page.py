"""Parse a page once and build what every entry lookup needs: the main content node, the id
index and the set of elements that contain member descriptions.

All of it is O(page) and runs once per page, whatever the number of inventory entries on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree

from .text import Element, drop, has_class

_IDS = etree.XPath(".//*[@id]")


def _main_rank(el: Element) -> int:
    """Lower is better: the most specific theme content node wins (docs/extraction.md,
    "How an entry is found", 2: the theme of each rank)."""
    if el.get("itemprop") == "articleBody":
        return 0  # sphinx_rtd_theme: [role=main] also holds breadcrumbs and footer
    tag = el.tag
    if tag == "article" and (el.get("role") == "main" or has_class(el, "bd-article")):
        return 1  # furo, pydata, sphinx-book-theme (their <main role=main> holds sidebars)
    if el.get("role") == "main":
        return 2 if has_class(el, "body") else 3  # basic/alabaster/classic/python-docs-theme
    if tag == "main":
        return 4
    return 9  # a bare <article>: only if nothing better exists


# Below this rank the content root is a theme landmark we trust; from it on it was found
# from the document itself, and build() also cleans and indexes outside it.
CONFIDENT = 5
# Classes of the basic theme's layout (most hand-made themes extend it), innermost first.
_LAYOUT_RANK = {"body": 5, "bodywrapper": 6, "documentwrapper": 7, "document": 8}
_CHROME = ("header", "nav", "footer", "aside")


def find_content(root: Element) -> tuple[Element, int]:
    """The element holding the page's content, and how it was found (lower is surer):
    a theme landmark (role=main, itemprop=articleBody, <main>, <article>: ranks 0-4); the
    basic layout's ``div.body`` and its wrappers (5-8); else, for themes nobody here has
    seen, the smallest element holding every top-level docutils section (10); else the
    first ``<h1>`` that is not in a header or navigation (11); else ``<body>``. Never the
    page header whose ``<h1>`` is the site name."""
    best: Element | None = None
    best_rank = 99
    # Tag-filtered iteration instead of an XPath over every element (3-10x cheaper).
    for el in root.iter("div", "main", "article"):
        if el.tag == "div" and el.get("role") is None and el.get("itemprop") is None:
            cls = el.get("class")
            rank = min((_LAYOUT_RANK.get(c, 99) for c in cls.split()), default=99) if cls else 99
        else:
            rank = _main_rank(el)
        if rank < best_rank:
            best, best_rank = el, rank
    if best is not None and best_rank <= _LAYOUT_RANK["bodywrapper"]:
        return best, best_rank
    # (div.documentwrapper and div.document may hold the sidebar too: sections first.)
    sections = _top_sections(root)
    if sections:
        return _common_ancestor(sections), 10
    if best is not None and best_rank < 9:
        return best, best_rank
    for h1 in root.iter("h1"):
        if not _in_chrome(h1):
            parent = h1.getparent()
            if parent is not None:
                return parent, 11
    if best is not None:
        return best, best_rank
    body = root.find("body")
    return (body if body is not None else root), 12


def _top_sections(root: Element) -> list[Element]:
    """docutils sections (``<section>``, or ``<div class="section">`` before Sphinx 4) that
    are not inside another one, nor inside the page's header or navigation."""
    found = []
    for el in root.iter("section", "div"):
        if el.tag == "div" and not has_class(el, "section"):
            continue
        if el.get("id") is None:
            continue
        if any(a.tag == "section" or has_class(a, "section") for a in el.iterancestors()):
            continue
        if not _in_chrome(el):
            found.append(el)
    return found


def _in_chrome(el: Element) -> bool:
    for anc in el.iterancestors():
        if anc.tag in _CHROME or anc.get("role") in ("banner", "navigation", "contentinfo"):
            return True
        cls = anc.get("class")
        if cls and any(c in ("header", "navbar", "sphinxsidebar", "related") for c in cls.split()):
            return True
    return False


def _common_ancestor(elements: list[Element]) -> Element:
    if len(elements) == 1:
        parent = elements[0].getparent()
        return parent if parent is not None else elements[0]
    first = [elements[0], *elements[0].iterancestors()]
    rest = [set(e.iterancestors()) for e in elements[1:]]
    for anc in first[1:]:
        if all(anc in r for r in rest):
            return anc
    return first[-1]


_PERMALINK_HOLDERS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "dt", "caption", "figcaption"))
# One tag-filtered pass over main collects everything build() needs: each pass over a large
# page costs ~20 ns per node in libxml2 even when nothing matches.
_PASS_TAGS = ("dl", "p", "script", "style", *_PERMALINK_HOLDERS)
_LEAVES = frozenset(("p", "dt", "h1", "h2", "h3", "h4", "h5", "h6"))


def _is_headerlink(el: Element) -> bool:
    cls = el.get("class")
    return el.tag == "a" and cls is not None and "headerlink" in cls.split()


# libxml2 closes <dt> when it meets <dl> (HTML content model), which breaks Sphinx >= 7.1
# multi-line signatures: the parameter <dl> and the closing ")" + permalink become siblings of the
# dt. In valid HTML a <dl> never directly follows a <dt> inside a <dl>, so this pattern identifies
# exactly the broken spots (docs/extraction.md, "Decisions"); build() collects them.
def _fix_nested_dl(broken: list[Element]) -> None:
    """Move a dl that follows a dt (and what follows it up to the next dt/dd) into that dt."""
    for dt in broken:
        sibling = dt.getnext()
        while sibling is not None and sibling.tag not in ("dt", "dd"):
            following = sibling.getnext()
            dt.append(sibling)  # moves the element together with its tail text
            sibling = following


def _strip_noise(main: Element, raw: bytes, holders: list[Element], noise: list[Element]) -> None:
    """Remove noise once, before anything reads the tree, so signature text, doc text and
    Markdown all see the same cleaned tree: permalinks (any icon: ¶, #, empty), viewcode and
    linkcode "[source]" links, code line numbers, scripts and styles (``noise`` holds those
    already; comments are dropped by the parser; Sphinx < 3.0 may emit <!--[id]--> after <dt>).

    Permalinks are the last child of the element they link (heading, dt, caption), so only those
    elements are visited; a pass over every <a> costs several ms on link-heavy pages, and XPath
    class predicates cost even more. Byte-level pre-checks skip the rarer kinds entirely.
    """
    for holder in holders:
        if len(holder):
            last = holder[-1]
            while last.tag == "br" and last.getprevious() is not None:
                last = last.getprevious()  # C-API dts end with <br />
            if _is_headerlink(last):
                noise.append(last)
            elif last.tag == "p" and len(last) and _is_headerlink(last[-1]):
                noise.append(last[-1])  # <figcaption><p>…<a class="headerlink">
    # Toctree and code-block captions (<span class="caption-text">…</span><a headerlink>),
    # viewcode "[source]" links, line numbers: one pass over the spans (and tds) for all three.
    lines = _line_range(main)
    captions = _maybe_in(raw, b"caption-text", lines)
    viewcode = _maybe_in(raw, b"viewcode-link", lines)
    linenos = _maybe_in(raw, b"linenos", lines)
    if captions or viewcode or linenos:
        for el in main.iter("span", "td") if linenos else main.iter("span"):
            cls = el.get("class")
            if not cls:
                continue
            if captions and cls == "caption-text":
                nxt = el.getnext()
                if nxt is not None and _is_headerlink(nxt):
                    noise.append(nxt)
            # (Substring tests first: most spans are syntax-highlighting tokens.)
            if (
                viewcode
                and "viewcode-link" in cls
                and "viewcode-link" in cls.split()
                and el.tag == "span"
            ):
                parent = el.getparent()
                noise.append(parent if parent is not None and parent.tag == "a" else el)
            if linenos and "linenos" in cls and "linenos" in cls.split():
                noise.append(el)
    # sphinx-paramlinks (SQLAlchemy) writes a permalink after each parameter's name, inside
    # the field list's paragraph: "¶ – the description" otherwise.
    if _maybe_in(raw, b"paramlink", lines):
        for el in main.iter("a"):
            cls = el.get("class")
            if cls and "paramlink" in cls and "paramlink" in cls.split():
                noise.append(el)
    for el in noise:
        drop(el)


def _line_range(main: Element) -> tuple[int, int] | None:
    """Source lines main can span: from its start tag to the start of the next element after
    it (None when unknown: libxml2 line numbers saturate at 65535)."""
    first = main.sourceline
    if not first or first >= 65535:
        return None
    el = main
    while el is not None:
        nxt = el.getnext()
        if nxt is not None:
            last = nxt.sourceline
            return (first, last) if last and last < 65535 else None
        el = el.getparent()
    return first, 1 << 30  # main runs to the end of the document


def _maybe_in(raw: bytes, needle: bytes, lines: tuple[int, int] | None) -> bool:
    """False when ``needle`` is nowhere in the page source, or only on lines outside main
    (Sphinx themes repeat toctree captions in every page's sidebar)."""
    if not raw:
        return True
    at = raw.find(needle)
    if at < 0:
        return False
    if lines is None:
        return True
    line, pos = 1, 0
    while at >= 0:
        line += raw.count(b"\n", pos, at)
        pos = at
        if lines[0] <= line <= lines[1]:
            return True
        at = raw.find(needle, at + 1)
    return False


_BY_ID = etree.XPath("id($a)")  # libxml2 registers HTML id attributes in a hash table


@dataclass(slots=True)
class Page:
    root: Element
    main: Element
    url: str
    # Every element that has a member description (dl > dt[id]) somewhere below it; lets body
    # rendering take a fast whole-element path everywhere else.
    has_members: set[Element]
    members: set[Element]
    # Every p, dt and heading in main, in document order (Markdown converts them in one batch).
    leaves: list[Element] = field(default_factory=list)
    _ids: dict[str, Element] | None = field(default=None)
    _inside: set[Element] = field(default_factory=set)  # main and elements known inside it
    _doc_ids: dict[str, Element] | None = field(default=None)

    def __post_init__(self) -> None:
        self._inside.add(self.main)

    @property
    def ids(self) -> dict[str, Element]:
        """Every id inside main, first match in document order (built on first use)."""
        if self._ids is None:
            self._ids = {}
            for el in _IDS(self.main):
                self._ids.setdefault(el.get("id"), el)
        return self._ids

    def lookup(self, anchor: str) -> tuple[Element | None, bool]:
        """Element for an exact anchor: inside main first; else anywhere (flag False).

        libxml2's id table gives the first element of the document with that id in O(1); when
        it is inside main it is also main's first, so the O(page) index is only built for
        anchors that are missing, duplicated outside main, or shadowed by an ``<a name>``.
        """
        found = _BY_ID(self.root, a=anchor)
        if len(found) == 1 and found[0].get("id") == anchor:
            el = found[0]
            inside = self._inside
            path: list[Element] = []
            for anc in el.iterancestors():
                if anc in inside:  # main itself, or an ancestor already seen inside main
                    inside.update(path)
                    return el, True
                path.append(anc)
        el = self.ids.get(anchor)
        if el is not None:
            return el, True
        if self._doc_ids is None:
            # Built lazily: only pages with an anchor outside main pay for a second index.
            self._doc_ids = {}
            for node in _IDS(self.root):
                self._doc_ids.setdefault(node.get("id"), node)
        return self._doc_ids.get(anchor), False

    def fragment(self, anchor: str) -> Element | None:
        """The element a browser scrolls to for ``#anchor`` (the HTML standard's indicated
        part of the document): the element with that id (inside main first, as
        :meth:`lookup`), else the first ``a`` element with that name; the same again for
        the percent-decoded fragment when it differs; else None (``anchor_missing``).

        pydoctor marks every member with ``<a name>`` only, and older hand-written or
        generated pages do too: a browser scrolls there, so an entry there is found.
        """
        for candidate in _fragments(anchor):
            el, _ = self.lookup(candidate)
            if el is None:
                el = self.named_a(candidate)
            if el is not None:
                return el
        return None

    def named_a(self, name: str) -> Element | None:
        """The first ``a`` element whose ``name`` is ``name``. libxml2 registers an ``a``'s
        name in the document's id table too (first registration wins), so without an
        element of that id the table's answer is that ``a`` in O(1); a scan is needed only
        when an element with that id came first in the document."""
        found = _BY_ID(self.root, a=name)
        if len(found) == 1 and found[0].tag == "a" and found[0].get("name") == name:
            el: Element = found[0]
            return el
        named = _NAMED_A(self.root, a=name)
        return named[0] if named else None


_NAMED_A = etree.XPath("(//a[@name = $a])[1]")


def _fragments(anchor: str) -> tuple[str, ...]:
    """The fragment as written, then percent-decoded (UTF-8) when that differs (a byte
    sequence that is not UTF-8 is no second candidate, as in a browser)."""
    if "%" not in anchor:
        return (anchor,)
    try:
        decoded = unquote(anchor, errors="strict")
    except UnicodeDecodeError:
        return (anchor,)
    return (anchor,) if decoded == anchor else (anchor, decoded)


def build(root: Element, url: str, raw: bytes = b"") -> Page:
    main, rank = find_content(root)
    # A content root found without a theme landmark may be too small: noise is cleaned and
    # member descriptions are indexed over the whole page, so that permalinks, [source]
    # links and nested members never leak into text wherever an anchor turns out to be.
    scope = main if rank < CONFIDENT else root
    holders: list[Element] = []
    broken: list[Element] = []  # dts followed by a dl: libxml2 closed them early
    noise: list[Element] = []
    dts: list[Element] = []
    leaves: list[Element] = []
    for el in scope.iter(*_PASS_TAGS):
        tag = el.tag
        if tag in _LEAVES:
            leaves.append(el)
            if tag == "p":
                continue
        if tag == "dt":
            holders.append(el)
            dts.append(el)
        elif tag == "dl":
            prev = el.getprevious()
            if prev is not None and prev.tag == "dt":
                broken.append(prev)
        elif tag in ("script", "style"):
            noise.append(el)
        else:
            holders.append(el)
    _fix_nested_dl(broken)
    _strip_noise(scope, raw, holders, noise)
    members: set[Element] = set()
    for dt in dts:
        if dt.get("id") is not None:
            dl = dt.getparent()
            if dl is not None and dl.tag == "dl" and not has_class(dl, "glossary"):
                members.add(dl)
    has_members: set[Element] = set()
    for dl in members:
        for anc in dl.iterancestors():
            if anc in has_members:
                break
            has_members.add(anc)
            if anc is scope:
                break
    return Page(
        root=root, main=main, url=url, has_members=has_members, members=members, leaves=leaves
    )
