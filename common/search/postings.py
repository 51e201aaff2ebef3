"""Where the search index keeps a term's postings and an item's record (pure).

The index of a crawl (docs/search.md, docs/redis-keys.md) is two families of small
keys beside the dedup buckets, sized from the crawl's ``buckets`` (64 items each on
average: ``common/items.ITEMS_PER_BUCKET``):

* ``srec:<r>`` (hash, listpack-encoded): item digest (the ``isum`` field, 12 hex) → the
  stream entry id of its latest item; ``r`` is taken from the digest itself, so a
  posting leads to its record;
* ``slog:<h>`` (string): the postings of the terms whose SHA-1 falls in ``h``, appended
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
from functools import lru_cache

POSTING_BYTES = 6
TAG_BYTES = 4
ENTRY_BYTES = TAG_BYTES + POSTING_BYTES
MAX_POSTINGS = 100
TERM_BUCKETS_PER_BUCKET = 4  # ~11 postings an item: a log of ~1.8 KB (64 items a bucket)


def term_buckets(buckets: int) -> int:
    return max(1, buckets) * TERM_BUCKETS_PER_BUCKET


# Terms repeat across items (a page's module tokens, a summary's common words): each is
# hashed once a consumer process, while it stays among the TERM_HASH_CACHE most recent
# (docs/performance.md, "Figures behind the code's choices").
TERM_HASH_CACHE = 1 << 16


@lru_cache(maxsize=TERM_HASH_CACHE)
def term_hash(term: str) -> int:
    """32 bits of the SHA-1 of a term: its ``slog`` is this modulo the crawl's
    :func:`term_buckets`, its tag these bits."""
    return int.from_bytes(hashlib.sha1(term.encode("utf-8")).digest()[:4], "big")


def term_bucket(term: str, buckets: int) -> int:
    """The ``slog`` of ``term`` for a crawl of ``buckets`` dedup buckets."""
    return term_hash(term) % term_buckets(buckets)


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


def postings_in(log: bytes, tag: bytes) -> bytes:
    """The postings of the term tagged ``tag`` in a log, each item once, the first
    MAX_POSTINGS, joined (``search_lookup.lua`` does the same in Redis)."""
    seen: set[bytes] = set()
    out: list[bytes] = []
    at = log.find(tag)
    while at >= 0 and len(out) < MAX_POSTINGS:
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
