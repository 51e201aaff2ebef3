"""Item bodies in the stream (common/codec.py): compressed both ways, stored as a whole
zstd frame each; old plain values, tombstones and the text forms of earlier versions
(base64, base85) still read."""

from __future__ import annotations

import base64
import sys
import threading

import orjson
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from invcrawl.common.codec import LEVEL, MAGIC, MIN_BYTES, item_bytes, item_json, stored_item
from invcrawl.common.items import ItemLayout, prepare

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the PEP 784 backport, which wrote the stream's frames before (Scrapy installs it)
    from backports import zstd

ITEM = {
    "key": "py:function:json.dumps",
    "status": "ok",
    "doc": "Serialize obj to a JSON formatted str using this conversion table. " * 20,
    "checksum": "0123456789abcdef",
}


def test_a_real_sized_item_is_stored_compressed_and_read_back() -> None:
    data = orjson.dumps(ITEM)
    stored = stored_item(data)
    assert stored.startswith(MAGIC) and len(stored) < len(data) / 2.5
    assert item_json(stored) == data.decode()
    assert item_bytes(stored) == data


def test_short_items_plain_values_and_tombstones_read_as_is() -> None:
    short = b'{"key":"k","status":"skipped"}'
    assert len(short) < MIN_BYTES and stored_item(short) == short
    tombstone = b'{"key": "k", "status": "removed"}'  # as tombstone.lua writes it
    assert item_json(tombstone) == tombstone.decode() and item_bytes(tombstone) == tombstone


def test_prepare_stores_compressed_and_keeps_the_checksum_of_the_json() -> None:
    prepared = prepare(ITEM, ItemLayout(4, 1))
    assert prepared.data.startswith(MAGIC)
    assert orjson.loads(item_json(prepared.data)) == ITEM
    assert prepared.value.startswith(ITEM["checksum"][:12])


def test_values_written_as_text_by_earlier_versions_still_read() -> None:
    # Base64 (the last text form) and base85 (the one before), behind their letters.
    data = orjson.dumps(ITEM)
    frame = zstd.compress(data, 3)
    for legacy in (b"B" + base64.b64encode(frame), b"Z" + base64.b85encode(frame)):
        assert item_json(legacy) == data.decode() and item_bytes(legacy) == data


@given(st.text(min_size=0, max_size=3000))
def test_round_trip_of_any_text(text: str) -> None:
    data = orjson.dumps({"doc": text})
    assert item_json(stored_item(data)) == data.decode()


def test_the_shared_compressor_writes_the_frame_a_one_shot_compress_writes() -> None:
    # Every item is a whole frame of its own (readable alone), and reusing the context
    # changes no stored byte: values written before and after it, and by the standard
    # library's zstd of earlier versions, compare equal.
    for doc in ("a", "b" * 5000, "Serialize obj. " * 300):
        data = orjson.dumps({**ITEM, "doc": doc})
        if len(data) >= MIN_BYTES:
            assert stored_item(data) == zstd.compress(data, LEVEL)


def test_frames_of_other_writers_are_read_streamed_or_not() -> None:
    # A frame with no content size in its header (a streaming writer's) is read too.
    data = orjson.dumps({**ITEM, "doc": "streamed " * 400})
    streamed = zstandard.ZstdCompressor(level=3, write_content_size=False)
    frame = streamed.compressobj()
    body = frame.compress(data) + frame.flush()
    assert item_bytes(body) == data
    assert item_bytes(b"B" + base64.b64encode(body)) == data


def test_each_thread_gets_its_own_contexts() -> None:
    # zstd contexts are not safe to share: threads encoding and decoding at once each
    # get their own, and every round trip is exact.
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(200):
                data = orjson.dumps({**ITEM, "doc": f"thread {n} item {i} " * 50})
                assert item_json(stored_item(data)) == data.decode()
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
