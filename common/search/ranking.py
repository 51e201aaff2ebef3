"""Queries, the terms they look up, and the name tiers of what they find (pure).

Name tiers, best first: the exact qualified name; its exact last component (or a
dotted tail of it: ``sessions.Session`` finds ``requests.sessions.Session``); a prefix
of either; a last component one or two edits away (a typo: ``Sesion``). Everything else
a query finds is ranked by its words and their meaning (``common/search/fusion.py``).
The comparison is case-insensitive. Within a name tier: the exact case first, then a
symbol that is not deprecated, the project whose name is the symbol's package, a
shorter name, an API object before a label.

The index (``frontier/search.py``) only proposes candidates: every candidate is ranked
again from its item, so a term of a changed or removed item never ranks it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from invcrawl.common.search import terms as t

MAX_QUERY_CHARS = 1000
MAX_QUERY_WORDS = 16
MAX_LIMIT = 100


class SearchInputError(ValueError):
    """A query or limit the search refuses; its message is one line, safe to show."""


class Tier(IntEnum):
    EXACT = 1
    LAST = 2
    PREFIX = 3
    FUZZY = 4
    TEXT = 5  # found by its words or their meaning


@dataclass(frozen=True, slots=True)
class Query:
    text: str  # as given, stripped (NFKC: a full-width ``ｓｅｓｓｉｏｎ`` is ``session``)
    folded: str  # lower-cased
    words: tuple[str, ...]  # its words (stopwords left out), at most MAX_QUERY_WORDS
    name_like: bool  # one word-ish run without white space: a name or part of one


def parse_query(text: str) -> Query:
    """The query ``text`` checked: any characters are fine (they are only compared, never
    a pattern); empty or longer than MAX_QUERY_CHARS is refused."""
    if not isinstance(text, str):
        raise SearchInputError("the query must be a string")
    stripped = text.strip()
    if not stripped:
        raise SearchInputError("empty query: give a name or a few words")
    if len(stripped) > MAX_QUERY_CHARS:
        raise SearchInputError(
            f"query of {len(stripped)} characters: at most {MAX_QUERY_CHARS} are searched"
        )
    stripped = unicodedata.normalize("NFKC", stripped).strip() or stripped
    name_like = not any(c.isspace() for c in stripped)
    found = t.words(stripped, MAX_QUERY_WORDS * 2)
    if name_like:
        tokens = t.name_tokens(stripped)[:MAX_QUERY_WORDS]
        found = list(dict.fromkeys([*tokens, *found]))
    else:
        asked = [w for w in found if w not in t.QUESTION_WORDS]
        found = asked or found  # a query of question words only keeps them
    return Query(stripped, stripped.lower(), tuple(found[:MAX_QUERY_WORDS]), name_like)


def check_limit(limit: int, most: int = MAX_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise SearchInputError(f"limit must be a whole number from 1 to {most}, not {limit!r}")
    return limit


@dataclass(frozen=True, slots=True)
class LookupTerm:
    term: str
    weight: float  # how much a candidate found under it counts, before ranking
    word: str = ""  # the query word it stands for ('' for a name term)


PHRASE_WORDS_LOOKED_UP = 8  # words of a phrase looked up in the index, at most
NAME_WEIGHTS = {t.FULL_NAME: 1000.0, t.LAST: 100.0, t.PREFIX: 10.0}
TYPO_WEIGHT = 4.0  # a prefix of the query with one of its first letters left out
WORD_WEIGHTS = {t.LAST: 3.0, t.NAME_PART: 2.0, t.WORD: 1.0}
MIN_TYPO_CHARS = 4  # shorter names are not corrected (``Sesn`` is no ``Session``)


def name_terms(query: Query) -> list[LookupTerm]:
    """The terms of the name tiers (exact, last component, prefix, a typo's prefixes) a
    name-like query looks up; none for a phrase."""
    if not query.name_like:
        return []
    out: dict[str, float] = {}
    if "." in query.text.strip("."):  # a name of one component has no whole-name term
        out[t.full_name_term(query.text)] = NAME_WEIGHTS[t.FULL_NAME]
    out[t.last_term(query.text)] = NAME_WEIGHTS[t.LAST]
    last = t.last_component(query.text).lower()
    prefix = t.prefix_term(last)
    if prefix is not None:
        out.setdefault(prefix, NAME_WEIGHTS[t.PREFIX])
    if len(last) >= MIN_TYPO_CHARS:
        # a typo in the first letters changes the prefix: each letter of the first
        # PREFIX_CHARS + 1 left out once (``Sesion``: ``esi``, ``ssi``, ``sei``, ``ses``)
        for n in range(t.PREFIX_CHARS + 1):
            variant = t.prefix_term(last[:n] + last[n + 1 :])
            if variant is not None:
                out.setdefault(variant, TYPO_WEIGHT)
    return [LookupTerm(term, weight) for term, weight in out.items()]


def word_terms(query: Query) -> list[LookupTerm]:
    """The terms of the query's words: each as a last component (``exists`` is
    ``os.path.exists``'s, which is no other token of its name), a token of a name and a
    word of a summary."""
    out: dict[str, LookupTerm] = {}
    words = query.words if query.name_like else query.words[:PHRASE_WORDS_LOOKED_UP]
    for word in words:
        term = t.cut(t.LAST + word)
        out.setdefault(term, LookupTerm(term, WORD_WEIGHTS[t.LAST], word))
        term = t.cut(t.NAME_PART + word)
        out.setdefault(term, LookupTerm(term, WORD_WEIGHTS[t.NAME_PART], word))
        term = t.cut(t.WORD + t.stem(word))
        out.setdefault(term, LookupTerm(term, WORD_WEIGHTS[t.WORD], word))
    return list(out.values())


def expansion_terms(
    neighbours: Mapping[str, float], known: set[str], weight: float = 0.6
) -> list[LookupTerm]:
    """Terms of words close in meaning to the query's (the semantic model's neighbours,
    with their similarity): each as a name token and a summary word, weighing less than
    the query's own words; none for a word it has already."""
    out: dict[str, LookupTerm] = {}
    for word, similarity in neighbours.items():
        if word in known or t.stem(word) in known:
            continue
        for kind in (t.NAME_PART, t.WORD):
            term = t.cut(kind + (t.stem(word) if kind == t.WORD else word))
            value = WORD_WEIGHTS[kind] * weight * similarity
            out.setdefault(term, LookupTerm(term, value, word))
    return list(out.values())


