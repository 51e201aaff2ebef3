"""pydoctor's field tables (``table.fieldTable``) and version notes → ``params``,
``returns``, ``raises`` and ``versions``, in the shapes of Sphinx items (fields.py,
versions.py).

pydoctor 22 writes one table per docstring, each field opening with a ``tr.fieldStart``
row (``td.fieldName``: "Parameters", "Returns", "Raises", "Present Since"...), its entries
in the rows after it; pydoctor 25 writes one table per field, same rows. An entry is
``td.fieldArgContainer`` (``span.fieldArg`` "name:" and a ``code`` type) and
``td.fieldArgDesc``; pydoctor writes "Undocumented" (``.undocumented``) where the
docstring says nothing, which is no description. Labels are pydoctor's own and never
translated.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from invcrawl.common.params import field_names, param

from ..fields import DocFields
from ..text import Element, class_tokens, has_class, norm, raw_text

_KINDS = {
    "parameters": "params",
    "keyword parameters": "params",
    "keyword arguments": "params",
    "arguments": "params",
    "returns": "returns",
    "yields": "returns",
    "return": "returns",
    "raises": "raises",
    "present since": "added",
}
# The classes of the version notes of reStructuredText docstrings (pydoctor's docutils
# writer prefixes docutils' classes with "rst-"), and the kind of each.
_VERSION_KINDS = {
    "rst-versionadded": "added",
    "rst-versionchanged": "changed",
    "rst-deprecated": "deprecated",
    "rst-versionremoved": "removed",
}
_VERSION = re.compile(r"\d+(?:\.\d+)*(?:[a-z]+\d*)?")


def _text(el: Element | None) -> str | None:
    """Text of a cell, None when empty or pydoctor's "Undocumented"."""
    if el is None:
        return None
    if has_class(el, "undocumented") or (
        len(el) == 1 and has_class(el[0], "undocumented") and not (el.text or "").strip()
    ):
        return None
    value = norm(raw_text(el))
    return value or None


def field_rows(tables: list[Element]) -> list[tuple[str, Element]]:
    """(label, entry row) of every field entry, in the page's order."""
    out: list[tuple[str, Element]] = []
    for table in tables:
        label = ""
        for tr in table.iter("tr"):
            if has_class(tr, "fieldStart"):
                name = next((td for td in tr if has_class(td, "fieldName")), None)
                label = norm(raw_text(name)).lower() if name is not None else ""
            elif label:
                out.append((label, tr))
    return out


def _entry(tr: Element) -> tuple[str | None, str | None, str | None, Element | None]:
    """(name, type, description, the whole cell when it spans both columns) of a row."""
    container = desc = None
    cells = [td for td in tr if td.tag == "td"]
    for td in cells:
        if has_class(td, "fieldArgContainer"):
            container = td
        elif container is not None and desc is None:
            desc = td
    if container is None:
        whole = cells[0] if cells else None
        return None, None, _text(whole), whole
    arg = next((s for s in container.iter("span") if has_class(s, "fieldArg")), None)
    arg_text = norm(raw_text(arg)) if arg is not None else ""
    name = arg_text.rstrip(":").strip() or None
    # the type: a code element, or plain text after the name (reStructuredText ":type:")
    whole = norm(raw_text(container))
    type_ = whole[len(arg_text) :].strip() if whole.startswith(arg_text) else whole
    return name, type_ or None, _text(desc), None


# (label, (name, type, description, whole cell)) of one field entry.
FieldRow = tuple[str, tuple[str | None, str | None, str | None, Element | None]]


def read_fields(tables: list[Element]) -> list[FieldRow]:
    """Every field entry of the tables, read (before ``as_field_lists`` rewrites them)."""
    return [(label, _entry(tr)) for label, tr in field_rows(tables)]


def apply_fields(
    tables: list[Element], sig_params: list[dict[str, Any]] | None, return_hint: str | None
) -> DocFields:
    """:func:`merge_fields` of the tables' entries."""
    return merge_fields(read_fields(tables), sig_params, return_hint)


def merge_fields(
    rows: list[FieldRow], sig_params: list[dict[str, Any]] | None, return_hint: str | None
) -> DocFields:
    """A docstring's field tables merged with the header's parameters and return
    annotation. ``sig_params`` None: no parameter list is shown (a class page without a
    constructor), so the documented names are the parameters (kind None); otherwise a
    documented name the header lacks is one of ``doc_only``, no parameter of the call."""
    shown = sig_params is not None
    params = [dict(p) for p in sig_params or ()]
    by_name = {(p["name"] or "").lstrip("*"): p for p in params if p["name"]}
    doc_only: list[dict[str, Any]] = []
    returns: list[dict[str, Any]] = []
    raises: list[dict[str, Any]] = []
    versions: list[dict[str, Any]] = []
    for label, (name, type_, desc, whole) in rows:
        kind = _KINDS.get(label)
        if kind is None:
            continue
        if kind == "params" and name:
            names, written = field_names(name)
            for part in names:
                key = part.lstrip("*")
                p = by_name.get(key)
                if p is None:
                    if shown:
                        doc_only.append({"name": part, "description": desc})
                        continue
                    p = by_name[key] = param(part, None)
                    params.append(p)
                p["type"] = p["type"] or type_ or written
                p["description"] = p["description"] or desc
        elif kind == "returns":
            returns.append({"name": None, "type": type_, "description": desc})
        elif kind == "raises":
            raises.append({"type": type_ or name, "description": desc})
        elif kind == "added" and (desc or whole is not None):
            versions.append(_version("added", desc or ""))
    if return_hint and not any(r["type"] for r in returns):
        if returns:
            returns[0]["type"] = return_hint
        else:
            returns.append({"name": None, "type": return_hint, "description": None})
    return DocFields(params, doc_only, returns, raises, versions)


