"""Where the search index keeps a term's postings and an item's record (pure).

The index of a crawl (docs/search.md, docs/redis-keys.md) is two families of small
hashes beside the dedup buckets, sized from the crawl's ``buckets`` (64 items each on
average: ``common/items.ITEMS_PER_BUCKET``) so each stays listpack-encoded:

* ``srec:<r>``: item digest (the ``isum`` field, 12 hex) → the stream entry id of its
  latest item; ``r`` is taken from the digest itself, so a posting leads to its record;
* ``sterm:<h>``: term → its postings, 6 bytes per item (the digest, binary), in chunks
  of CHUNK_POSTINGS: the first under the term itself, the next ones under the term, a
  NUL and the chunk number (a hash field over 64 bytes would turn its whole hash into a
  hashtable, several times the memory). A term found in more than MAX_POSTINGS items
  gets no more: it tells nothing apart by then, and ranking reads the items anyway.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

POSTING_BYTES = 6
CHUNK_POSTINGS = 10  # 60 bytes a field: under hash-max-listpack-value (64)
CHUNK_BYTES = POSTING_BYTES * CHUNK_POSTINGS
MAX_CHUNKS = 10
MAX_POSTINGS = CHUNK_POSTINGS * MAX_CHUNKS
TERM_BUCKETS_PER_BUCKET = 4  # ~3.5 fields an item: ~56 fields a term hash


def term_buckets(buckets: int) -> int:
    return max(1, buckets) * TERM_BUCKETS_PER_BUCKET


# Terms repeat across items (a page's module tokens, a summary's common words): each is
# hashed once a consumer process, while it stays among the TERM_HASH_CACHE most recent
# (docs/performance.md, "Figures behind the code's choices").
TERM_HASH_CACHE = 1 << 16


@lru_cache(maxsize=TERM_HASH_CACHE)
def term_hash(term: str) -> int:
    """32 bits of the SHA-1 of a term: its ``sterm`` hash is this modulo the crawl's
    :func:`term_buckets`."""
    return int.from_bytes(hashlib.sha1(term.encode("utf-8")).digest()[:4], "big")


def term_bucket(term: str, buckets: int) -> int:
    """The ``sterm`` hash of ``term`` for a crawl of ``buckets`` dedup buckets."""
    return term_hash(term) % term_buckets(buckets)


def record_bucket(field: str, buckets: int) -> int:
    """The ``srec`` hash of an item whose dedup digest is ``field`` (12 hex)."""
    return int(field[:8], 16) % max(1, buckets)


def posting(field: str) -> bytes:
    return bytes.fromhex(field)


def chunk_fields(term: str) -> list[bytes]:
    """The hash fields a term's postings may be in, in order."""
    base = term.encode("utf-8")
    return [base] + [base + b"\0" + bytes([n]) for n in range(1, MAX_CHUNKS)]


def fields_of(postings: bytes) -> list[str]:
    """The item digests (12 hex) of a run of postings."""
    return [
        postings[i : i + POSTING_BYTES].hex()
        for i in range(0, len(postings) - POSTING_BYTES + 1, POSTING_BYTES)
    ]
