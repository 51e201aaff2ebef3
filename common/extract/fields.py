"""Field lists in an object body → params / returns / raises.

Shapes: html5 ``dl.field-list`` (colon as ``span.colon`` since docutils 0.18,
CSS before), html4 ``table.field-list`` (Sphinx <= 1.8), numpydoc (a nested ``dl`` without ids
inside the field body, ``span.classifier`` for types), napoleon (Google style is converted to
ordinary Sphinx fields, so it needs nothing special).

Field labels are translated ("Paramètres", "参数"), so a field's meaning comes from a small
multilingual label table *and*, when the label is unknown, from structure: item names that match
the signature's parameters make a Parameters field; exception-looking item names make Raises;
the first unnamed field after the parameters is Returns and a short one after that Return type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.params import field_names, param

from .text import Element, has_class, norm, text


@dataclass(slots=True)
class DocFields:
    """What a docstring's fields (mkdocstrings' sections, pydoctor's field tables) say,
    merged with the signature's parameters."""

    params: list[dict[str, Any]]
    doc_only: list[dict[str, Any]]  # {name, description}: documented, not in the signature
    returns: list[dict[str, Any]]
    raises: list[dict[str, Any]]
    versions: list[dict[str, Any]] = field(default_factory=list)  # pydoctor's version fields


_LABELS: dict[str, tuple[str, ...]] = {
    "params": (
        "parameters",
        "parameter",
        "params",
        "param",
        "arguments",
        "argument",
        "args",
        "keyword arguments",
        "other parameters",
        "paramètres",
        "paramètre",
        "parámetros",
        "parâmetros",
        "parametri",
        "parametre",
        "parameter",
        "параметры",
        "参数",
        "引数",
        "パラメータ",
        "매개변수",
        "인자",
    ),
    "returns": (
        "returns",
        "return",
        "return value",
        "yields",
        "retourne",
        "renvoie",
        "devuelve",
        "retorna",
        "retorno",
        "restituisce",
        "ritorna",
        "rückgabe",
        "rückgabewert",
        "возвращает",
        "返回",
        "戻り値",
        "返り値",
        "반환",
        "반환값",
    ),
    "rtype": (
        "return type",
        "rtype",
        "yield type",
        "type de retour",
        "tipo de retorno",
        "tipo devuelto",
        "tipo restituito",
        "rückgabetyp",
        "тип результата",
        "тип возвращаемого значения",
        "返回类型",
        "戻り値の型",
        "返り値の型",
        "반환 형식",
        "반환 타입",
    ),
    "raises": (
        "raises",
        "raise",
        "exceptions",
        "exception",
        "throws",
        "lève",
        "lève des",
        "exceptions levées",
        "lanza",
        "genera",
        "solleva",
        "lança",
        "exceções",
        "löst aus",
        "исключения",
        "引发",
        "抛出",
        "例外",
        "발생",
    ),
}
_LABEL_KIND = {label: kind for kind, labels in _LABELS.items() for label in labels}


def field_kind(label: str) -> str | None:
    """What a field's (translated) label names: ``params``, ``returns``, ``rtype`` or
    ``raises``; None for a label not in the table. Other generators' section titles are
    the same words (mkdocstrings' "Parameters:", its spacy layout's "PARAMETER")."""
    return _LABEL_KIND.get(norm(label).rstrip(":").strip().lower())


_EXC_NAME = re.compile(r"(?:Error|Exception|Warning|Exit|Interrupt|Iteration)\b")
_SEP = " \u2013\u2014-:"  # en/em dash, "--" after smartquotes, colon


def field_lists(items: list[Element | str]) -> list[tuple[str, Element]]:
    """(label, body) pairs of the field lists directly in the body (not in nested members)."""
    pairs: list[tuple[str, Element]] = []
    for item in items:
        if isinstance(item, str):
            continue
        if item.tag == "dl" and has_class(item, "field-list"):
            label = None
            for child in item:
                if child.tag == "dt":
                    label = text(child).rstrip(":").strip()
                elif child.tag == "dd" and label is not None:
                    pairs.append((label, child))
                    label = None
        elif item.tag == "table" and has_class(item, "field-list"):
            pairs.extend(_table_fields(item))
    return pairs


def _table_fields(table: Element) -> list[tuple[str, Element]]:
    pairs: list[tuple[str, Element]] = []
    pending: str | None = None
    for tr in table.iter("tr"):
        label_el = next((c for c in tr if c.tag == "th"), None)
        body_el = next((c for c in tr if c.tag == "td" and has_class(c, "field-body")), None)
        if label_el is not None:
            pending = text(label_el).rstrip(":").strip()
        if body_el is not None and pending is not None:
            # A long label gets colspan=2 and its body moves to the next row.
            pairs.append((pending, body_el))
            pending = None
    return pairs


def _entries(body: Element) -> list[tuple[str | None, str | None, str]]:
    """(name, type, description) items of one field body."""
    nested = next((c for c in body if c.tag == "dl" and not has_class(c, "field-list")), None)
    if nested is not None:  # numpydoc
        out: list[tuple[str | None, str | None, str]] = []
        term = None
        for child in nested:
            if child.tag == "dt":
                term = child
            elif child.tag == "dd" and term is not None:
                out.append((*_numpy_term(term), text(child)))
                term = None
        if term is not None:
            out.append((*_numpy_term(term), ""))
        return out
    lists = [c for c in body if c.tag in ("ul", "ol")]
    items = [li for lst in lists for li in lst if li.tag == "li"] if lists else [body]
    return [_sphinx_item(li) for li in items]


