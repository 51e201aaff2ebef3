"""Pure HTML extraction: one content dict per ``objects.inv`` entry of a page.

No network, no Redis, no Scrapy: bytes in, dicts out. The page is parsed once; every entry is
resolved through an id index built once (see ``page.py``); bodies are rendered through a per-page
memo so nested bodies (std:doc ⊃ section ⊃ class ⊃ method) are converted once.
See docs/extraction.md for the decisions and measurements.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .anchors import Located, children_items, locate, section_title
from .fields import parse_fields
from .markdown import Markdown
from .page import Page, build, parse
from .signature import dt_text, params, return_annotation
from .text import HEADINGS, Element, has_class, is_section, norm, raw_text, text
from .versions import versions

__all__ = ["Target", "extract_page"]


@dataclass(frozen=True, slots=True)
class Target:
    """One inventory entry on the page; ``anchor`` as written after ``$`` expansion ("" for
    std:doc)."""

    name: str
    domain: str
    role: str
    anchor: str
    dispname: str


_CAPTIONS = frozenset(("figcaption", "caption"))


def _empty(status: str, reason: str | None) -> dict[str, Any]:
    return {
        "status": status,
        "reason": reason,
        "signature": None,
        "title": None,
        "parent": None,
        "doc": None,
        "doc_markdown": None,
        "params": [],
        "returns": None,
        "raises": [],
        "versions": [],
    }


def extract_page(
    body: bytes, url: str, targets: Sequence[Target], encoding: str | None = None
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order."""
    if not targets:
        return []
    # Extraction allocates many short-lived containers and creates no reference cycles, so the
    # cyclic GC has nothing to find; left enabled, its full passes over the host process's heap
    # (a Scrapy consumer holds a lot) land inside this call and cost more than the work itself.
    # The pause is deferred to after the call, not skipped; an app that disabled GC keeps it off.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        root = parse(body, encoding)
        if root is None:
            return [_empty("anchor_missing", "page is empty or not HTML") for _ in targets]
        extractor = _PageExtractor(build(root, url, body), url, targets)
        return [extractor.extract(t) for t in targets]
    finally:
        if gc_was_enabled:
            gc.enable()


