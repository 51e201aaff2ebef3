"""The structure of an MkDocs page documented by mkdocstrings: its content root, its
documented objects and where an anchor lands.

mkdocstrings (Python handler, every version since the inventory exists) wraps each object in
``div.doc.doc-object.doc-<kind>``: its heading (``h2``-``h6.doc-heading`` whose id is the
object's path; a root object shown without a heading has an ``<a id>`` instead), the
signature when it is written apart (``div.doc-signature`` since mkdocstrings-python 1.x,
``pre > code.doc-signature`` in the mkdocs theme), then ``div.doc-contents`` with the
docstring and, in ``div.doc-children``, the members' own ``doc-object``\\ s. A page also has
plain Markdown around them (headings, prose).

The page is cleaned once before anything reads it (:func:`clean`): permalinks, the empty
``code.doc-symbol`` badges, "Source code in ..." blocks; ``<details>`` admonitions
(pymdownx.details, mkdocstrings' own) become the ``div.admonition`` + title the shared
Markdown converter renders as a quote; the headings ``parameter_headings`` gives each
parameter (``h3.doc-heading-parameter`` inside a section's item) become spans, and the
readthedocs templates' ``table.field-list`` sections the list layout they wrap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from ..page import find_content
from ..text import HEADINGS, Element, class_tokens, drop, has_class, text

# Classes of a doc-object's kind (``doc-method`` in the legacy templates).
_KINDS = {
    "doc-module": "module",
    "doc-class": "class",
    "doc-function": "function",
    "doc-method": "function",
    "doc-attribute": "attribute",
    "doc-type_alias": "attribute",
    "doc-type-alias": "attribute",
}


@dataclass(slots=True)
class DocObject:
    """One documented object of the page."""

    element: Element  # the div.doc-object
    kind: str  # module | class | function | attribute | object
    heading: Element | None
    ident: str | None  # the heading's id, else the <a id> standing for it
    signature: Element | None  # the signature written apart from the heading
    contents: Element | None  # div.doc-contents
    parent: DocObject | None = None


@dataclass(slots=True)
class Layout:
    """Every documented object of a page, by its element, and the member sets the shared
    converters exclude: ``members`` (each nested doc-object) and ``has_members`` (every
    element that holds one)."""

    objects: dict[Element, DocObject] = field(default_factory=dict)
    members: set[Element] = field(default_factory=set)
    has_members: set[Element] = field(default_factory=set)


def content_root(root: Element) -> Element:
    """Material's ``article.md-content__inner`` (its ``<main>`` holds both sidebars), else
    the theme landmark the Sphinx rules find (``[role=main]`` of the mkdocs theme,
    ``[itemprop=articleBody]`` of readthedocs)."""
    for el in root.iter("article"):
        if has_class(el, "md-content__inner"):
            return el
    main, _ = find_content(root)
    return main


def _is_source(details: Element) -> bool:
    summary = details.find("summary")
    if summary is None:
        return False
    return text(summary).startswith("Source code in") or has_class(details, "mkdocstrings-source")


def clean(main: Element) -> None:
    """Remove what is never the docstring's text (permalinks, symbol badges, source code
    blocks, a class's "Bases:" line, scripts) and give ``<details>`` admonitions the shape
    of ``div.admonition``."""
    noise: list[Element] = []
    details: list[Element] = []
    linked_code: list[Element] = []
    params: list[Element] = []
    field_lists: list[Element] = []
    descriptions: list[Element] = []
    for el in main.iter("a", "code", "details", "div", "p", "table", "script", "style", *HEADINGS):
        tag = el.tag
        if tag == "a":
            if has_class(el, "headerlink"):
                noise.append(el)
            else:
                parent = el.getparent()
                if parent is not None and parent.tag == "code":
                    linked_code.append(el)
        elif tag == "code":
            if has_class(el, "doc-symbol"):
                noise.append(el)
        elif tag in HEADINGS:
            if has_class(el, "doc-heading-parameter"):
                params.append(el)
            elif _category_heading(el):
                noise.append(el)
        elif tag == "div":
            if has_class(el, "doc-md-description"):
                parent = el.getparent()
                if parent is not None and parent.tag == "li":
                    descriptions.append(el)
        elif tag == "table":
            if has_class(el, "field-list"):
                field_lists.append(el)
        elif tag == "p":
            # "Bases: ..." of a class (show_bases): a fact of the heading's, not its text
            if has_class(el, "doc-class-bases"):
                noise.append(el)
        elif tag == "details":
            if _is_source(el):
                noise.append(el)
            else:
                details.append(el)
        else:
            noise.append(el)
    for el in noise:
        drop(el)
    for el in linked_code:
        _link_out_of_code(el)
    for el in params:  # parameter_headings: a parameter's name, not a heading of the text
        el.tag = "span"
    for el in field_lists:
        _unfold_field_list(el)
    for el in descriptions:
        # A list item's description: its paragraphs, so that the Markdown converter takes
        # the list in one pass (a div in a list sends it item by item, ~5x the cost).
        el.tag = "span"
    for el in details:
        el.tag = "div"
        el.set("class", " ".join(["admonition", *class_tokens(el)]))
        summary = el.find("summary")
        if summary is not None:
            summary.tag = "p"
            summary.set("class", "admonition-title")


def _category_heading(el: Element) -> bool:
    """The "Attributes", "Classes", "Functions" headings ``group_by_category`` and
    ``show_category_heading`` write among an object's members: the template's, no
    heading of the docstring's."""
    parent = el.getparent()
    return (
        parent is not None
        and parent.tag == "div"
        and has_class(parent, "doc-children")
        and not has_class(el, "doc-heading")
    )


