"""Labels: facts a page states about a symbol beside its signature (``property``,
``classmethod``, ``async``...), kept as facts (the item's ``labels``) rather than as text of
the signature or the doc. Each generator writes them its own way (Sphinx a keyword before the
name, mkdocstrings ``doc-label-*`` badges, pydoctor decorators); :func:`label` turns each
spelling into the one vocabulary of docs/items.md.
"""

from __future__ import annotations

# Spellings of one fact, as the generators write them, to its label.
_SYNONYMS = {
    "static": "staticmethod",
    "abstract": "abstractmethod",
    "abc.abstractmethod": "abstractmethod",
    "functools.cached_property": "cached_property",
    "cached": "cached_property",
    "coroutine": "async",
    "awaitable": "async",
    "overload": "overload",
    "typing.overload": "overload",
    "typing.final": "final",
    "class-attribute": "class_attribute",
    "instance-attribute": "instance_attribute",
    "module-attribute": "module_attribute",
}

# A label is short: a word, never a page's text (a badge's text is read from the site).
MAX_LABEL_CHARS = 40


def label(spelling: str) -> str | None:
    """The label a generator's spelling means, lower case, ``-`` and spaces as ``_`` but for
    the known synonyms; None for an empty or overlong spelling."""
    word = spelling.strip().lstrip("@").strip().lower()
    if not word or len(word) > MAX_LABEL_CHARS:
        return None
    found = _SYNONYMS.get(word)
    if found is not None:
        return found
    return word.replace("-", "_").replace(" ", "_")


def labels(spellings: list[str]) -> list[str]:
    """Each spelling's label once, in the page's order."""
    out: list[str] = []
    for spelling in spellings:
        found = label(spelling)
        if found is not None and found not in out:
            out.append(found)
    return out


__all__ = ["MAX_LABEL_CHARS", "label", "labels"]