class _PageExtractor:
    def __init__(self, page: Page, url: str, targets: Sequence[Target]) -> None:
        self.page = page
        self.signatures: dict[Element, str | None] = {}
        self.md = Markdown(url, page.members, page.has_members, self.signatures)
        # anchor → inventory name, to name the enclosing object of nested members. Parameter
        # entries share their function's anchor, so they must not claim it.
        self.names: dict[str, str] = {}
        for t in targets:
            if t.anchor and not t.role.endswith("Param"):
                self.names.setdefault(t.anchor, t.name)
        self._content: dict[tuple[str, bool], dict[str, Any]] = {}
        self._lower: dict[str, Element] | None = None

    # -- per entry ----------------------------------------------------------------------------

    def extract(self, t: Target) -> dict[str, Any]:
        page = self.page
        status, reason = "ok", None
        if not t.anchor:
            loc = Located("page", page.main, body=[page.main])
        else:
            el, _ = page.lookup(t.anchor)
            if el is None:
                el, reason = self._fallback(t)
                status = "anchor_missing"
            loc = (
                locate(el, page.main)
                if el is not None
                else Located("page", page.main, body=[page.main])
            )
        exclude = loc.kind in ("object", "term") or t.role == "module"
        key = (t.anchor if status == "ok" else "\x00" + t.anchor, exclude)
        content = self._content.get(key)
        if content is None:
            content = self._content[key] = self._render(loc, t, exclude)
        out = dict(content)
        out["params"] = [dict(p) for p in content["params"]]
        out["status"], out["reason"] = status, reason
        out["title"] = self._title(loc, t)
        out["parent"] = self._parent(loc, t)
        return out

    def _fallback(self, t: Target) -> tuple[Element | None, str]:
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
        return None, why + "; content is the whole page (e.g. one object per page)"

    def _render(self, loc: Located, t: Target, exclude: bool) -> dict[str, Any]:
        content = _empty("ok", None)
        body = loc.body
        if loc.kind == "token":
            line = _production(loc.element)
            content.update(signature=line, doc=line, doc_markdown=f"```\n{line}\n```")
            return content
        content["doc"] = self._text(body, exclude)
        content["doc_markdown"] = self.md.items(body, exclude)
        if loc.kind == "object":
            dt = loc.element
            lines = [self.md.signature(dt) for dt in loc.dts]
            content["signature"] = "\n".join(line for line in lines if line) or None
            sig_params = params(dt, t.domain)
            ps, returns, raises = parse_fields(body, sig_params, return_annotation(dt))
            content.update(params=ps, returns=returns, raises=raises)
        if loc.kind in ("object", "term", "span"):
            content["versions"] = versions(body)
        elif loc.kind == "section" and loc.section is not None:
            content["versions"] = versions(children_items(loc.section))
        elif loc.kind == "page":
            main = self.page.main
            top = [c for c in main if isinstance(c.tag, str)]
            holder = top[0] if len(top) == 1 and is_section(top[0]) else main
            content["versions"] = versions(children_items(holder))
        return content

    # -- text ---------------------------------------------------------------------------------

    def _text(self, items: list[Element | str], exclude: bool) -> str:
        parts: list[str] = []
        for item in items:
            if isinstance(item, str):
                parts.append(item)
            else:
                # Sibling blocks are not always separated by whitespace in the source
                # (CPython C-API dds: "<em>…</em><p>…"); libxml2's text output would glue them.
                parts.append("\n")
                self._text_el(item, exclude, parts)
                parts.append("\n")
        return norm("".join(parts))

    def _text_el(self, el: Element, exclude: bool, parts: list[str]) -> None:
        page = self.page
        if exclude and el in page.members:
            return
        if not exclude or el not in page.has_members:
            parts.append(raw_text(el))  # one C call for the whole subtree
            return
        if el.text:
            parts.append(el.text)
        for child in el:
            if isinstance(child.tag, str):
                parts.append("\n")
                self._text_el(child, exclude, parts)
            if child.tail:
                parts.append(child.tail)

    # -- title and parent ---------------------------------------------------------------------

    def _title(self, loc: Located, t: Target) -> str | None:
        kind = loc.kind
        if kind == "page":
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

    def _parent(self, loc: Located, t: Target) -> str | None:
        if t.role.endswith("Param"):  # c:functionParam, cpp:templateParam → the function
            return _prefix(t.name, t.domain)
        if loc.kind == "object":
            owner = _owner_dt(loc.element)
            if owner is not None:
                ident = owner.get("id")
                name = self.names.get(ident) if ident else None
                return name or _dt_name(owner) or ident
            return _prefix(t.name, t.domain)
        if t.role == "module":
            return _prefix(t.name, t.domain)
        return None


def _prefix(name: str, domain: str) -> str | None:
    sep = "::" if domain == "cpp" else "."
    if domain not in ("py", "c", "cpp", "js") or sep not in name:
        return None
    head = name.rsplit(sep, 1)[0]
    return head or None


def _owner_dt(dt: Element) -> Element | None:
    """The dt of the object whose dd contains this description (class of a method)."""
    dl = dt.getparent()
    dd = dl.getparent() if dl is not None else None
    if dd is None or dd.tag != "dd":
        return None
    prev = dd.getprevious()
    owner = None
    while prev is not None and prev.tag == "dt":
        if prev.get("id") or owner is None:
            owner = prev
        prev = prev.getprevious()
    parent_dl = dd.getparent()
    if (
        owner is None
        or parent_dl is None
        or has_class(parent_dl, "field-list")
        or has_class(parent_dl, "glossary")
    ):
        return None
    return owner


def _dt_name(dt: Element) -> str | None:
    parts = [
        text(el)
        for el in dt.iter("span", "code")
        if has_class(el, "sig-prename")
        or has_class(el, "descclassname")
        or has_class(el, "sig-name")
        or has_class(el, "descname")
    ]
    name = "".join(parts).strip()
    return name or None


def _page_title(main: Element) -> str | None:
    """The first h1 (else the first heading) not in sphinx-book-theme's print-only copy."""
    for tags in (("h1",), HEADINGS):
        for h in main.iter(*tags):
            if any(has_class(a, "onlyprint") for a in h.iterancestors()):
                continue
            return text(h) or None
    return None


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