def _unfold_field_list(table: Element) -> None:
    """The readthedocs templates lay each section out as a ``table.field-list`` row (the
    title in ``th.field-name``, the list layout's ``ul`` in ``td.field-body``): it becomes
    the list layout itself, a title paragraph and the list, which the section reader and
    the Markdown converter know (a layout table is no data table)."""
    parent = table.getparent()
    if parent is None:
        return
    blocks: list[Element] = []
    for tr in table.iter("tr"):
        for cell in tr:
            if cell.tag == "th" and has_class(cell, "field-name"):
                title = etree.Element("p")
                span = etree.SubElement(title, "span")
                span.set("class", "doc-section-title")
                span.text = text(cell)
                blocks.append(title)
            elif cell.tag == "td" and has_class(cell, "field-body"):
                blocks.extend(child for child in cell if isinstance(child.tag, str))
    at = parent.index(table)
    tail = table.tail
    parent.remove(table)
    for offset, block in enumerate(blocks):
        block.tail = "\n"
        parent.insert(at + offset, block)
    if blocks:
        blocks[-1].tail = tail


def _link_out_of_code(a: Element) -> None:
    """A cross-reference inside a code span (``<code><a>Options</a></code>``, how
    mkdocstrings links types) would be Markdown link syntax inside a code span, shown
    literally: a code span that is the link alone becomes a link around the code
    (``<a><code>``), as Sphinx writes it; a link among other code keeps its text only."""
    code = a.getparent()
    holder = code.getparent()
    alone = len(code) == 1 and not (code.text or "").strip() and not (a.tail or "").strip()
    if not alone or holder is None:
        _unwrap(a)
        return
    code.remove(a)
    code.text = a.text
    for child in list(a):
        code.append(child)
    a.text = None
    a.tail, code.tail = code.tail, None
    holder.replace(code, a)
    a.append(code)


