"""Docstring sections (Parameters, Returns, Raises...) as mkdocstrings writes them, read into
``params`` / ``returns`` / ``raises`` of the same shapes as Sphinx's field lists
(``common/extract/fields.py``).

A section is a title then its items, in one of the layouts of ``docstring_section_style``:

* ``table`` (the default): ``<p><span class="doc-section-title">Parameters:</span></p>``
  (``<p><strong>Parameters:</strong></p>`` in older templates) and a ``<table>`` whose header
  names the columns (Name, Type, Description, Default; translated with ``locale``, so the
  columns are known by position too);
* ``list``: the same title and a ``<ul>`` of ``li.doc-section-item``: ``<b><code>name</code>
  </b> (<code>type</code>, default: <code>3</code>) – <div.doc-md-description>``;
* ``spacy``: a two-column ``<table>`` whose first header cell holds the title (PARAMETER,
  RETURNS...), the type in ``span.doc-param-annotation`` (``doc-returns-annotation``...),
  the default in ``span.doc-param-default``;
* (the readthedocs templates' ``table.field-list`` sections are made the list layout
  they wrap by ``locate.clean``);
* the legacy templates (mkdocstrings-python-legacy, pytkdocs): ``<dl><dt>Parameters:</dt>``
  with one ``dd`` per item: ``<strong>name:</strong> <code>type</code> – description``.

A section's title says what it holds (the multilingual table of ``fields.field_kind``);
sections it does not name (Attributes, Examples, Warns...) are only part of the doc.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..fields import field_kind
from ..text import Element, has_class, norm, raw_text, text

# (name, type, default, description) of one item of a section.
Entry = tuple[str | None, str | None, str | None, str | None]

_TITLE_TAGS = frozenset(("span", "strong", "b"))
_SEPARATORS = " \u2013\u2014-:"


@dataclass(slots=True)
class Section:
    kind: str  # params | returns | rtype | raises
    entries: list[Entry]
    # the column headings of a table layout, which the plain text leaves out (the spacy
    # layout's first one is the section's title)
    headings: list[Element] = field(default_factory=list)


def _p_title(p: Element) -> str | None:
    """The title of ``<p><span class="doc-section-title">Parameters:</span></p>``,
    ``<p><strong>Parameters:</strong></p>`` or (mkdocstrings-python 1.1's list layout)
    ``<p>Parameters:</p>``: the paragraph holds nothing else."""
    if not len(p):
        title = norm(p.text or "")
        return title if title.endswith(":") and len(title) < _TITLE_CHARS else None
    if len(p) != 1 or (p.text and p.text.strip()):
        return None
    child = p[0]
    if child.tag not in _TITLE_TAGS or (child.tail and child.tail.strip()):
        return None
    if child.tag == "span" and not has_class(child, "doc-section-title"):
        return None
    title = text(child)
    return title if title.endswith(":") or child.tag == "span" else None


# A section title is a word or two ("Other Parameters:", "Keyword Arguments:").
_TITLE_CHARS = 40


def _spacy_title(table: Element) -> str | None:
    """The spacy layout's title: its first header cell's ``span.doc-section-title``, or
    (mkdocstrings-python 1.8, none of the classes later versions add) a word in capitals
    that names a section (``<th><b>PARAMETER</b></th>``)."""
    for th in table.iter("th"):
        for span in th.iter("span"):
            if has_class(span, "doc-section-title"):
                return text(span)
        title = text(th)
        if title.isupper() and section_kind(title) is not None:
            return title
        return None
    return None


def read_sections(contents: Element) -> list[Section]:
    """The sections written directly in a doc-contents (not in nested members)."""
    out: list[Section] = []
    pending: str | None = None  # a title paragraph waiting for its items
    for child in contents:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        title: str | None = None
        if tag == "p":
            pending = _p_title(child)
            continue
        if tag == "table":
            title = _spacy_title(child) or pending
        elif tag in ("ul", "ol"):
            title = pending
        elif tag == "dl":
            title = _dl_title(child)
        pending = None
        kind = section_kind(title) if title else None
        if kind is None:
            continue
        headings: list[Element] = []
        if tag == "table":
            entries = _table(child, kind)
            headings = _headings(child)
        elif tag == "dl":
            entries = [_legacy_item(dd) for dd in child if dd.tag == "dd"]
        else:
            entries = [_list_item(li) for li in child if li.tag == "li"]
        out.append(Section(kind, entries, headings))
    return out


# Section titles of mkdocstrings' other handlers (MATLAB's "Input arguments:", its spacy
# layout's "INPUT ARGUMENT"), beside the Python handler's that ``fields.field_kind`` knows.
_HANDLER_KINDS = {
    "input arguments": "params",
    "input argument": "params",
    "name-value arguments": "params",
    "name-value argument": "params",
    "output arguments": "returns",
    "output argument": "returns",
}


def section_kind(title: str) -> str | None:
    """What a section's title says it holds (``params``, ``returns``, ``rtype``,
    ``raises``), None for another section."""
    return field_kind(title) or _HANDLER_KINDS.get(norm(title).rstrip(":").strip().lower())


def _dl_title(dl: Element) -> str | None:
    """The legacy templates: the dl's one ``dt`` is the title, each ``dd`` an item."""
    first = next((c for c in dl if isinstance(c.tag, str)), None)
    if first is None or first.tag != "dt":
        return None
    if sum(1 for c in dl if c.tag == "dt") != 1:
        return None
    title = text(first)
    return title if title.endswith(":") else None


