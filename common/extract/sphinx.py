"""Sphinx pages: one content dict per ``objects.inv`` entry, found through the page's id
index (see ``page.py``) in the object descriptions, sections and glossaries docutils and
Sphinx write; bodies are rendered through a per-page memo so nested bodies (std:doc ⊃
section ⊃ class ⊃ method) are converted once. See docs/extraction.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lxml import etree

from invcrawl.common.bounds import truncate
from invcrawl.common.items import ItemStatus, empty_content
from invcrawl.common.rope import Text, head
from invcrawl.common.tasks import TaskEntry

from .anchors import Located, children_items, locate, section_title
from .doctext import DocText
from .fields import parse_fields
from .markdown import Markdown
from .page import Page, build
from .signature import dt_text, params, return_annotation
from .sphinx_capi import take_annotations
from .sphinx_labels import sphinx_labels
from .sphinx_parent import parent_of
from .text import HEADINGS, Element, has_class, is_section, norm, raw_text, text
from .version_notes import after_notes, described_after_notes, versions

__all__ = ["INTRO_CHARS", "extract_sphinx"]


_CAPTIONS = frozenset(("figcaption", "caption"))
# An anchor_missing entry with nothing to fall back on gets the page's introduction, at
# most this long (doc and doc_markdown each): never the page, which 300 entries of one
# inventory would copy 300 times (docs/items.md, size bounds).
INTRO_CHARS = 2000
_INTRO = "\x00intro"


def extract_sphinx(
    root: Element, body: bytes, url: str, targets: Sequence[TaskEntry]
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order, from a parsed Sphinx page."""
    extractor = _PageExtractor(build(root, url, body), url, targets, body)
    located = [extractor.locate(t) for t in targets]
    whole_page = False
    for loc, _status, _reason in located:
        # Bodies (sections, main, blocks, dds) whose text is composed from their children's
        # memoised texts, so that std:doc ⊃ section ⊃ subsection (or nested blocks with
        # ids) each normalise their text once per page, a rope of the texts inside.
        for item in loc.body:
            if not isinstance(item, str):
                extractor.text.request(item)
        if loc.dd is not None:
            extractor.text.request(loc.dd)
        whole_page = whole_page or loc.kind == "page"
    if whole_page:  # std:doc renders all of main: convert its paragraphs in one batch
        extractor.md.prepare(extractor.page.leaves)
    return [extractor.extract(t, *where) for t, where in zip(targets, located, strict=True)]


