"""MkDocs pages documented by mkdocstrings (its Python handler): one content dict per
``objects.inv`` entry (docs/extraction.md, "mkdocstrings").

The modules: ``locate`` (content root, cleaning, the documented objects and where an anchor
lands), ``signature`` (signature text, labels, parameters), ``sections`` (Parameters,
Returns, Raises in every layout), ``admonitions`` (version notes). Doc text and Markdown
come from the shared converters (``doctext.py``, ``markdown.py``), told to leave out the
nested members (each member is an item of its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lxml import etree

from invcrawl.common.bounds import truncate
from invcrawl.common.items import ItemStatus, empty_content
from invcrawl.common.params import param
from invcrawl.common.tasks import TaskEntry

from ..anchors import children_items
from ..doctext import DocText
from ..markdown import Markdown
from ..mdblocks import has_block_child
from ..page import Page
from ..text import HEADINGS, Element, has_class, text
from .admonitions import versions
from .locate import (
    DocObject,
    clean,
    content_root,
    layout,
    object_at,
    page_heading,
    section_items,
)
from .merge import merge
from .sections import Section, item_entry, read_sections
from .signature import bases_only, params_and_return, signature_text, take_labels

__all__ = ["extract_mkdocstrings"]

# An anchor_missing entry gets the page's introduction, at most this long (as on Sphinx
# pages: docs/extraction.md, "How an entry is found", 6).
INTRO_CHARS = 2000
_FIRST_H1 = etree.XPath("descendant::h1[1]")


def extract_mkdocstrings(
    root: Element, body: bytes, url: str, targets: Sequence[TaskEntry]
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order, from a parsed MkDocs page."""
    return _PageExtractor(root, url, targets).extract_all()


