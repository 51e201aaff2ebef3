"""How an item's JSON is stored in the item stream: compressed with zstd (level 3) and
written as base64 text behind a one-letter marker, so that the stream's ``data`` field
costs well under half the JSON (3,071 -> about 1,140 bytes per item on the CPython docs).

Why zstd, measured on 5,475 CPython items: zstd 856 B/item at 20 us, zlib-6 875 B at
51 us; a dictionary trained on other sites' items saves 20% more, not worth a dictionary
to ship and version. The project's one Redis client decodes replies as UTF-8, so the
stored value must be text. Why base64 and not base85 (which costs 25% instead of 33%):
Python's base85 is pure Python, 60-75 us per item each way, 40 times base64's C code;
measured on 40 sites (88,500 items), base85 decoding alone was two thirds of the crawl
supervisor's CPU while it streamed items into the output files.

Readers call :func:`item_json` (:func:`item_bytes` on a reply read as bytes): a value
that starts with ``{`` is plain JSON (an item written before compression, or a
tombstone, which the Lua scripts write themselves); one that starts with ``B`` is zstd as
base64, ``Z`` zstd as base85 (written by earlier versions; still read). The item's
checksum is computed over the uncompressed canonical JSON (``common/items.py``), so
dedup never depends on this. Pure: no Redis, no Scrapy.
"""

from __future__ import annotations

import base64
import binascii
import threading

import zstandard

MARK = "B"  # zstd, base64
MARK_B85 = "Z"  # zstd, base85: read only
LEVEL = 3
MIN_BYTES = 200  # shorter JSON (status items) gains nothing: stored as is


class _Contexts(threading.local):
    """One zstd compression and one decompression context per thread, reused for every
    item: setting a context up cost as much as the work on ~3.5 KB items (compression
    22 -> 13 us an item; decompression 24 -> 2 us, docs/performance.md). The frames are
    byte-identical to a one-shot ``compress`` at the same level (a test checks it), and
    each item is still a whole frame, readable alone. A context is not safe to share
    between threads, hence one per thread."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(level=LEVEL)
        self.decompressor = zstandard.ZstdDecompressor()


_CONTEXTS = _Contexts()


def _decompress(frame: bytes | memoryview) -> bytes:
    try:
        return _CONTEXTS.decompressor.decompress(frame)
    except zstandard.ZstdError:
        # A frame without its content size in the header (no writer here makes one):
        # the streaming reader does not need it.
        return _CONTEXTS.decompressor.decompressobj().decompress(frame)


def stored_item(data: bytes) -> str:
    """What goes into the stream's ``data`` field for this item JSON."""
    if len(data) < MIN_BYTES:
        return data.decode("utf-8")
    frame = _CONTEXTS.compressor.compress(data)
    return MARK + base64.b64encode(frame).decode("ascii")


def item_bytes(value: bytes) -> bytes:
    """:func:`item_json` of a ``data`` field read as bytes, as UTF-8 bytes: for a reader
    that only copies items into a file (no UTF-8 decoding of the reply or of the JSON,
    no encoding back for the write)."""
    mark = value[:1]
    if mark == b"B":
        # (binascii directly: base64.b64decode copies a memoryview into bytes first)
        return _decompress(binascii.a2b_base64(memoryview(value)[1:]))
    if mark == b"Z":
        return _decompress(base64.b85decode(value[1:]))
    return value


def item_json(value: str) -> str:
    """The item JSON back from a stream ``data`` field (compressed or not)."""
    mark = value[:1]
    if mark == MARK:
        return _decompress(base64.b64decode(value[1:])).decode("utf-8")
    if mark == MARK_B85:
        return _decompress(base64.b85decode(value[1:])).decode("utf-8")
    return value
