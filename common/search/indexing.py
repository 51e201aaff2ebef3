"""What a commit sends of an item to the search index, in one pass over its name and
summary (pure): the ``(slog, tag)`` of each of its terms (``terms.index_terms``, placed
by ``postings.term_log`` and ``postings.term_tag``) and the words of its vector
(``semantic.item_words``).

A consumer prepares every item it commits (``common/items.prepare``). Computed apart,
the two walk the name's components twice and the summary's words twice, and look each
term's hash up twice (its log, its tag); here each component's tokens come with their
terms' hashes and tags (cached a process: components repeat across items, a page's
module and class), each summary word with its stem's (cached too), and the terms an
item has alone (its whole name's, its last component's) are hashed without passing
through, and pushing useful entries out of, those caches. The result is exactly theirs
(``tests/unit/test_search_indexing.py`` holds it to them).
"""

from __future__ import annotations

from functools import lru_cache

from invcrawl.common.search import terms as t
from invcrawl.common.search.postings import TAG_BYTES, term_hash

# A term's 32-bit hash (its log: this modulo the crawl's logs) and its tag.
_Hashed = tuple[int, bytes]
# What item_index gives: the (slog, tag) of each term, and the vector's words.
Index = tuple[tuple[tuple[int, bytes], ...], tuple[str, ...]]


def _hashed(term: str) -> _Hashed:
    value = term_hash.__wrapped__(term)  # a term of one item: not worth a cache entry
    return value, value.to_bytes(TAG_BYTES, "big")


@lru_cache(maxsize=t.WORD_CACHE)
def _cached(term: str) -> _Hashed:
    value = term_hash(term)
    return value, value.to_bytes(TAG_BYTES, "big")


@lru_cache(maxsize=t.WORD_CACHE)
def _component(component: str) -> tuple[tuple[str, str, _Hashed], ...]:
    """Each token of a name's component, its NAME_PART term and that term's hash."""
    return tuple((token, term, _cached(term)) for token, term in t._name_part_terms(component))


@lru_cache(maxsize=t.WORD_CACHE)
def _word(word: str) -> tuple[str, str, _Hashed]:
    """A summary word's stem, its WORD term and that term's hash."""
    stemmed = t.stem(word)
    term = t._word_term(stemmed)
    return stemmed, term, _cached(term)


def item_index(name: str, summary: str, term_logs: int) -> Index:
    """``((term_hash(term) % term_logs, term_tag(term)) for each of index_terms(name,
    summary))`` and ``tuple(item_words(name, summary))``."""
    out: dict[str, _Hashed] = {}  # index_terms' terms, each once, in its order
    if "." in name.strip("."):
        term = t.full_name_term(name)
        out[term] = _hashed(term)
    last = t.last_component(name)
    term = t.last_term(name)
    out[term] = _hashed(term)
    prefix = t.prefix_term(last)
    if prefix is not None and len(last) > t.PREFIX_CHARS:
        out[prefix] = _cached(prefix)
    last_lower = last.lower()
    parts = 0  # index_terms' NAME_PART terms (repeats counted), NAME_TOKENS at most
    tokens: dict[str, None] = {}  # name_tokens: distinct, NAME_TOKENS at most
    for component in name[: t.NAME_CHARS].split("."):
        for token, term, hashed in _component(component):
            if token != last_lower and parts < t.NAME_TOKENS:
                parts += 1
                out.setdefault(term, hashed)
            if len(tokens) < t.NAME_TOKENS:
                tokens[token] = None
        if parts >= t.NAME_TOKENS and len(tokens) >= t.NAME_TOKENS:
            break
    words = t.words(summary)
    stems: set[str] = set()  # summary_words: distinct stems, SUMMARY_WORDS at most
    for word in words:
        stemmed, term, hashed = _word(word)
        if stemmed not in stems:
            stems.add(stemmed)
            out.setdefault(term, hashed)
            if len(stems) >= t.SUMMARY_WORDS:
                break
    return (
        tuple([(value % term_logs, tag) for value, tag in out.values()]),
        (*tokens, *words),
    )
