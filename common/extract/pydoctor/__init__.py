"""pydoctor pages (22.x and 25.x templates): one content dict per ``objects.inv`` entry.

A pydoctor page documents one module or class: its qualified name in ``div.page-header``'s
``h1``, a class's signature line in ``div.extrasDocstring``, the page's own docstring in
``div.moduleDocstring``, summary tables (``#split-tables``), then one ``div.base<kind>``
per member (``#child-list``) holding ``<a name>`` targets, ``div.functionHeader`` and
``div.functionBody``. Module and class entries have no fragment: they take the page's
docstring, never its navigation, search box or summary tables. See docs/extraction.md,
"pydoctor".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from invcrawl.common.bounds import truncate
from invcrawl.common.items import ItemStatus, empty_content
from invcrawl.common.tasks import TaskEntry

from ..anchors import children_items
from ..doctext import DocText
from ..markdown import Markdown
from ..page import Page
from ..text import Element, has_class, norm, raw_text
from .clean import clean
from .fields import FieldRow, apply_fields, as_field_lists, merge_fields, read_fields, version_notes
from .header import (
    Header,
    call_params,
    class_signature,
    constructor_params,
    labels_of,
    member_kind,
    signature_text,
)

__all__ = ["extract_pydoctor", "pydoctor_main"]

# As the Sphinx extractor: an entry whose fragment is missing gets at most this much of
# the page's docstring (docs/items.md, size bounds).
INTRO_CHARS = 2000
# A value (``table.valueTable``) this short on one line joins the attribute's signature.
VALUE_CHARS = 100
# Inventory roles whose entry is a class page (its signature line and constructor).
_CLASS_ROLES = frozenset(("class", "exception", "interface"))


def pydoctor_main(root: Element) -> Element | None:
    """pydoctor 25's ``<main>``, pydoctor 22's ``div#main``."""
    for el in root.iter("main", "div"):
        if el.tag == "main" or el.get("id") == "main":
            return el
    return None


