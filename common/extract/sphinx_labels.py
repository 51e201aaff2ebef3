"""Labels of a Sphinx object description: the keywords Sphinx writes before the name in
its signature (``<em class="property">`` until Sphinx 8, ``<span class="property">``
since; each keyword in a ``span.k`` since Sphinx 7): ``classmethod``, ``static``,
``abstract``, ``async``, ``final``, ``property``, and CPython's own ``coroutine``,
``awaitable`` and ``abstractmethod``. The object's type (``class``, ``exception``,
``module``, ``type``...) written there is its inventory role, not a label. The signature
text is unchanged: labels are added beside it (docs/items.md).
"""

from __future__ import annotations

from .labels import labels
from .text import Element, class_tokens, raw_text

# Keywords that are labels (labels.label gives each its one spelling: static ->
# staticmethod, abstract -> abstractmethod, coroutine and awaitable -> async).
_LABEL_WORDS = frozenset(
    (
        "abstract",
        "abstractmethod",
        "async",
        "coroutine",
        "awaitable",
        "classmethod",
        "static",
        "staticmethod",
        "final",
        "property",
        "overload",
    )
)
# The classes of the name's elements: the keywords are the property elements before them.
_NAME = frozenset(("sig-name", "descname", "sig-prename", "descclassname"))


def sphinx_labels(dt: Element) -> list[str]:
    """The labels written before the name of a ``dt`` (in the page's order)."""
    words: list[str] = []
    for child in dt:
        tokens = class_tokens(child)
        if not tokens:
            continue
        if not _NAME.isdisjoint(tokens):
            break
        if "property" in tokens:
            words += [w for w in raw_text(child).split() if w in _LABEL_WORDS]
    return labels(words) if words else []


__all__ = ["sphinx_labels"]