def lookup_terms(query: Query) -> list[LookupTerm]:
    """Every index term a query looks up (but the semantic model's), each once."""
    found = {term.term: term for term in word_terms(query)}
    found.update({term.term: term for term in name_terms(query)})
    return list(found.values())


# Roles of API objects first, then the rest (documents, labels, terms).
_ROLE_ORDER = {
    "module": 0,
    "class": 0,
    "exception": 0,
    "function": 0,
    "method": 1,
    "classmethod": 1,
    "staticmethod": 1,
    "property": 1,
    "attribute": 2,
    "data": 2,
}


def is_deprecated(item: Mapping[str, Any]) -> bool:
    """The item carries a deprecation note (``versions``, docs/items.md)."""
    notes = item.get("versions") or []
    return any(isinstance(n, Mapping) and n.get("kind") == "deprecated" for n in notes)


def _edits(a: str, b: str, most: int) -> int:
    """Damerau-Levenshtein distance (adjacent swaps count one), ``most + 1`` when
    larger."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            swapped = i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]
            if before is not None and swapped:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > most:
            return most + 1
        before, row = row, current
    return row[-1]


def typo_edits(query: str) -> int:
    """Edits a name may be away from a query and still be its typo."""
    return 0 if len(query) < MIN_TYPO_CHARS else 1 if len(query) < 8 else 2


def name_tier(query: Query, name: str) -> Tier:
    """The name tier of an item for ``query`` (TEXT: none of them)."""
    folded = name.lower()
    last = t.last_component(name).lower()
    if folded == query.folded and "." in name.strip("."):
        return Tier.EXACT
    # a name of one component is its own last component: the case then decides
    # (``Decimal`` is the class decimal.Decimal before the module decimal)
    if last == query.folded or folded.endswith("." + query.folded):
        return Tier.LAST
    if not query.name_like:
        return Tier.TEXT
    if folded.startswith(query.folded) or last.startswith(query.folded):
        return Tier.PREFIX
    wanted = t.last_component(query.text).lower()
    most = typo_edits(wanted)
    if most and _same_parent(query.folded, folded) and _edits(wanted, last, most) <= most:
        return Tier.FUZZY
    return Tier.TEXT


def _same_parent(query: str, folded: str) -> bool:
    """A dotted query's typo is one only in a symbol of the parent it names, or of one
    ending in it (``json.lods`` is ``json.loads``, ``path.joinn`` ``os.path.join``; not
    ``pickle.loads``); a query of one component names no parent."""
    parent = query.strip(".").rpartition(".")[0]  # (both folded by the caller)
    if not parent:
        return True
    held = folded.rpartition(".")[0]
    return held == parent or held.endswith("." + parent)


def is_c_api(domain: str) -> bool:
    return domain in ("c", "cpp")


def _package_match(name: str, project: str) -> bool:
    """The project is named as the symbol's top-level package (``requests.Session`` in
    project Requests; ``python-foo``, ``foo_bar`` and ``Foo Bar`` compare alike)."""
    top = name.split(".", 1)[0].lower().replace("_", "").replace("-", "")
    wanted = "".join(c for c in project.lower() if c.isalnum())
    return bool(top) and (wanted == top or wanted == "python" + top or wanted == top + "py")


def name_fine(
    query: Query, name: str, role: str, domain: str, *, project: str, deprecated: bool
) -> float:
    """The order within a name tier, in [0, 1): the exact case, not deprecated, the
    project of the symbol's package, a shorter name, an API object."""
    exact_case = name == query.text or t.last_component(name) == query.text
    fine = 0.3 * exact_case + 0.2 * (not deprecated) + 0.15 * _package_match(name, project)
    return min(fine + 0.33 * tie_break(name, role, domain), 0.99)


