"""The ``parent`` of a Sphinx entry: the object whose description encloses it, named as
the inventory names it, or the prefix of its own name (docs/items.md)."""

from __future__ import annotations

from invcrawl.common.tasks import TaskEntry

from .anchors import Located
from .text import Element, has_class, text

__all__ = ["parent_of"]


def parent_of(loc: Located, t: TaskEntry, names: dict[str, list[str]]) -> str | None:
    """``t``'s parent; ``names``: anchor → the inventory names at it."""
    if t.role.endswith("Param"):  # c:functionParam, cpp:templateParam → the function
        return _prefix(t.name, t.domain)
    if loc.kind == "object":
        owner = _owner_dt(loc.element)
        if owner is not None:
            ident = owner.get("id")
            known = names.get(ident, []) if ident else []
            name = _owner_name(known, t) or _dt_name(owner) or ident
            # The enclosing description names something the entry's name is not under
            # (Django's ``models.Group`` written without its module and without an id,
            # cryptography's CMAC.finalize indented into CMAC.verify): the parent is
            # what the name says, as a reader of ``django.contrib.auth.models.Group.name``
            # expects.
            prefix = _prefix(t.name, t.domain)
            sep = "::" if t.domain == "cpp" else "."
            if prefix and name and not t.name.startswith(name + sep):
                return prefix
            return name
        return _prefix(t.name, t.domain)
    if t.role == "module":
        return _prefix(t.name, t.domain)
    return None


def _owner_name(names: list[str], t: TaskEntry) -> str | None:
    """Of the names the owner's anchor has, the one ``t``'s name is under, else the first."""
    sep = "::" if t.domain == "cpp" else "."
    for name in names:
        if t.name.startswith(name + sep):
            return name
    return names[0] if names else None


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