def _version(kind: str, text: str) -> dict[str, Any]:
    match = _VERSION.search(text)
    if match is None:
        return {"kind": kind, "version": None, "text": text}
    rest = (text[: match.start()] + text[match.end() :]).strip(" .:,")
    return {"kind": kind, "version": match.group(0), "text": rest}


def version_notes(body: Element) -> list[dict[str, Any]]:
    """The ``.. versionadded::``/``versionchanged``/``deprecated`` notes of a docstring
    (``div.rst-versionadded``...), and the deprecations of pydoctor's deprecate
    extension (the same markup), in the page's order."""
    out: list[dict[str, Any]] = []
    for div in body.iter("div"):
        kind = next((_VERSION_KINDS[t] for t in class_tokens(div) if t in _VERSION_KINDS), None)
        if kind is None:
            continue
        lead = next((s for s in div.iter("span") if has_class(s, "rst-versionmodified")), None)
        whole = norm(raw_text(div))
        lead_text = norm(raw_text(lead)) if lead is not None else ""
        match = _VERSION.search(lead_text or whole)
        version = match.group(0) if match else None
        rest = whole[len(lead_text) :] if lead_text and whole.startswith(lead_text) else whole
        if not lead_text and match is not None:
            rest = whole[match.end() :]
        out.append({"kind": kind, "version": version, "text": rest.lstrip(" .:,").strip()})
    return out


def as_field_lists(tables: list[Element]) -> None:
    """Rewrite each field table in place as the field list Sphinx writes (``dl.field-list``:
    the field's name in a ``dt``, its entries as ``<strong>name</strong> (type) – text``
    list items in the ``dd``), so that ``doc`` and ``doc_markdown`` read as a Sphinx item's
    (``- **name** (`type`) – text``) instead of table cells glued together."""
    for table in tables:
        parent = table.getparent()
        if parent is None:
            continue
        dl = etree.Element("dl", {"class": "field-list simple"})
        dl.text = "\n"
        current: Element | None = None
        for tr in list(table.iter("tr")):
            if has_class(tr, "fieldStart"):
                name = next((td for td in tr if has_class(td, "fieldName")), None)
                dt = etree.SubElement(dl, "dt")
                dt.text = (norm(raw_text(name)) if name is not None else "") + ":"
                dt.tail = "\n"
                dd = etree.SubElement(dl, "dd")
                dd.tail = "\n"
                current = etree.SubElement(dd, "ul", {"class": "simple"})
                current.text = "\n"
            elif current is not None:
                _entry_item(tr, current)
        for ul in dl.iter("ul"):
            _unwrap_single(ul)
        dl.tail = table.tail
        parent.replace(table, dl)


def _entry_item(tr: Element, ul: Element) -> None:
    li = etree.SubElement(ul, "li")
    li.tail = "\n"
    p = etree.SubElement(li, "p")
    cells = [td for td in tr if td.tag == "td"]
    container = next((td for td in cells if has_class(td, "fieldArgContainer")), None)
    if container is None:  # a field of prose ("Present Since", "Note"): the cell as is
        if cells:
            _move_content(cells[0], p)
        return
    arg = next((s for s in container.iter("span") if has_class(s, "fieldArg")), None)
    desc = next((td for td in cells if td is not container), None)
    kind = etree.SubElement(p, "span")  # the type: what the container holds besides the name
    if arg is not None:
        kind.text = (arg.tail or "").lstrip() or None
        for sib in list(arg.itersiblings()):
            kind.append(sib)
        strong = etree.Element("strong")
        strong.text = norm(raw_text(arg)).rstrip(":").strip()
        p.insert(0, strong)
        if len(kind) or (kind.text or "").strip():
            strong.tail = " ("
            kind.tail = ")"
        else:
            p.remove(kind)
    else:
        _move_content(container, kind)
    last = p[-1] if len(p) else None
    if desc is not None and (len(desc) or (desc.text or "").strip()):
        if last is not None:
            last.tail = (last.tail or "") + " \u2013 "
        span = etree.SubElement(p, "span")
        _move_content(desc, span)


def _move_content(src: Element, dst: Element) -> None:
    dst.text = src.text
    for child in list(src):
        dst.append(child)


def _unwrap_single(ul: Element) -> None:
    """A field of one entry is a paragraph, as Sphinx writes it (no one-item list)."""
    items = [li for li in ul if li.tag == "li"]
    if len(items) != 1:
        return
    dd = ul.getparent()
    if dd is None:
        return
    para = items[0][0]
    para.tail = "\n"
    dd.replace(ul, para)


__all__ = [
    "FieldRow",
    "apply_fields",
    "as_field_lists",
    "field_rows",
    "merge_fields",
    "read_fields",
    "version_notes",
]
