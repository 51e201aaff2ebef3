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
    body: bytes, url: str, targets: Sequence[TaskEntry], encoding: str | None = None
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
            return [
                empty_content(ItemStatus.ANCHOR_MISSING, "page is empty or not HTML")
                for _ in targets
            ]
        generator = detect_generator(root)
        contents = EXTRACTORS[generator](root, body, url, targets)
        for content in contents:
            content["generator"] = generator.value
        _add_references(body, url, targets, contents)
        return contents
    finally:
        if gc_was_enabled:
            gc.enable()


def _add_references(
    body: bytes, url: str, targets: Sequence[TaskEntry], contents: list[dict[str, Any]]
) -> None:
    """Each content's ``references`` (``references.py``), the links of a doc read once (the
    entries at one anchor share their doc); none is the field absent."""
    if not any("](" in (c.get("doc_markdown") or "") for c in contents):
        return
    roles, anchors = xref_roles(body, Linker(url)), anchor_keys(targets)
    links: dict[int, list[Link]] = {}
    done: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for target, content in zip(targets, contents, strict=True):
        markdown = content.get("doc_markdown") or ""
        if "](" not in markdown:
            continue
        found = done.get((id(markdown), target.anchor))
        if found is None:
            of_doc = links.get(id(markdown))
            if of_doc is None:
                of_doc = links[id(markdown)] = doc_links(markdown, url, anchors, roles)
            found = done[id(markdown), target.anchor] = own_references(of_doc, target.anchor)
        if found:
            content["references"] = found