# -- tables -------------------------------------------------------------------------------

_COLUMNS = {"name": "name", "type": "type", "description": "description", "default": "default"}


def _rows(table: Element) -> tuple[list[Element], list[Element]]:
    head: list[Element] = []
    body: list[Element] = []
    for child in table:
        if child.tag == "thead":
            head = [th for tr in child if tr.tag == "tr" for th in tr if th.tag in ("th", "td")]
        elif child.tag == "tbody":
            body.extend(tr for tr in child if tr.tag == "tr")
        elif child.tag == "tr":
            body.append(child)
    return head, body


def _headings(table: Element) -> list[Element]:
    """The header cells that name columns: every one of the table layout, all but the
    title of the spacy layout's."""
    head, _ = _rows(table)
    if head and _spacy_title(table) is not None:
        return head[1:]
    return head


def _columns(head: list[Element], kind: str) -> list[str]:
    """The role of each column, by its header (English), else by position."""
    named = [_COLUMNS.get(text(th).lower(), "") for th in head]
    if named and all(named):
        return named
    width = len(head)
    if kind == "params":
        return ["name", "type", "description", "default"][:width] if width >= 3 else []
    if width == 3:
        return ["name", "type", "description"]
    return ["type", "description"] if width == 2 else []


def _description(cell: Element) -> str | None:
    for div in cell.iter("div", "span"):
        if has_class(div, "doc-md-description"):
            return text(div) or None
    return text(cell) or None


def _default(cell: Element) -> str | None:
    """A default's ``<code>``; ``<em>required</em>`` (translated) is no default."""
    code = cell.find(".//code")
    return norm(raw_text(code)) or None if code is not None else None


def _table(table: Element, kind: str) -> list[Entry]:
    head, rows = _rows(table)
    if head and _spacy_title(table) is not None:
        return [_spacy_row(tr, kind) for tr in rows]
    columns = _columns(head, kind)
    out: list[Entry] = []
    for tr in rows:
        cells = [c for c in tr if c.tag in ("td", "th")]
        found: dict[str, str | None] = {}
        for role, cell in zip(columns, cells, strict=False):
            if role == "description":
                found[role] = _description(cell)
            elif role == "default":
                found[role] = _default(cell)
            else:
                found[role] = text(cell) or None
        out.append(
            (found.get("name"), found.get("type"), found.get("default"), found.get("description"))
        )
    return out


def _annotation(cell: Element, name: str) -> str | None:
    for span in cell.iter("span"):
        cls = span.get("class")
        if cls and name in cls.split():
            code = span.find(".//code")
            return text(code if code is not None else span) or None
    return None