def _unwrap(el: Element) -> None:
    """Remove ``el`` but keep its text, children and tail in place."""
    parent = el.getparent()
    index = parent.index(el)
    prev = el.getprevious()
    lead = el.text or ""
    if prev is not None:
        prev.tail = (prev.tail or "") + lead
    else:
        parent.text = (parent.text or "") + lead
    children = list(el)
    tail = el.tail or ""
    parent.remove(el)
    for offset, child in enumerate(children):
        parent.insert(index + offset, child)
    if children:
        children[-1].tail = (children[-1].tail or "") + tail
    elif prev is not None:
        prev.tail = (prev.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail


def _kind(el: Element) -> str:
    for token in class_tokens(el):
        kind = _KINDS.get(token)
        if kind is not None:
            return kind
    return "object"


def _doc_object(el: Element) -> DocObject:
    heading = ident = signature = contents = None
    for child in el:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        if tag in HEADINGS and heading is None and contents is None:
            heading = child
            ident = child.get("id") or ident
        elif tag == "a" and ident is None and child.get("id"):
            ident = child.get("id")
        elif tag == "div" and has_class(child, "doc-contents"):
            contents = child
            break
        elif signature is None and (
            has_class(child, "doc-signature")
            or (tag == "pre" and any(has_class(c, "doc-signature") for c in child.iter("code")))
            # mkdocstrings-python 1.1 (``separate_signature``): the highlighted code
            # alone between the heading and the contents
            or (heading is not None and (tag == "pre" or has_class(child, "highlight")))
        ):
            signature = child
    return DocObject(el, _kind(el), heading, ident, signature, contents)


def layout(main: Element) -> Layout:
    """Every ``div.doc-object`` of main (document order), each with its enclosing one."""
    out = Layout()
    stack: list[DocObject] = []
    for el in main.iter("div"):
        cls = el.get("class")
        if not cls or "doc-object" not in cls or "doc-object" not in cls.split():
            continue
        obj = _doc_object(el)
        while stack and not _contains(stack[-1].element, el):
            stack.pop()
        if stack:
            obj.parent = stack[-1]
            out.members.add(el)
        stack.append(obj)
        out.objects[el] = obj
    for el in out.members:
        for anc in el.iterancestors():
            if anc in out.has_members:
                break
            out.has_members.add(anc)
            if anc is main:
                break
    return out


def _contains(outer: Element, el: Element) -> bool:
    return any(anc is outer for anc in el.iterancestors())


def object_at(el: Element, objects: dict[Element, DocObject]) -> DocObject | None:
    """The documented object an anchor's element stands for: the doc-object itself, its
    heading or signature (or something in them), or an anchor that is a child of the
    doc-object before its contents; None for an element of a docstring or of plain Markdown."""
    obj = objects.get(el)
    if obj is not None:
        return obj
    node = el
    while True:
        parent = node.getparent()
        if parent is None:
            return None
        obj = objects.get(parent)
        if obj is not None:
            if node is obj.heading or node is obj.signature:
                return obj
            if node.tag == "a" and (obj.contents is None or _before(node, obj.contents)):
                return obj
            return None
        if has_class(parent, "doc-contents"):
            return None
        node = parent


def _before(el: Element, other: Element) -> bool:
    sib = el.getnext()
    while sib is not None:
        if sib is other:
            return True
        sib = sib.getnext()
    return False


def section_items(heading: Element) -> list[Element | str]:
    """A plain Markdown heading's section: the siblings after it up to the next heading of
    its level or above (documented objects inside are left to the converters' exclusion)."""
    level = int(heading.tag[1])
    items: list[Element | str] = []
    if heading.tail:
        items.append(heading.tail)
    sib = heading.getnext()
    while sib is not None:
        tag = sib.tag
        if isinstance(tag, str) and tag in HEADINGS and int(tag[1]) <= level:
            break
        items.append(sib)
        if sib.tail:
            items.append(sib.tail)
        sib = sib.getnext()
    return items


def page_heading(el: Element, main: Element) -> Element | None:
    """The nearest plain Markdown heading before ``el`` (in document order, within main):
    the heading of the page section that introduces a documented module."""
    node = el
    while node is not None and node is not main:
        sib = node.getprevious()
        while sib is not None:
            if sib.tag in HEADINGS and not has_class(sib, "doc-heading"):
                return sib
            sib = sib.getprevious()
        node = node.getparent()
    return None