def extract_pydoctor(
    root: Element, body: bytes, url: str, targets: Sequence[TaskEntry]
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order, from a parsed pydoctor page."""
    page = _Page(root, url, body)
    return [page.extract(t) for t in targets]


def _first_class(el: Element | None, tag: str, name: str) -> Element | None:
    if el is None:
        return None
    for child in el.iter(tag):
        if has_class(child, name):
            return child
    return None


class _Page:
    def __init__(self, root: Element, url: str, raw: bytes) -> None:
        main = pydoctor_main(root)
        if main is None:
            body = root.find("body")
            main = body if body is not None else root
        self.main = main
        self.index = Page(root=root, main=main, url=url, has_members=set(), members=set())
        clean(main, raw)
        self.text = DocText(main, set(), set())
        self.md = Markdown(url, set(), set(), text=self.text)
        header = _first_class(main, "div", "page-header")
        h1 = header.find(".//h1") if header is not None else None
        # (a qualified name has no blank: the template's line breaks are not part of it)
        self.qualname = "".join(raw_text(h1).split()) or None if h1 is not None else None
        self.docstring = _first_class(main, "div", "moduleDocstring")
        self.extras = _first_class(main, "div", "extrasDocstring")
        self._page_content: dict[str, Any] | None = None
        self._doc_rows: list[FieldRow] = []  # the page docstring's field entries
        self._members: dict[Element, dict[str, Any]] = {}

    # -- entries ---------------------------------------------------------------------------

    def extract(self, t: TaskEntry) -> dict[str, Any]:
        if not t.anchor:
            out = self._whole(t)
            out["title"] = self.qualname
            out["parent"] = _prefix(t.name)
            return out
        # pydoctor's targets are <a name>s; pydoctor 22's layout has a div#main, which a
        # browser would take for a member named "main" (an id wins over a name).
        el = self.index.named_a(t.anchor)
        if el is None:
            el = self.index.fragment(t.anchor)
        if el is None:
            out = self._intro(f"anchor {t.anchor!r} not found on page")
            out["parent"] = self._parent(t)
            return out
        member = _member_of(el)
        if member is None:  # a target outside the member list: what follows it
            out = empty_content(ItemStatus.OK)
            items = _following(el)
            out["doc"] = self.text.doc(items, False)
            out["doc_markdown"] = self.md.items(items, False)
        else:
            out = self._member_copy(member)
        out["parent"] = self._parent(t)
        return out

    def _member_copy(self, div: Element) -> dict[str, Any]:
        """The member's content, rendered once per member (its full and short names are
        two targets of one div; a class's constructor is read again for the class)."""
        content = self._members.get(div)
        if content is None:
            content = self._members[div] = self._member(div)
        return dict(content)  # shared values: each entry's copy is made bounded (pageitems.py)

    def _parent(self, t: TaskEntry) -> str | None:
        if self.qualname and t.name.startswith(self.qualname + "."):
            return self.qualname
        return _prefix(t.name)

    def _member(self, div: Element) -> dict[str, Any]:
        out = empty_content(ItemStatus.OK)
        header = next((c for c in div if has_class(c, "functionHeader")), None)
        body = next((c for c in div if has_class(c, "functionBody")), None)
        items: list[Element | str] = []
        tables: list[Element] = []
        value = None
        if body is not None:
            for item in children_items(body):
                if isinstance(item, str):
                    items.append(item)
                elif has_class(item, "interfaceinfo"):
                    continue  # "overrides ...", "overridden in ...": navigation
                elif has_class(item, "valueTable"):
                    value = item
                    items.append(item)
                else:
                    items.append(item)
            tables = [t for t in body.iter("table") if has_class(t, "fieldTable")]
        sig_params: list[dict[str, Any]] | None = None
        hint = None
        if header is not None:
            # pydoctor 25 writes each @overload of a function in a div of its own: the
            # signatures joined by line breaks (as Sphinx's several dts), the return
            # annotation of the first, the parameters of them all (each name once, as
            # the first overload naming it gives it)
            # (pydoctor 23 and 24: a plain div per overload, the decorators as text)
            overloads = [c for c in header if has_class(c, "function-overload")]
            plain = [] if overloads else _plain_overloads(header)
            headers = [Header.read(o) for o in overloads or plain] or [Header.read(header)]
            parts = headers[0]
            out["labels"] = labels_of(Header.read(header) if plain else parts, member_kind(div))
            lines = [signature_text(h) for h in headers]
            sig = "\n".join(line for line in lines if line) or None
            sig_params, hint = _overload_params(headers, lines)
            shown = _value_line(value)
            if sig and shown is not None:
                sig = f"{sig} = {shown}"
                items = [i for i in items if i is not value]
            out["signature"] = sig
        fields = apply_fields(tables, sig_params, hint)
        as_field_lists(tables)
        out.update(params=fields.params, returns=fields.returns, raises=fields.raises)
        if fields.doc_only:
            out["doc_only_params"] = fields.doc_only
        out["versions"] = (version_notes(body) if body is not None else []) + fields.versions
        out["doc"] = self.text.doc(items, False)
        out["doc_markdown"] = self.md.items(items, False)
        return out

    def _whole(self, t: TaskEntry) -> dict[str, Any]:
        """A module or class entry: the page's own docstring (and a class's signature line
        and constructor parameters)."""
        out = self._docstring_content()
        if t.role in _CLASS_ROLES:
            line = self._class_line()
            out["signature"] = class_signature(line) if line is not None else None
            # the constructor's parameters, described by the class docstring's fields
            # where its own docstring does not (how most libraries document them)
            init = self._constructor()
            fields = merge_fields(self._doc_rows, init["params"] if init else None, None)
            out["params"] = fields.params
            out["raises"] = fields.raises + [
                r for r in (init["raises"] if init else []) if r not in fields.raises
            ]
            if fields.doc_only:
                out["doc_only_params"] = fields.doc_only
        return out

    def _docstring_content(self) -> dict[str, Any]:
        """The page's docstring (``div.moduleDocstring``) as content, rendered once."""
        if self._page_content is None:
            out = empty_content(ItemStatus.OK)
            doc = self.docstring
            items = children_items(doc) if doc is not None else []
            tables = (
                [] if doc is None else [x for x in doc.iter("table") if has_class(x, "fieldTable")]
            )
            self._doc_rows = read_fields(tables)
            added = merge_fields(self._doc_rows, None, None).versions
            out["versions"] = (version_notes(doc) if doc is not None else []) + added
            as_field_lists(tables)
            out["doc"] = self.text.doc(items, False)
            out["doc_markdown"] = self.md.items(items, False)
            self._page_content = out
        return dict(self._page_content)  # shared values, as _member_copy's

    def _class_line(self) -> Element | None:
        """25: ``p.class-signature``; 22: the first ``p`` whose ``code`` starts with the
        ``class`` keyword."""
        extras = self.extras
        if extras is None:
            return None
        for p in extras.iter("p"):
            if has_class(p, "class-signature"):
                return p
            code = p.find("code")
            if code is not None and (
                _first_class(code, "span", "py-keyword") is not None and not (p.text or "").strip()
            ):
                return code
        return None

    def _constructor(self) -> dict[str, Any] | None:
        """The page's ``__init__``: its parameters as a caller passes them (its header's
        and its field table's: pydoctor 22 shows no annotation in the header) and its
        raises; None when the page documents none."""
        el = self.index.named_a("__init__")
        member = _member_of(el) if el is not None else None
        if member is None:
            return None
        content = self._member_copy(member)
        return {"params": constructor_params(content["params"]), "raises": content["raises"]}

    def _intro(self, reason: str) -> dict[str, Any]:
        out = self._docstring_content()
        out["status"] = ItemStatus.ANCHOR_MISSING
        out["reason"] = reason + "; content is the page's docstring"
        out["doc"] = truncate(out["doc"], INTRO_CHARS)
        out["doc_markdown"] = truncate(out["doc_markdown"], INTRO_CHARS, markdown=True)
        out["title"] = self.qualname
        return out


def _overload_params(
    headers: list[Header], lines: list[str | None]
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The parameters of the header's signatures (None when none shows a parameter list)
    and the first one's return annotation."""
    params: list[dict[str, Any]] | None = None
    hint = None
    for i, (header, line) in enumerate(zip(headers, lines, strict=True)):
        found, returns = call_params(header, line)
        if i == 0:
            hint = returns
        if not found and not _shows_call(header, line):
            continue
        if params is None:
            params = found
            continue
        known = {p["name"] for p in params}
        params.extend(p for p in found if p["name"] not in known)
    return params, hint


def _plain_overloads(header: Element) -> list[Element]:
    """The overloads of a header that writes each in a ``div`` of its own, without a class
    (pydoctor 23, 24): two or more divs, each with its name."""
    divs = [
        c
        for c in header
        if c.tag == "div" and any(has_class(s, "py-defname") for s in c.iter("span"))
    ]
    return divs if len(divs) > 1 else []


def _shows_call(header: Header, line: str | None) -> bool:
    """Whether the header's signature has a parameter list after the name."""
    name = header.defname
    if name is None or not line:
        return False
    return line[len(norm(raw_text(name))) :].startswith("(")


def _member_of(el: Element) -> Element | None:
    """The member div an ``<a name>`` target belongs to (its parent, with a header)."""
    parent = el.getparent()
    if parent is None or parent.tag != "div":
        return None
    for child in parent:
        if child.tag == "div" and has_class(child, "functionHeader"):
            return parent
    return None


def _following(el: Element) -> list[Element | str]:
    """A target's element and what follows it, up to the next target (``<a name>``) or
    member: never the rest of the page for every such entry."""
    items: list[Element | str] = [el] if len(el) or (el.text or "").strip() else []
    for sib in el.itersiblings():
        if (sib.tag == "a" and sib.get("name")) or _member_of_div(sib):
            break
        items.append(sib)
    return items


def _member_of_div(el: Element) -> bool:
    return el.tag == "div" and any(c.tag == "div" and has_class(c, "functionHeader") for c in el)


def _value_line(table: Element | None) -> str | None:
    """The value of a ``table.valueTable`` when it is one short line."""
    if table is None:
        return None
    pre = next(iter(table.iter("pre")), None)
    if pre is None:
        return None
    value = raw_text(pre).strip()
    if not value or "\n" in value or len(value) > VALUE_CHARS:
        return None
    return value


def _prefix(name: str) -> str | None:
    return name.rsplit(".", 1)[0] if "." in name else None