def _spacy_row(tr: Element, kind: str) -> Entry:
    cells = [c for c in tr if c.tag in ("td", "th")]
    if not cells:
        return None, None, None, None
    first, rest = cells[0], cells[1:]
    names = {"params": "param", "returns": "returns", "rtype": "returns", "raises": "raises"}
    stem = names[kind]
    type_ = _annotation(first, f"doc-{stem}-annotation")
    name = None
    if type_ is None:
        name = text(first) or None
    default = None
    description = None
    for cell in rest:
        type_ = type_ or _annotation(cell, f"doc-{stem}-annotation")
        default = _annotation(cell, f"doc-{stem}-default")
        description = _description_only(cell)
    if kind == "raises" and type_ is None:
        name, type_ = None, name
    return name, type_, default, description


def _description_only(cell: Element) -> str | None:
    for div in cell.iter("div", "span"):
        if has_class(div, "doc-md-description"):
            return text(div) or None
    return None


# -- lists --------------------------------------------------------------------------------


def _list_item(li: Element) -> Entry:
    """``<b><code>name</code></b> (<code>type</code>, default: <code>3</code>) – desc``.

    The type and default are the codes of the parenthesis right after the name; a code
    after the separator (``–``, or the description's div) is the description's
    ("Either ``True`` to ..., ``False`` to disable" states no type and no default)."""
    name = type_ = default = description = None
    before = ""  # the text since the last code, inside the parenthesis
    depth = 0  # parentheses open after the name
    head = True  # still before the separator
    started = False  # the name, or the type of an unnamed item, was read
    for child in li:
        if not head:
            break
        tag = child.tag
        code = _code_of(child)
        if not started:
            if tag in ("b", "strong") or (
                tag == "span" and has_class(child, "doc-heading-parameter")
            ):
                name = text(child).rstrip(":") or None
            elif code is not None and not (li.text or "").strip():
                type_ = norm(raw_text(code)) or None  # Returns, Raises: the type alone
            else:
                continue
            started = True
        elif tag in ("div", "span") and has_class(child, "doc-md-description"):
            description = text(child) or None
            break
        elif code is not None and depth > 0:
            value = norm(raw_text(code)) or None
            if before.rstrip().lower().endswith("default:"):
                default = value
            elif type_ is None:
                type_ = value
        tail = child.tail or ""
        if depth == 0 and _SEPARATOR.match(tail):
            head = False
        depth += tail.count("(") - tail.count(")")
        if depth <= 0 and ")" in tail and _SEPARATOR.match(tail.rsplit(")", 1)[1]):
            head = False
        depth = max(depth, 0)
        before = tail
    if description is None:
        description = _after_separator(li)
    return name, type_, default, description


def _code_of(el: Element) -> Element | None:
    """``el`` when a code, the code of a link around one alone (``<a><code>Shape``, as
    ``locate.clean`` puts a cross-reference), else None."""
    if el.tag == "code":
        return el
    if el.tag == "a" and len(el) == 1 and el[0].tag == "code" and not (el.text or "").strip():
        return el[0]
    return None


# What separates a list item's name and type from its description.
_SEPARATOR = re.compile(r"\s*(?:[\u2013\u2014]|-\s|:\s)")


def item_entry(el: Element) -> Entry:
    """The entry of one section item (``li`` of the list layout, ``tr`` of a table): a
    parameter's own inventory entry (``parameter_headings``) lands in it."""
    if el.tag == "li":
        return _list_item(el)
    cells = [c for c in el if c.tag in ("td", "th")]
    name = text(cells[0]) or None if cells else None
    description = _description_only(el)
    return name, None, None, description


def _after_separator(el: Element) -> str | None:
    whole = text(el)
    for sep in (" \u2013 ", " \u2014 ", " - ", ": "):
        if sep in whole:
            return whole.split(sep, 1)[1].strip() or None
    return None


def _legacy_item(dd: Element) -> Entry:
    """``<strong>name:</strong> <code>type</code> – description`` (a name is optional)."""
    holder = dd.find("p")
    if holder is None:
        holder = dd
    name = type_ = None
    strong = holder.find("strong")
    if strong is not None:
        name = text(strong).rstrip(":").strip() or None
    code = holder.find("code")
    if code is not None:
        type_ = norm(raw_text(code)) or None
    whole = text(holder)
    rest = whole
    for part in (text(strong) if strong is not None else "", type_ or ""):
        if part and rest.startswith(part):
            rest = rest[len(part) :].lstrip()
    return name, type_, None, rest.lstrip(_SEPARATORS).strip() or None