class _PageExtractor:
    def __init__(self, root: Element, url: str, targets: Sequence[TaskEntry]) -> None:
        main = content_root(root)
        clean(main)
        self.main = main
        self.targets = targets
        self.layout = layout(main)
        # Labels leave every heading before any text is read (the page's own rendering too).
        self.labels = {el: take_labels(obj) for el, obj in self.layout.objects.items()}
        members, has_members = self.layout.members, self.layout.has_members
        self.page = Page(root=root, main=main, url=url, has_members=has_members, members=members)
        self.text = DocText(main, members, has_members)
        self.md = Markdown(url, members, has_members, text=self.text)
        # Paragraphs and section-table cells, converted in one batch (``inline.convert_many``):
        # a page is mostly its objects' docstrings, each a few short fragments.
        self.md.prepare(_leaves(main))
        # Each object's sections, read before any text: their tables' column headings
        # are no text of the page's (the plain doc reads as the page, not its chrome).
        self.sections: dict[Element, list[Section]] = {}
        for el, obj in self.layout.objects.items():
            if obj.contents is not None:
                found = self.sections[el] = read_sections(obj.contents)
                for section in found:
                    for cell in section.headings:
                        self.text.leave_out(cell)
        # an object's anchor -> its inventory name, to name the parent of its members: the
        # entry named as the anchor (mkdocstrings' ids are the objects' paths) over an alias
        # pointing at the same object (``copier.TaskError`` at ``#copier.errors.TaskError``)
        self.names: dict[str, str] = {}
        for t in targets:
            if t.anchor and (t.name == t.anchor or t.anchor not in self.names):
                self.names[t.anchor] = t.name
        self._rendered: dict[Element, dict[str, Any]] = {}
        self._shared: dict[str, dict[str, Any]] = {}

    def extract_all(self) -> list[dict[str, Any]]:
        # Elements that are entries' bodies: the text of each element holding one is
        # composed from its children's (nested blocks with ids normalise theirs once).
        for t in self.targets:
            el = self.page.lookup(t.anchor)[0] if t.anchor else None
            if el is not None and isinstance(el.tag, str):
                self.text.request(el)
        out = []
        for t in self.targets:
            out.append(self.extract(t))
        return out

    def extract(self, t: TaskEntry) -> dict[str, Any]:
        if not t.anchor:
            return self._once("\x00page", self._whole_page, None)
        el, _ = self.page.lookup(t.anchor)
        reason = None
        if el is None:
            el = self.page.ids.get(t.name)
            reason = f"anchor {t.anchor!r} not found on page"
            if el is None:
                reason += "; content is the page's introduction"
                return self._once("\x00intro", self._intro, reason)
            reason += "; used the element whose id is the entry name"
        obj = object_at(el, self.layout.objects)
        if obj is not None:
            content = self._object(obj, t)
        elif has_class(el, "doc-heading-parameter"):
            content = self._parameter(el, t)
        elif isinstance(el.tag, str) and el.tag in HEADINGS:
            content = self._section(el)
        else:
            content = self._block(el)
        if reason is not None:
            content = dict(content, status=ItemStatus.ANCHOR_MISSING, reason=reason)
        return content

    # -- documented objects ---------------------------------------------------------------

    def _object(self, obj: DocObject, t: TaskEntry) -> dict[str, Any]:
        rendered = self._rendered.get(obj.element)
        if rendered is None:
            rendered = self._rendered[obj.element] = self._render(obj)
            content = rendered
        else:  # shared values: an entry's own copy is of its bounded item (pageitems.py)
            content = dict(rendered)
        content["title"] = self._title(obj)
        content["parent"] = self._parent(obj, t)
        content.pop("inherited_from", None)  # another entry's, of the rendering shared
        content.pop("alias_of", None)
        self._relate(obj, t, content)
        return content

    def _relate(self, obj: DocObject, t: TaskEntry, content: dict[str, Any]) -> None:
        """An entry named otherwise than the object its anchor points at: an inherited
        member (``Sub.method`` at ``#Base.method``: under the class asked for, from the
        class that defines it) or an alias (a re-export, ``pkg.Shape`` at
        ``#pkg.shapes.Shape``, and its members: the target's name). mkdocstrings' ids
        are the objects' paths."""
        ident = obj.ident
        if ident is None or t.domain != "py" or t.name == ident or "." not in t.name:
            return
        prefix, _, last = t.name.rpartition(".")
        content["parent"] = prefix
        owner = obj.parent
        ident_prefix, _, ident_last = ident.rpartition(".")
        if (
            last == ident_last
            and owner is not None
            and owner.kind == "class"
            and prefix.rpartition(".")[2] != ident_prefix.rpartition(".")[2]
        ):
            content["inherited_from"] = self._parent_name(owner) or ident_prefix
        else:
            content["alias_of"] = ident

    def _render(self, obj: DocObject) -> dict[str, Any]:
        content = empty_content(ItemStatus.OK)
        content["labels"] = list(self.labels.get(obj.element, ()))
        sig = signature_text(obj)
        content["signature"] = sig
        contents = obj.contents
        sig_params, hint = params_and_return(sig, bases_only(obj))
        if contents is None:
            merged = merge([], sig_params, hint)
            content["params"], content["returns"] = merged.params, merged.returns
            return content
        items = children_items(contents)
        content["doc"] = self.text.doc(items, True)
        content["doc_markdown"] = self.md.items(items, True)
        merged = merge(self.sections.get(obj.element, []), sig_params, hint)
        content.update(params=merged.params, returns=merged.returns, raises=merged.raises)
        if merged.doc_only:
            content["doc_only_params"] = merged.doc_only
        content["versions"] = versions(contents)
        return content

    def _title(self, obj: DocObject) -> str | None:
        if obj.kind != "module":
            return None
        heading = page_heading(obj.element, self.main)
        if heading is None:
            heading = obj.heading
        return text(heading) or None if heading is not None else None

    def _parent_name(self, obj: DocObject) -> str | None:
        """The inventory name of a documented object (its id when no entry names it)."""
        owner: DocObject | None = obj
        while owner is not None and owner.ident is None:
            owner = owner.parent
        if owner is None or owner.ident is None:
            return None
        return self.names.get(owner.ident) or owner.ident

    def _parent(self, obj: DocObject, t: TaskEntry) -> str | None:
        if obj.parent is not None:
            found = self._parent_name(obj.parent)
            if found is not None:
                return found
        if t.domain == "py" and "." in t.name:
            return t.name.rsplit(".", 1)[0] or None
        return None

    def _parameter(self, el: Element, t: TaskEntry) -> dict[str, Any]:
        """A parameter's own entry (``parameter_headings: true``): its section item's
        description, the parameter as its function's params give it, the function as its
        parent."""
        content = empty_content(ItemStatus.OK)
        item = next((a for a in el.iterancestors() if a.tag in ("li", "tr")), None)
        if item is None:
            return content
        name, type_, default, description = item_entry(item)
        content["title"] = name
        description_el = next(
            (d for d in item.iter("div", "span") if has_class(d, "doc-md-description")), None
        )
        if description_el is not None:
            content["doc"] = self.text.doc([description_el], False)
            content["doc_markdown"] = self.md.items([description_el], False)
        owner = next(
            (self.layout.objects[a] for a in el.iterancestors() if a in self.layout.objects), None
        )
        found = None
        if owner is not None:
            content["parent"] = self._parent_name(owner) or None
            rendered = self._rendered.get(owner.element)
            if rendered is None:
                rendered = self._rendered[owner.element] = self._render(owner)
            found = next(
                (
                    p
                    for p in rendered["params"]
                    if (p["name"] or "").lstrip("*") == (name or "").lstrip("*")
                ),
                None,
            )
        if found is not None:
            content["params"] = [dict(found)]
        elif name:
            content["params"] = [param(name, None, type_, default, description)]
        return content

    # -- plain Markdown -------------------------------------------------------------------

    def _section(self, heading: Element) -> dict[str, Any]:
        """A Markdown heading (a ``std:label`` of the inventory): its section's text without
        the heading, which is the title; documented objects inside are left out."""
        items = section_items(heading)
        content = empty_content(ItemStatus.OK)
        content["doc"] = self.text.doc(items, True)
        content["doc_markdown"] = self.md.items(items, True)
        content["title"] = text(heading) or None
        return content

    def _block(self, el: Element) -> dict[str, Any]:
        """Any other element with the anchor: itself, under the heading it sits below."""
        content = empty_content(ItemStatus.OK)
        content["doc"] = self.text.doc([el], True)
        content["doc_markdown"] = self.md.items([el], True)
        heading = page_heading(el, self.main)
        content["title"] = text(heading) or None if heading is not None else None
        return content

    def _once(
        self, key: str, render: Callable[[], dict[str, Any]], reason: str | None
    ) -> dict[str, Any]:
        """A page-wide content (the whole page, the introduction) rendered once for all
        the entries that get it: 300 missing anchors of one page cost one rendering."""
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = render()
        content = dict(found)  # shared values, as _object's
        if reason is not None:
            content["reason"] = reason
        return content

    def _whole_page(self) -> dict[str, Any]:
        items = children_items(self.main)
        content = empty_content(ItemStatus.OK)
        content["doc"] = self.text.doc(items, False)
        content["doc_markdown"] = self.md.items(items, False)
        first = _FIRST_H1(self.main)
        content["title"] = text(first[0]) or None if first else None
        return content

    def _intro(self) -> dict[str, Any]:
        """The page's prose before its first documented object or second-level heading."""
        intro: list[Element | str] = []
        layout = self.layout
        for item in children_items(self.main):
            if isinstance(item, str):
                intro.append(item)
                continue
            if not isinstance(item.tag, str):
                continue
            if item.tag in HEADINGS:
                if item.tag != "h1":
                    break
                continue
            if item in layout.objects or item in layout.has_members:
                break
            intro.append(item)
        content = empty_content(ItemStatus.ANCHOR_MISSING)
        content["doc"] = truncate(self.text.doc(intro, True), INTRO_CHARS)
        content["doc_markdown"] = truncate(self.md.items(intro, True), INTRO_CHARS, markdown=True)
        return content


_LEAF_TAGS = ("p", "td", "th", *HEADINGS)


def _leaves(main: Element) -> list[Element]:
    """Paragraphs, headings and table cells without blocks inside (a section table's name,
    type and default cells; its description cells hold a div of paragraphs)."""
    out = []
    for el in main.iter(_LEAF_TAGS):
        if el.tag in ("td", "th") and has_block_child(el):
            continue
        out.append(el)
    return out