class _PageExtractor:
    def __init__(self, page: Page, url: str, targets: Sequence[TaskEntry], raw: bytes) -> None:
        self.page = page
        # CPython's C API annotations leave the tree (for labels) before any text is read.
        self.capi = take_annotations(page.main, raw)
        self._numbers = _section_numbers(page.main) if b"section-number" in raw else set()
        self.signatures: dict[Element, str | None] = {}
        self.text = DocText(page.main, page.members, page.has_members)
        self.md = Markdown(url, page.members, page.has_members, self.signatures, self.text)
        # anchor → inventory names, to name the enclosing object of nested members. Parameter
        # entries share their function's anchor, so they must not claim it. One anchor may
        # have several names (SQLAlchemy lists ``sqlalchemy.orm.session.sessionmaker`` and
        # ``sqlalchemy.orm.sessionmaker`` at one class): a member's parent is the one its
        # own name is under.
        self.names: dict[str, list[str]] = {}
        for t in targets:
            if t.anchor and not t.role.endswith("Param"):
                names = self.names.setdefault(t.anchor, [])
                if t.name not in names:
                    names.append(t.name)
        self._content: dict[tuple[str, bool, str], dict[str, Any]] = {}
        self._lower: dict[str, Element] | None = None
        self._holder_versions: dict[Element, list[dict[str, Any]]] = {}

    # -- per entry ----------------------------------------------------------------------------

    def locate(self, t: TaskEntry) -> tuple[Located, str, str | None]:
        page = self.page
        status, reason = ItemStatus.OK, None
        if not t.anchor:
            return Located("page", page.main, body=[page.main]), status, reason
        el = page.fragment(t.anchor)
        if el is None:
            el, reason = self._fallback(t)
            status = ItemStatus.ANCHOR_MISSING
        loc = locate(el, page.main) if el is not None else self._intro()
        return loc, status, reason

    def extract(
        self, t: TaskEntry, loc: Located, status: str, reason: str | None
    ) -> dict[str, Any]:
        exclude = loc.kind in ("object", "term") or t.role == "module"
        if t.role == "module" and loc.kind in ("section", "span"):
            loc = self._module_intro(loc)
        if loc.kind == "intro":  # every missing anchor without a fallback: one rendering
            key = (_INTRO, False, "intro")
        else:
            key = (t.anchor if status == ItemStatus.OK else "\x00" + t.anchor, exclude, loc.kind)
        content = self._content.get(key)
        if content is None:  # the first entry with this body renders it
            content = self._content[key] = self._render(loc, t, exclude)
        out = dict(content)  # shared values: each item copies its bounded ones (pageitems.py)
        out["status"], out["reason"] = status, reason
        capi = self.capi.get(loc.dd) if loc.dd is not None and self.capi else None
        if capi and loc.kind == "object" and not t.role.endswith("Param"):
            out["labels"] = [*out["labels"], *capi]  # the function's facts, not its parameter's
        out["title"] = self._title(loc, t)
        out["parent"] = self._parent(loc, t)
        return out

    def _module_intro(self, loc: Located) -> Located:
        """A module's own introduction: the prose of its section (or after its target)
        up to the first object description or subsection; not its title, not the page."""
        # A section entry's element is the section, or the target that labels it (a
        # ``span.target`` before it or leading it: its content is the section's).
        holder = loc.section if loc.kind == "section" and loc.section is not None else loc.element
        items = children_items(holder) if loc.kind == "section" else loc.body
        intro: list[Element | str] = []
        for item in items:
            if isinstance(item, str):
                intro.append(item)
                continue
            if item.tag in HEADINGS or item is loc.element:
                continue
            if is_section(item) or item in self.page.members or item in self.page.has_members:
                break
            intro.append(item)
        return Located("span", loc.element, body=intro, section=loc.section)

    def _intro(self) -> Located:
        """The page's introduction: the prose of its top section (or of main) before the
        first subsection or object description, its heading left out, as many blocks as
        reach INTRO_CHARS of text (the rendering is then cut to it)."""
        main = self.page.main
        top = [c for c in main if isinstance(c.tag, str)]
        holder = top[0] if len(top) == 1 and is_section(top[0]) else main
        members, has_members = self.page.members, self.page.has_members
        intro: list[Element | str] = []
        seen = 0
        for item in children_items(holder):
            if seen >= INTRO_CHARS:
                break
            if isinstance(item, str):
                intro.append(item)
                seen += len(item.strip())
                continue
            if not isinstance(item.tag, str) or item.tag in HEADINGS:
                continue
            if is_section(item) or item in members or item in has_members:
                break
            intro.append(item)
            seen += len(raw_text(item).strip())
        section = holder if is_section(holder) else None
        return Located("intro", holder, body=intro, section=section)

    def _fallback(self, t: TaskEntry) -> tuple[Element | None, str]:
        """Best effort for an anchor that is not on the page (reported as anchor_missing)."""
        why = f"anchor {t.anchor!r} not found on page"
        if self._lower is None:
            self._lower = {}
            for ident, el in self.page.ids.items():
                self._lower.setdefault(ident.lower(), el)
        el = self._lower.get(t.anchor.lower())
        if el is not None:  # Sphinx < 3.0 lower-cased label and term ids
            return el, why + "; used a case-insensitive id match"
        el = self.page.ids.get(t.name)
        if el is not None:
            return el, why + "; used the element whose id is the entry name"
        return None, why + "; content is the page's introduction"

    def _render(self, loc: Located, t: TaskEntry, exclude: bool) -> dict[str, Any]:
        content = empty_content(ItemStatus.OK)
        body = loc.body
        if loc.kind == "token":
            line = _production(loc.element)
            content.update(signature=line, doc=line, doc_markdown=f"```\n{line}\n```")
            return content
        dd = loc.dd
        # A version note before the prose is a version note (``versions``), not the start
        # of the description (CPython's argparse: "New in version 3.2."; cryptography's
        # functions and attributes): the doc begins with the prose after it, if any.
        described = described_after_notes(body, self.page.members) if loc.kind == "object" else None
        if described is not None:
            content["doc"] = self.text.doc(described, exclude)
            content["doc_markdown"] = self.md.items(described, exclude)
        elif loc.kind in ("object", "term") and dd is not None:  # the dd's content
            content["doc"] = self.text.dd_doc(dd, exclude)
            content["doc_markdown"] = self.md.dd_body(dd, exclude)
        else:  # (an object without a dd: the prose written after it, anchors.locate)
            shown = after_notes(body) if t.role == "module" else body
            content["doc"] = self._unnumbered(self.text.doc(shown, exclude))
            content["doc_markdown"] = self.md.items(shown, exclude)
        if loc.kind == "object":
            md = self.md
            lines = [_without_type_word(md.signature(dt), t.role) for dt in loc.dts]
            content["signature"] = "\n".join(line for line in lines if line) or None
            dt = loc.element
            sig_params = params(dt, t.domain, md.signature(dt) or "")
            hint = return_annotation(dt, md.dt_raw(dt))
            # Where the signature shows its parameters, a name only the field list has
            # is no parameter of the call (docs/items.md, doc_only_params). An empty "()"
            # is not taken as one: a hand-written or unread signature may show it while
            # the field list names the real parameters.
            doc_only: list[dict[str, Any]] | None = [] if sig_params else None
            overloads = frozenset(
                _bare_name(p["name"])
                for other in loc.dts
                if other is not dt
                for p in params(other, t.domain, md.signature(other) or "")
                if p["name"]
            )
            ps, returns, raises = parse_fields(body, sig_params, hint, doc_only, overloads)
            content.update(params=ps, returns=returns, raises=raises)
            if doc_only:
                content["doc_only_params"] = doc_only
            if t.domain == "py":
                content["labels"] = sphinx_labels(dt)
        if loc.kind == "intro":
            content["doc"] = truncate(content["doc"], INTRO_CHARS)
            content["doc_markdown"] = truncate(content["doc_markdown"], INTRO_CHARS, markdown=True)
        if loc.kind in ("object", "term", "span", "intro"):
            content["versions"] = versions(body)
        elif loc.kind == "section" and loc.section is not None:
            content["versions"] = self._versions_in(loc.section)
        elif loc.kind == "page":
            main = self.page.main
            top = [c for c in main if isinstance(c.tag, str)]
            holder = top[0] if len(top) == 1 and is_section(top[0]) else main
            content["versions"] = self._versions_in(holder)
        return content

    def _unnumbered(self, doc: Text) -> Text:
        """``doc`` without the section number it starts with (``:numbered:`` toctrees
        write "6.11. " before each heading: numbering, not text)."""
        if not self._numbers or not head(doc, 1).isdigit():
            return doc
        longest = max(map(len, self._numbers)) + 1
        if isinstance(doc, str) or len(doc) <= longest:
            number, _, rest = str(doc).partition(" ")
            return rest if number in self._numbers else doc
        # A rope (a long section): its number is within its first characters.
        number, space, _ = doc.head(longest).partition(" ")
        return doc.after(len(number) + 1) if space and number in self._numbers else doc

    def _versions_in(self, holder: Element) -> list[dict[str, Any]]:
        """Version notes among ``holder``'s children; std:doc and the label of the page's top
        section ask for the same holder, hence the memo (each entry gets its own list)."""
        found = self._holder_versions.get(holder)
        if found is None:
            found = self._holder_versions[holder] = versions(children_items(holder))
        return [dict(v) for v in found]

    # -- title and parent ---------------------------------------------------------------------

    def _title(self, loc: Located, t: TaskEntry) -> str | None:
        kind = loc.kind
        if kind in ("page", "intro"):
            return _page_title(self.page.main)
        if kind == "term":
            return dt_text(loc.element) or None
        if kind == "object":
            return None
        if kind == "block":
            for child in loc.element:
                if (
                    child.tag in _CAPTIONS
                    or has_class(child, "caption")
                    or has_class(child, "code-block-caption")
                ):
                    return text(child) or None
        return section_title(loc.section)

    def _parent(self, loc: Located, t: TaskEntry) -> str | None:
        return parent_of(loc, t, self.names)


