"""The lexical ranker: BM25F over the fields of an item that carry meaning (pure).

Fields, with their weights: the name's tokens (dotted, camel and underscore parts), the
summary (first sentence), the parameters' names and descriptions, the return and raise
descriptions, the whole doc (its first DOC_CHARS characters), the parent's summary when
the caller has it. Words are compared by their light stems (``terms.stem``). A term's
rarity (its IDF) comes from the index: the number of items each query word was found
under in the crawls searched (``frontier/search.py`` has it from the lookup).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from invcrawl.common.search import terms as t

DOC_CHARS = 2000  # of a doc read (the rest of a long page adds length, not meaning)
K1 = 1.2


class Field(Enum):
    NAME = "name"
    SUMMARY = "summary"
    PARAMS = "params"
    RETURNS = "returns"
    DOC = "doc"
    PARENT = "parent"


# weight, length normalisation, typical length in words
_FIELDS: dict[Field, tuple[float, float, float]] = {
    Field.NAME: (3.0, 0.3, 4.0),
    Field.SUMMARY: (2.0, 0.5, 10.0),
    Field.PARAMS: (0.8, 0.5, 15.0),
    Field.RETURNS: (0.8, 0.5, 8.0),
    Field.DOC: (0.7, 0.75, 120.0),
    Field.PARENT: (0.5, 0.5, 10.0),
}


@dataclass(frozen=True, slots=True)
class ItemText:
    """The stemmed words of each field of an item."""

    fields: dict[Field, Counter[str]]
    lengths: dict[Field, int]

    def has(self, stem: str) -> bool:
        return any(stem in words for words in self.fields.values())


def _stems(text: str) -> list[str]:
    return [t.stem(w) for w in t.words_all(text)]


def item_text(item: Mapping[str, Any], summary: str, parent_summary: str = "") -> ItemText:
    """The fields of ``item`` (summary: its first sentence, computed by the caller)."""
    name = str(item.get("name") or "")
    texts: dict[Field, list[str]] = {
        Field.NAME: [t.stem(w) for w in t.name_tokens(name)],
        Field.SUMMARY: _stems(summary),
        Field.PARENT: _stems(parent_summary),
    }
    params: list[str] = []
    for param in item.get("params") or []:
        if isinstance(param, Mapping):
            params += _stems(f"{param.get('name') or ''} {param.get('description') or ''}")
    texts[Field.PARAMS] = params
    returns: list[str] = []
    for key in ("returns", "raises"):
        for value in item.get(key) or []:
            if isinstance(value, Mapping):
                returns += _stems(f"{value.get('type') or ''} {value.get('description') or ''}")
    texts[Field.RETURNS] = returns
    texts[Field.DOC] = _stems(str(item.get("doc") or "")[:DOC_CHARS])
    return ItemText(
        {f: Counter(w) for f, w in texts.items()}, {f: len(w) for f, w in texts.items()}
    )


def idf(found_in: int, items: int) -> float:
    """BM25's rarity of a word found in ``found_in`` of ``items`` items."""
    found_in = min(found_in, items)
    return math.log(1 + (items - found_in + 0.5) / (found_in + 0.5))


@dataclass(frozen=True, slots=True)
class Lexical:
    score: float
    matched: tuple[str, ...]  # the query words the item has
    coverage: float  # the share of the query's rarity (IDF) the item has, 0-1


def bm25f(words: Sequence[str], rarity: Mapping[str, float], text: ItemText) -> Lexical:
    """BM25F of an item for the query ``words`` (not stemmed), each of ``rarity``."""
    score, matched, had, total = 0.0, [], 0.0, 0.0
    for word in words:
        stem = t.stem(word)
        weight = rarity.get(word, 1.0)
        total += weight
        tf = 0.0
        for field, (boost, b, typical) in _FIELDS.items():
            n = text.fields[field].get(stem, 0)
            if n:
                tf += boost * n / (1 - b + b * text.lengths[field] / typical)
        if tf:
            score += weight * tf / (K1 + tf)
            matched.append(word)
            had += weight
    return Lexical(score, tuple(matched), had / total if total else 0.0)
