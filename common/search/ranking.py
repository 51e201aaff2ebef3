"""Queries and the ranking tiers of what they find (pure).

Tiers, best first: the exact qualified name; its exact last component (or a dotted
tail of it: ``sessions.Session`` finds ``requests.sessions.Session``); a prefix of
either; the name's tokens; the words of its summary. The comparison is
case-insensitive. Within a tier, an item whose name matched more of the query words
comes first, then a shorter name (``requests.Session`` before
``requests.sessions.Session``), then an API object before a document label.

The index (``frontier/search.py``) only proposes candidates: every candidate is ranked
here again from its item, so a term of a changed or removed item never ranks it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from invcrawl.common.search import terms as t
from invcrawl.common.search.postings import MAX_POSTINGS

MAX_QUERY_CHARS = 1000
MAX_QUERY_WORDS = 16
MAX_LIMIT = 100


class SearchInputError(ValueError):
    """A query or limit the search refuses; its message is one line, safe to show."""


class Tier(IntEnum):
    EXACT = 1
    LAST = 2
    PREFIX = 3
    TOKENS = 4
    SUMMARY = 5


@dataclass(frozen=True, slots=True)
class Query:
    text: str  # as given, stripped
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
    name_like = not any(c.isspace() for c in stripped)
    found = t.words(stripped, MAX_QUERY_WORDS)
    if name_like:
        tokens = t.name_tokens(stripped)[:MAX_QUERY_WORDS]
        found = list(dict.fromkeys([*tokens, *found]))[:MAX_QUERY_WORDS]
    return Query(stripped, stripped.lower(), tuple(found), name_like)


def check_limit(limit: int, most: int = MAX_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise SearchInputError(f"limit must be a whole number from 1 to {most}, not {limit!r}")
    return limit


@dataclass(frozen=True, slots=True)
class LookupTerm:
    term: str
    weight: float  # how much a candidate found under it counts, before ranking


PHRASE_WORDS_LOOKED_UP = 8  # words of a phrase looked up in the index, at most
NAME_WEIGHTS = {t.FULL_NAME: 1000.0, t.LAST: 100.0, t.PREFIX: 10.0}


def name_terms(query: Query) -> list[LookupTerm]:
    """The terms of the name tiers (exact, last component, prefix) a name-like query
    looks up first; none for a phrase."""
    if not query.name_like:
        return []
    out: dict[str, float] = {}
    if "." in query.text.strip("."):  # a name of one component has no whole-name term
        out[t.full_name_term(query.text)] = NAME_WEIGHTS[t.FULL_NAME]
    out[t.last_term(query.text)] = NAME_WEIGHTS[t.LAST]
    prefix = t.prefix_term(t.last_component(query.text))
    if prefix is not None:
        out.setdefault(prefix, NAME_WEIGHTS[t.PREFIX])
    return [LookupTerm(term, weight) for term, weight in out.items()]


def word_terms(query: Query) -> list[LookupTerm]:
    """The terms of the token and summary tiers: each word as a token of a name and as a
    word of a summary (and, for a name-like query, as a last component)."""
    out: dict[str, float] = {}
    words = query.words if query.name_like else query.words[:PHRASE_WORDS_LOOKED_UP]
    for word in words:
        if query.name_like:
            out.setdefault(t.cut(t.LAST + word), 3.0)
        out.setdefault(t.cut(t.NAME_PART + word), 2.0)
        out.setdefault(t.cut(t.WORD + t.stem(word)), 1.0)
    return [LookupTerm(term, weight) for term, weight in out.items()]


def lookup_terms(query: Query) -> list[LookupTerm]:
    """Every index term a query may look up, with its weight (higher: a better tier)."""
    found = {term.term: term for term in word_terms(query)}
    found.update({term.term: term for term in name_terms(query)})
    return list(found.values())


FULL_TERM_SHARE = 10  # a term with MAX_POSTINGS postings counts as in 1/10 of the items


def term_weight(weight: float, postings: int, items: int) -> float:
    """A term's contribution to a candidate's rough score: its kind's weight, times how
    rare it is among the crawl's items (a word on every page counts little). A term
    that reached MAX_POSTINGS took no more: it is in many more items than it holds."""
    if postings >= MAX_POSTINGS:
        postings = max(postings, items // FULL_TERM_SHARE)
    return weight * (1.0 + math.log((1 + items) / (1 + postings)))


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


@dataclass(frozen=True, slots=True)
class Ranked:
    tier: Tier
    score: float  # higher first: 6 - tier, plus a fraction within the tier


def is_deprecated(item: Mapping[str, Any]) -> bool:
    """The item carries a deprecation note (``versions``, docs/items.md)."""
    notes = item.get("versions") or []
    return any(isinstance(n, Mapping) and n.get("kind") == "deprecated" for n in notes)


def rank(
    query: Query,
    name: str,
    summary: str,
    role: str,
    domain: str = "",
    *,
    deprecated: bool = False,
) -> Ranked | None:
    """The tier and score of an item for ``query``; None when it does not match. Within
    a name tier, the exact case first (``Popen`` is ``subprocess.Popen`` before
    ``os.popen``) and a deprecated symbol last (``typing.OrderedDict``)."""
    folded = name.lower()
    last = t.last_component(name).lower()
    tier: Tier | None = None
    coverage = 1.0
    if folded == query.folded and "." in name.strip("."):
        tier = Tier.EXACT
    # a name of one component is its own last component: the case then decides
    # (``Decimal`` is the class decimal.Decimal before the module decimal)
    elif last == query.folded or folded.endswith("." + query.folded):
        tier = Tier.LAST
    elif query.name_like and (folded.startswith(query.folded) or last.startswith(query.folded)):
        tier = Tier.PREFIX
    else:
        if not query.words:
            return None
        tokens = set(t.name_tokens(name))
        stems = set(t.summary_words(summary))
        in_name = sum(1 for w in query.words if w in tokens)
        in_summary = sum(1 for w in query.words if t.stem(w) in stems or w in tokens)
        if not in_summary:
            return None
        tier = Tier.TOKENS if in_name else Tier.SUMMARY
        # how much of the query the item covers, a word of its name counting more
        coverage = (in_summary + 0.5 * in_name) / (1.5 * len(query.words))
        if not query.name_like:
            # A phrase: its words, in the name or the summary, weigh alike across both
            # tiers ("deserialize a JSON document" is json.loads's summary, not a name).
            return Ranked(tier, 2 + min(0.99 * coverage + 0.009 * _fine(name, role, domain), 0.99))
    exact_case = name == query.text or t.last_component(name) == query.text
    current = 0.0 if deprecated else 1.0
    fine = 0.4 * coverage + 0.2 * exact_case + 0.15 * current + 0.24 * _fine(name, role, domain)
    return Ranked(tier, 6 - int(tier) + min(fine, 0.99))


def _fine(name: str, role: str, domain: str) -> float:
    """A tie-break in [0, 1]: a shorter name, then an API object before a label."""
    shortness = 1.0 / (1.0 + name.count(".") + len(name) / 200)
    api = 1.0 if domain in ("py", "") else 0.5
    role_rank = 1.0 - _ROLE_ORDER.get(role, 3) / 4
    return 0.7 * shortness + 0.3 * role_rank * api


def rank_order(hits: Sequence[tuple[Ranked, str]]) -> list[int]:
    """Indexes of ``hits`` (ranked, a tie-break such as the key) best first."""
    return sorted(range(len(hits)), key=lambda i: (-hits[i][0].score, hits[i][1]))
