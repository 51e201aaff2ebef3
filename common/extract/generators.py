"""Which program generated a page: Sphinx, mkdocstrings (MkDocs), pydoctor, or another one.

Every generator that writes ``objects.inv`` marks up its pages differently; the extractor of
each reads its own markup (docs/extraction.md, "Generators"). The generator is known per page
from ``<meta name="generator">`` first (Sphinx, MkDocs and pydoctor themes write it), then from
the markup itself (a theme may drop the meta). It is recorded on every item (``generator``),
and ``report`` and the crawl summary count items by it, so a site of an unknown generator
is visible rather than silently extracted badly.
"""

from __future__ import annotations

from invcrawl.common.items import GENERATORS, Generator

from .text import Element

# The classes of Sphinx's object descriptions (``<dl class="py function">``): its domains.
_SPHINX_DOMAINS = frozenset(("py", "c", "cpp", "js", "rst", "std"))
# The mkdocs theme's search dialog, which its navbar opens (data-bs-target, data-target before
# Bootstrap 5).
_MKDOCS_SEARCH = "#mkdocs_search_modal"
# Bytes of a generator meta's content read: the name and version are at its start.
_META_CHARS = 200


def _from_meta(content: str) -> Generator | None:
    word = content[:_META_CHARS].strip().lower()
    if word.startswith("sphinx") or word.startswith("docutils"):
        return Generator.SPHINX
    if word.startswith("pydoctor"):
        return Generator.PYDOCTOR
    if word.startswith("mkdocs"):
        return Generator.MKDOCSTRINGS
    return None


def detect_generator(root: Element) -> Generator:
    """The page's generator: its ``<meta name="generator">``, else its markup, else
    ``unknown``."""
    head = root.find("head")
    if head is not None:
        for meta in head.iter("meta"):
            if (meta.get("name") or "").lower() == "generator":
                found = _from_meta(meta.get("content") or "")
                if found is not None:
                    return found
        if _mkdocs_head(head):
            return Generator.MKDOCSTRINGS
    return _from_markup(root)


def _mkdocs_head(head: Element) -> bool:
    """MkDocs themes that write no generator meta (mkdocs, readthedocs): every page of an
    mkdocstrings site links its stylesheet (``assets/_mkdocstrings.css``), readthedocs
    declares ``var mkdocs_page_name``. Their plain Markdown pages are MkDocs pages too."""
    for el in head.iter("link", "script"):
        if el.tag == "link":
            if (el.get("href") or "").endswith("_mkdocstrings.css"):
                return True
        elif el.text and "mkdocs_page_name" in el.text:
            return True
    return False


def _from_markup(root: Element) -> Generator:
    """Markers each generator writes in its body whatever the theme: mkdocstrings'
    ``doc doc-object`` wrappers and ``doc-heading`` headings, the mkdocs theme's navbar;
    pydoctor's ``docstring`` and ``thingTitle``; Sphinx's object descriptions (``dl.py``,
    ``dl.c``...) with ``sig-name`` / ``descname`` and its ``headerlink`` permalinks."""
    for el in root.iter("div", "dl", "span", "code", "a", "h1", "h2", "h3", "h4"):
        if el.tag == "a" and _MKDOCS_SEARCH in (el.get("data-bs-target"), el.get("data-target")):
            return Generator.MKDOCSTRINGS  # the mkdocs theme's navbar: before any content
        cls = el.get("class")
        if not cls:
            continue
        tokens = cls.split()
        if "doc-heading" in tokens or ("doc" in tokens and "doc-object" in tokens):
            return Generator.MKDOCSTRINGS
        if "thingTitle" in tokens or "pydoctor" in cls:
            return Generator.PYDOCTOR
        if "sig-name" in tokens or "descname" in tokens or "headerlink" in tokens:
            return Generator.SPHINX
        if el.tag == "dl" and not _SPHINX_DOMAINS.isdisjoint(tokens):
            return Generator.SPHINX
    return Generator.UNKNOWN


__all__ = ["GENERATORS", "Generator", "detect_generator"]