def _numpy_term(dt: Element) -> tuple[str | None, str | None]:
    strong = dt.find(".//strong")
    classifier = next((el for el in dt.iter("span") if has_class(el, "classifier")), None)
    type_ = text(classifier).lstrip(":").strip() if classifier is not None else None
    if strong is not None:
        name = text(strong)
        if type_ is None:  # numpydoc < 1.0: "<strong>x</strong> : int"
            rest = text(dt)[len(name) :].strip()
            type_ = rest.lstrip(":").strip() or None
        return name or None, type_
    whole = text(dt)
    if classifier is not None:
        return None, type_ or whole
    return None, whole or None


def _sphinx_item(item: Element) -> tuple[str | None, str | None, str]:
    """``<strong>name</strong> (<em>type</em>) – description`` or a bare description."""
    whole = text(item)
    strong = item.find(".//strong")
    if strong is None:
        return None, None, whole
    name = text(strong)
    if not name or not whole.startswith(name):
        return None, None, whole
    rest = whole[len(name) :].lstrip()
    type_ = None
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                type_ = rest[1:i].strip() or None
                rest = rest[i + 1 :]
                break
    return name, type_, rest.lstrip(_SEP).strip()


def _bare(name: str | None) -> str:
    return (name or "").lstrip("*").strip()


def parse_fields(
    items: list[Element | str],
    sig_params: list[dict[str, Any]],
    return_hint: str | None,
    doc_only: list[dict[str, Any]] | None = None,
    overloads: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Merge field lists into the signature params; return (params, returns, raises).
    ``returns`` lists every return value: named ones (numpydoc ``popt``, ``pcov``) each
    with its own type, or the one unnamed value of ``:returns:``/``:rtype:``.

    A documented name the signature lacks is a parameter of kind None, unless
    ``doc_only`` is given (the signature shows its parameters): then it is no parameter
    of the call (a renamed argument, a key of ``**kwargs``, a copied docstring) and goes
    to ``doc_only`` as ``{name, description}``, but for a name of another signature of
    the same description (``overloads``: bare names), which stays a parameter."""
    params = [dict(p) for p in sig_params]
    by_name = {_bare(p["name"]): p for p in params if p["name"]}
    returns: list[dict[str, Any]] = []
    raises: list[dict[str, Any]] = []
    seen_params = False
    for label, body in field_lists(items):
        entries = _entries(body)
        kind = _LABEL_KIND.get(norm(label).lower()) or _guess(
            entries, by_name, seen_params, returns
        )
        if kind == "params":
            seen_params = True
            for name, type_, desc in entries:
                # numpydoc "x1, x2 : array_like", "name: type", "x (u)"; prose is no name
                names, written = field_names(name) if name else ([], None)
                for part in names:
                    key = _bare(part)
                    p = by_name.get(key)
                    if p is None and doc_only is not None and key not in overloads:
                        known = next((d for d in doc_only if _bare(d["name"]) == key), None)
                        if known is None:
                            doc_only.append({"name": part, "description": desc or None})
                        elif desc and not known["description"]:
                            known["description"] = desc
                        continue
                    if p is None:  # documented, not in the signature: its kind is unknown
                        p = param(part, None)
                        params.append(p)
                        by_name[key] = p
                    p["type"] = p["type"] or type_ or written
                    p["description"] = desc or p["description"]
        elif kind == "returns":
            named = [e for e in entries if e[0]]
            if named and len(named) == len(entries):  # numpydoc: one entry per value
                returns += [
                    {"name": name, "type": type_, "description": desc or None}
                    for name, type_, desc in entries
                ]
            else:  # Sphinx's ":returns:" (one value): its text, typed by ":rtype:"
                value = _unnamed(returns)
                value["type"] = value["type"] or next((t for _, t, _ in entries if t), None)
                joined = " ".join(d for _, _, d in entries if d) or None
                value["description"] = value["description"] or joined
        elif kind == "rtype":
            value = _unnamed(returns)
            value["type"] = text(body) or value["type"]
        elif kind == "raises":
            for name, type_, desc in entries:
                if name:
                    raises.append({"type": name, "description": desc or None})
                elif type_:
                    raises.append({"type": type_, "description": desc or None})
                elif desc:
                    raises.append({"type": None, "description": desc})
    if return_hint and not any(r["type"] for r in returns):
        _unnamed(returns)["type"] = return_hint
    return params, returns, raises


def _unnamed(returns: list[dict[str, Any]]) -> dict[str, Any]:
    """The one return value without a name (Sphinx's ":returns:"/":rtype:"), created
    on first use."""
    for value in returns:
        if value["name"] is None:
            return value
    value = {"name": None, "type": None, "description": None}
    returns.append(value)
    return value


def _guess(
    entries: list[tuple[str | None, str | None, str]],
    by_name: dict[str, Any],
    seen_params: bool,
    returns: list[dict[str, Any]],
) -> str | None:
    """Structure-based meaning of a field whose label is not in the table."""
    names = [n for n, _, _ in entries if n]
    if names and any(_bare(n) in by_name for n in names):
        return "params"
    if names and all(_EXC_NAME.search(n) for n in names):
        return "raises"
    if not names and entries:
        if not returns and seen_params:
            return "returns"
        if (
            len(returns) == 1
            and not returns[0]["type"]
            and len(entries) == 1
            and len(entries[0][2]) < 60
        ):
            return "rtype"
    return None