def tie_break(name: str, role: str, domain: str) -> float:
    """In [0, 1]: a shorter name, then an API object before a label."""
    shortness = 1.0 / (1.0 + name.count(".") + len(name) / 200)
    api = 1.0 if domain in ("py", "") else 0.5
    role_rank = 1.0 - _ROLE_ORDER.get(role, 3) / 4
    return 0.7 * shortness + 0.3 * role_rank * api


def package_match(name: str, project: str) -> bool:
    return _package_match(name, project)


@dataclass(frozen=True, slots=True)
class Ranked:
    tier: Tier
    score: float  # higher first: 6 - tier plus the order within a name tier; TEXT: 0-1


def rank(
    query: Query,
    name: str,
    summary: str,
    role: str,
    domain: str = "",
    *,
    deprecated: bool = False,
    project: str = "",
) -> Ranked | None:
    """An item's tier and score from its name and summary alone (None: no match); the
    search itself ranks TEXT by ``fusion.order``, over every field and the meaning."""
    tier = name_tier(query, name)
    if tier is not Tier.TEXT:
        fine = name_fine(query, name, role, domain, project=project, deprecated=deprecated)
        return Ranked(tier, 6 - int(tier) + fine)
    if not query.words:
        return None
    tokens = set(t.name_tokens(name))
    stems = set(t.summary_words(summary))
    found = sum(1 for w in query.words if w in tokens or t.stem(w) in stems)
    return Ranked(tier, 0.99 * found / len(query.words)) if found else None
