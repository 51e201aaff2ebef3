"""The vector log of a crawl (``invcrawl:{C}:svec``, docs/search.md): the item vectors
the semantic candidates are taken from, appended at commit, read by every search (pure:
numpy given by the caller, no Redis).

A record is RECORD_BYTES: the item's digest (the POSTING_BYTES the term logs hold, the
``isum`` field in binary) and its vector, DIMS int8 (the unit vector of
``semantic.item_words``, times 127, rounded). A removed item, or one of no word the
model knows, is a record of zeros (a unit vector rounds to no zero row: one of its
components is at least 1/sqrt(DIMS), 11 once scaled). Records are read in order and an
item's last one wins, so a changed item is appended again and a tombstone is appended
once. One log a crawl: a page's records are one ``APPEND``, whatever its items (a log a
group of buckets would be one a group the page touches), and a reader reads one key
from the offset it read to.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from invcrawl.common.search.postings import POSTING_BYTES

DIMS = 128  # the shipped model's (common/search/model/static.npz)
SCALE = 127.0  # a unit vector's components times this, as int8
RECORD_BYTES = POSTING_BYTES + DIMS
REMOVED = bytes(DIMS)  # the vector of a removed item (or of no known word)
_PLACES = [256**n for n in range(POSTING_BYTES - 1, -1, -1)]


def records(np: Any, digests: Sequence[str], vectors: Sequence[Any]) -> bytes:
    """The log records of items (digest: 12 hex; vector: a unit vector, None: REMOVED),
    joined, in one numpy pass."""
    out = np.zeros((len(digests), RECORD_BYTES), dtype=np.uint8)
    if not len(digests):
        return b""
    out[:, :POSTING_BYTES] = np.frombuffer(bytes.fromhex("".join(digests)), dtype=np.uint8).reshape(
        -1, POSTING_BYTES
    )
    rows = [n for n, v in enumerate(vectors) if v is not None]
    if rows:
        packed = np.rint(np.stack([vectors[n] for n in rows]) * SCALE).astype(np.int8)
        out[rows, POSTING_BYTES:] = packed.view(np.uint8)
    return bytes(out.tobytes())


def each_record(data: bytes) -> Iterator[tuple[str, bytes, bytes]]:
    """Each whole record of ``data``, in order: (its item's digest as 12 hex, its vector's
    bytes, the record); without numpy, for a reader of a few records at a time."""
    for at in range(0, len(data) - RECORD_BYTES + 1, RECORD_BYTES):
        record = data[at : at + RECORD_BYTES]
        yield record[:POSTING_BYTES].hex(), record[POSTING_BYTES:], record


def decode(np: Any, data: bytes) -> tuple[Any, Any]:
    """(digests as uint64, int8 vectors) of the whole records of ``data``, in order."""
    whole = len(data) - len(data) % RECORD_BYTES
    table = np.frombuffer(data, dtype=np.uint8, count=whole).reshape(-1, RECORD_BYTES)
    keys = table[:, :POSTING_BYTES].astype(np.uint64) @ np.array(_PLACES, dtype=np.uint64)
    return keys, table[:, POSTING_BYTES:].view(np.int8)


def last_records(np: Any, keys: Any, vectors: Any) -> tuple[Any, Any]:
    """Each item's last record of (keys, vectors), removed ones included (zero rows):
    (keys sorted, their vectors)."""
    if not len(keys):
        return keys, vectors
    _, first = np.unique(keys[::-1], return_index=True)
    last = len(keys) - 1 - first  # in keys' sorted order
    return keys[last], vectors[last]


def hex_digest(key: int) -> str:
    """The digest (12 hex) of a key of :func:`decode`."""
    return f"{int(key):012x}"
