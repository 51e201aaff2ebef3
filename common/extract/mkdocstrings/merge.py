"""A docstring's sections merged with the signature into the item's ``params``,
``doc_only_params``, ``returns`` and ``raises``."""

from __future__ import annotations

from typing import Any

from invcrawl.common.params import VAR_KEYWORD, VAR_POSITIONAL, field_names, param

from ..fields import DocFields
from .sections import Section

_VARIADIC = frozenset((VAR_POSITIONAL, VAR_KEYWORD))


# -- into the item's fields -------------------------------------------------------------


def _bare(name: str | None) -> str:
    return (name or "").lstrip("*").strip()


def merge(
    sections: list[Section], sig_params: list[dict[str, Any]] | None, hint: str | None
) -> DocFields:
    """The signature's parameters completed by the Parameters sections (type and default
    where the signature shows none, the description); every return value, typed by the
    annotation when the section is not. ``sig_params`` None: the page shows no parameter
    list (a class heading without ``__init__``'s), so the documented names are the
    parameters (kind None); otherwise a documented name the signature lacks (a copied
    docstring, a renamed argument, a key of ``**kwargs``) is no parameter of the call but
    one of ``doc_only``."""
    shown = sig_params is not None
    params = [dict(p) for p in sig_params or ()]
    by_name = {_bare(p["name"]): p for p in params if p["name"]}
    doc_only: list[dict[str, Any]] = []
    returns: list[dict[str, Any]] = []
    raises: list[dict[str, Any]] = []
    for section in sections:
        if section.kind == "params":
            for name, type_, default, description in section.entries:
                names, written = field_names(name) if name else ([], None)
                for part in names:
                    p = by_name.get(_bare(part))
                    if p is None:
                        if shown:
                            doc_only.append({"name": part, "description": description})
                            continue
                        p = param(part, None)
                        params.append(p)
                        by_name[_bare(part)] = p
                    p["type"] = p["type"] or type_ or written
                    if p["kind"] not in _VARIADIC:  # griffe shows () and {} for them
                        p["default"] = p["default"] or default
                    p["description"] = description or p["description"]
        elif section.kind in ("returns", "rtype"):
            for name, type_, _default, description in section.entries:
                returns.append({"name": name, "type": type_, "description": description})
        elif section.kind == "raises":
            for name, type_, _default, description in section.entries:
                raises.append({"type": type_ or name, "description": description})
    if hint and not any(r["type"] for r in returns):
        unnamed = next((r for r in returns if r["name"] is None), None)
        if unnamed is None:
            unnamed = {"name": None, "type": None, "description": None}
            returns.append(unnamed)
        unnamed["type"] = hint
    return DocFields(params, doc_only, returns, raises)
