"""Where the search index keeps a term's postings and an item's record (pure).

The index of a crawl (docs/search.md, docs/redis-keys.md) is two families of small
keys beside the dedup buckets, sized from the crawl's ``buckets`` (64 items each on
average: ``common/items.ITEMS_PER_BUCKET``):

* ``srec:<r>`` (hash, listpack-encoded): item digest (the ``isum`` field, 12 hex) → the
  stream entry id of its latest item; ``r`` is taken from the digest itself, so a
  posting leads to its record;
* ``slog:<h>`` (string): the postings of the terms whose SHA-1 falls in ``h`` (one of
  the crawl's ``term_logs``, fixed when it is created: :func:`term_logs_for`), appended
  as they are committed, ENTRY_BYTES each: the term's tag (TAG_BYTES of its SHA-1) and
  the item's digest (POSTING_BYTES, binary). A commit appends each log it touches once
  (``APPEND``: no read, no scan of what is there), so keeping the index costs Redis a
  call per log a page touches, not a read and a write of every term
  (docs/performance.md, "The term log"). A lookup reads a log and keeps the entries of
  its term's tag (:func:`postings_in`, and ``search_lookup.lua`` the same), each item
  once, the first MAX_POSTINGS: a term found in more items tells nothing apart by
  then, and ranking reads the items anyway.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

POSTING_BYTES = 6
TAG_BYTES = 4
ENTRY_BYTES = TAG_BYTES + POSTING_BYTES
MAX_POSTINGS = 100
# A crawl has one term log per BUCKETS_PER_TERM_LOG dedup buckets (~256 items, ~11
# postings each: ~28 KB a log). A CPython page's postings fall in 57 of its 61 logs, one
# APPEND each; under four logs a bucket (~1.8 KB each, the layout of crawls created
# before ``term_logs`` was recorded) they fell in 162, and the calls, not the bytes,
# were the index's cost in commit.lua. The price is at lookup, which reads a term's
# whole log: about twice the Redis time for a crawl of CPython's size (docs/performance.md,
# "Fewer, longer term logs").
BUCKETS_PER_TERM_LOG = 4
FIRST_TERM_LOGS_PER_BUCKET = 4  # crawls whose meta has no term_logs


def term_logs_for(buckets: int) -> int:
    """The term logs of a crawl created with ``buckets`` dedup buckets."""
    return max(1, buckets // BUCKETS_PER_TERM_LOG)


def stored_term_logs(value: str | bytes | None, buckets: int) -> int:
    """A crawl's term logs from its meta's ``term_logs`` (``None``: a crawl created
    before it was recorded, indexed under FIRST_TERM_LOGS_PER_BUCKET logs a bucket)."""
    if value:
        return max(1, int(value))
    return max(1, buckets) * FIRST_TERM_LOGS_PER_BUCKET


# Terms repeat across items (a page's module tokens, a summary's common words): each is
# hashed once a consumer process, while it stays among the TERM_HASH_CACHE most recent
# (docs/performance.md, "Figures behind the code's choices").
TERM_HASH_CACHE = 1 << 16


@lru_cache(maxsize=TERM_HASH_CACHE)
def term_hash(term: str) -> int:
    """32 bits of the SHA-1 of a term: its ``slog`` is this modulo the crawl's term
    logs, its tag these bits."""
    return int.from_bytes(hashlib.sha1(term.encode("utf-8")).digest()[:4], "big")


def term_log(term: str, term_logs: int) -> int:
    """The ``slog`` of ``term`` in a crawl of ``term_logs`` term logs."""
    return term_hash(term) % term_logs


def record_bucket(field: str, buckets: int) -> int:
    """The ``srec`` hash of an item whose dedup digest is ``field`` (12 hex)."""
    return int(field[:8], 16) % max(1, buckets)


def posting(field: str) -> bytes:
    return bytes.fromhex(field)


@lru_cache(maxsize=TERM_HASH_CACHE)
def term_tag(term: str) -> bytes:
    """The tag of ``term``'s entries in its log: the first TAG_BYTES of its SHA-1 (two
    terms of one log with the same tag share their postings: a candidate too many,
    which ranking, reading the item, drops)."""
    return term_hash(term).to_bytes(TAG_BYTES, "big")


def postings_in(log: bytes, tag: bytes, most: int | None = MAX_POSTINGS) -> bytes:
    """The postings of the term tagged ``tag`` in a log, each item once, in the log's
    order, the first ``most`` (None: all), joined."""
    seen: set[bytes] = set()
    out: list[bytes] = []
    at = log.find(tag)
    while at >= 0 and (most is None or len(out) < most):
        if at % ENTRY_BYTES == 0:  # an entry's start: not bytes inside a posting
            mine = log[at + TAG_BYTES : at + ENTRY_BYTES]
            if len(mine) == POSTING_BYTES and mine not in seen:
                seen.add(mine)
                out.append(mine)
            at = log.find(tag, at + ENTRY_BYTES)
        else:
            at = log.find(tag, at + 1)
    return b"".join(out)


def fields_of(postings: bytes) -> list[str]:
    """The item digests (12 hex) of a run of postings."""
    return [
        postings[i : i + POSTING_BYTES].hex()
        for i in range(0, len(postings) - POSTING_BYTES + 1, POSTING_BYTES)
    ]


@dataclass(frozen=True, slots=True)
class Scored:
    """The candidates of one crawl (:func:`score_postings`)."""

    counts: list[int]  # per term, the items it was found in
    fields: list[str]  # item digests (12 hex), best first
    scores: list[float]


def score_postings(
    found: Sequence[bytes], weights: Sequence[int], wanted: int, items: int, spread: int
) -> Scored:
    """The best ``wanted`` candidates of a crawl from every posting of each term
    (``found``, joined, as :func:`postings_in` with ``most=None``) and the terms'
    weights (times 1000): ``search_lookup.lua``'s rule, for a Redis user without
    scripts. A term adds its weight times its rarity among the crawl's ``items`` to each
    item it was found in; terms rarest first, and one found in more than ``spread``
    items only adds to items a rarer one found (unless none did): a word on every page
    proposes nothing. Ties fall to the posting's bytes, never to the commit order."""
    terms = [
        (len(postings) // POSTING_BYTES, n, postings, weight / 1000)
        for n, (postings, weight) in enumerate(zip(found, weights, strict=True))
    ]
    scores: dict[bytes, float] = {}
    for count, _, postings, weight in sorted(terms, key=lambda t: (t[0], t[1])):
        value = weight * (1 + math.log((1 + items) / (1 + count)))
        opens = count <= spread or not scores
        for at in range(0, len(postings), POSTING_BYTES):
            posting = postings[at : at + POSTING_BYTES]
            had = scores.get(posting)
            if had is not None:
                scores[posting] = had + value
            elif opens:
                scores[posting] = value
    best = heapq.nsmallest(wanted, scores, key=lambda p: (-scores[p], p))
    return Scored(
        [t[0] for t in terms],
        [p.hex() for p in best],
        [math.floor(scores[p] * 1000 + 0.5) / 1000 for p in best],
    )
