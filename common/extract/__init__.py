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
from invcrawl.common.rope import materialise
from invcrawl.common.tasks import TaskEntry

from .generators import Generator, detect_generator
from .generic import extract_generic
from .mkdocstrings import extract_mkdocstrings
from .parsing import parse
from .pydoctor import extract_pydoctor
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
        if not lazy:
            materialise(contents)
        return contents
    finally:
        if gc_was_enabled:
            gc.enable()