def _section_numbers(main: Element) -> set[str]:
    """The section numbers Sphinx wrote in the page's headings (``span.section-number``)."""
    found = set()
    for span in main.iter("span"):
        parent = span.getparent()
        if span.get("class") == "section-number" and parent is not None and parent.tag in HEADINGS:
            found.add(norm(raw_text(span)))
    return found - {""}


def _bare_name(name: str) -> str:
    return name.lstrip("*").strip()  # as fields.py compares parameter names


_FIRST_H1 = etree.XPath("descendant::h1[1]")  # stops at the first match (an iter() looks ahead)


def _page_title(main: Element) -> str | None:
    """The first h1 (else the first heading) not in sphinx-book-theme's print-only copy."""
    first = _FIRST_H1(main)
    if first and not _print_only(first[0]):
        return text(first[0]) or None
    for tags in (("h1",), HEADINGS):
        for h in main.iter(*tags):
            if _print_only(h):
                continue
            return text(h) or None
    return None


def _print_only(el: Element) -> bool:
    return any(has_class(a, "onlyprint") for a in el.iterancestors())


def _production(strong: Element) -> str:
    """One grammar production: the token's strong and everything up to the next token."""
    parts = [raw_text(strong)]
    if strong.tail:
        parts.append(strong.tail)
    sib = strong.getnext()
    while sib is not None and not (sib.tag == "strong" and sib.get("id")):
        parts.append(raw_text(sib))
        if sib.tail:
            parts.append(sib.tail)
        sib = sib.getnext()
    return norm("".join(parts))


# Type words a theme writes before a name where Sphinx writes none: zzzeeksphinx
# (SQLAlchemy's docs) puts ``function`` and ``method`` before every function and method.
# They say what the role says and are no part of the call (Python has no such keyword),
# so the signature goes without them; Sphinx's own keywords (``class``, ``classmethod``,
# ``async``...) stay, as docs/items.md says.
_TYPE_WORDS = {"function": "function ", "method": "method "}


def _without_type_word(line: str | None, role: str) -> str | None:
    word = _TYPE_WORDS.get(role)
    if line and word and line.startswith(word):
        return line[len(word) :]
    return line
