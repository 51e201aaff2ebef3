"""Pure HTML extraction: one content dict per ``objects.inv`` entry of a page.

No network, no Redis, no Scrapy: bytes in, dicts out. The page is parsed once, its
generator recognised (``generators.py``: Sphinx, mkdocstrings, pydoctor or unknown), and
the extractor of that generator's markup gives every entry its content; each content
records the generator. See docs/extraction.md for the decisions and measurements.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from invcrawl.common.items import ItemStatus, empty_content
from invcrawl.common.rope import head, materialise
from invcrawl.common.tasks import TaskEntry

from .generators import Generator, detect_generator
from .generic import extract_generic
from .links import Linker
from .mkdocstrings import extract_mkdocstrings
from .parsing import parse
from .pydoctor import extract_pydoctor
from .references import Link, anchor_keys, doc_links, own_references, xref_roles
from .sphinx import extract_sphinx
from .text import Element

# A doc's links are looked for in its first this many characters: MAX_REFERENCES links are
# found long before on any real page, and the scan stays linear in the page however deep
# its sections nest.
REFERENCE_SCAN_CHARS = 256 * 1024

__all__ = ["Generator", "extract_page"]

# (root, body, url, targets) -> one content dict per target, in the same order.
Extractor = Callable[[Element, bytes, str, Sequence[TaskEntry]], list[dict[str, Any]]]

# The extractor of each generator's markup. A page of an unknown generator is read by the
# Sphinx extractor's rules, which fall back to generic ones, behind the generic rules of
# generic.py (no chrome, headings as headers: docs/extraction.md).
EXTRACTORS: Mapping[Generator, Extractor] = {
    Generator.SPHINX: extract_sphinx,
    Generator.MKDOCSTRINGS: extract_mkdocstrings,
    Generator.PYDOCTOR: extract_pydoctor,
    Generator.UNKNOWN: extract_generic,
}


def extract_page(
    body: bytes,
    url: str,
    targets: Sequence[TaskEntry],
    encoding: str | None = None,
    lazy: bool = False,
) -> list[dict[str, Any]]:
    """One content dict per target, in the same order.

    ``lazy``: a long ``doc`` or ``doc_markdown`` may be a ``common.rope.Rope`` (the text
    of nested sections, never copied into each section around it), for
    ``pageitems.page_items`` to join only what the size bounds keep; else every text is
    a string."""
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
            return [
                empty_content(ItemStatus.ANCHOR_MISSING, "page is empty or not HTML")
                for _ in targets
            ]
        generator = detect_generator(root)
        contents = EXTRACTORS[generator](root, body, url, targets)
        for content in contents:
            content["generator"] = generator.value
        _add_references(body, url, targets, contents)
        if not lazy:
            materialise(contents)
        return contents
    finally:
        if gc_was_enabled:
            gc.enable()


def _add_references(
    body: bytes, url: str, targets: Sequence[TaskEntry], contents: list[dict[str, Any]]
) -> None:
    """Each content's ``references`` (``references.py``), the links of a doc read once (the
    entries at one anchor share their doc); none is the field absent. A doc's links are
    read in its first :data:`REFERENCE_SCAN_CHARS`: a section's doc may be a rope holding
    every section inside it (``common/rope.py``), never joined whole for its links."""
    heads: dict[int, str] = {}
    for content in contents:
        markdown = content.get("doc_markdown") or ""
        if id(markdown) not in heads:
            heads[id(markdown)] = head(markdown, REFERENCE_SCAN_CHARS)
    if not any("](" in text for text in heads.values()):
        return
    roles, anchors = xref_roles(body, Linker(url)), anchor_keys(targets)
    links: dict[int, list[Link]] = {}
    done: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for target, content in zip(targets, contents, strict=True):
        doc = id(content.get("doc_markdown") or "")
        text = heads[doc]
        if "](" not in text:
            continue
        found = done.get((doc, target.anchor))
        if found is None:
            of_doc = links.get(doc)
            if of_doc is None:
                of_doc = links[doc] = doc_links(text, url, anchors, roles)
            found = done[doc, target.anchor] = own_references(of_doc, target.anchor)
        if found:
            content["references"] = found
