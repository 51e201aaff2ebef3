"""How an item's JSON is stored in the item stream: as a zstd frame (level 1), binary,
so that the stream's ``data`` field costs well under half the JSON (4,750 -> about 1,360
bytes per item on the CPython docs).

Why zstd, measured on 5,475 CPython items: zstd 856 B/item at 20 us, zlib-6 875 B at
51 us; a dictionary trained on other sites' items saves 20% more, not worth a dictionary
to ship and version. Why level 1: on 15,595 CPython items, 22-27 us an item against
26-32 us at level 3, for 8 % more bytes (1,361 against 1,261), which the 2 KB an item
of ``--retain-items all`` affords now that the frame is stored as is.

Why binary: earlier versions wrote the frame as text (base64 behind a ``B``, base85
behind a ``Z``), because the project's Redis client decodes replies as UTF-8. That cost
a third more bytes in Redis, in its AOF and on every read, and 7 us an item to encode
and decode (the crawl supervisor decodes every item it writes to its output). Readers
now ask for stream replies undecoded (``frontier/stream.py``).

Readers call :func:`item_bytes` (or :func:`item_json`) on the ``data`` field as bytes: a
value that starts with zstd's magic number is a frame; one that starts with ``{`` is
plain JSON (a short item, a tombstone, which the Lua scripts write themselves, or an
item written before compression); ``B`` and ``Z`` are the text forms of earlier
versions, still read. The item's checksum is computed over the uncompressed canonical
JSON (``common/items.py``), so dedup never depends on this. Pure: no Redis, no Scrapy.
"""

from __future__ import annotations

import base64
import binascii
import threading

import zstandard

MAGIC = b"\x28\xb5\x2f\xfd"  # the first 4 bytes of every zstd frame (RFC 8878)
MARK_B64 = b"B"  # zstd as base64 text: written by earlier versions, read only
MARK_B85 = b"Z"  # zstd as base85 text: the same
LEVEL = 1
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


def stored_item(data: bytes) -> bytes:
    """What goes into the stream's ``data`` field for this item JSON."""
    if len(data) < MIN_BYTES:
        return data
    return _CONTEXTS.compressor.compress(data)


def item_bytes(value: bytes) -> bytes:
    """The item JSON (UTF-8 bytes) back from a stream ``data`` field read as bytes."""
    if value.startswith(MAGIC):
        return _decompress(value)
    mark = value[:1]
    if mark == MARK_B64:
        # (binascii directly: base64.b64decode copies a memoryview into bytes first)
        return _decompress(binascii.a2b_base64(memoryview(value)[1:]))
    if mark == MARK_B85:
        return _decompress(base64.b85decode(value[1:]))
    return value


def item_json(value: bytes) -> str:
    """:func:`item_bytes` as text."""
    return item_bytes(value).decode("utf-8")
