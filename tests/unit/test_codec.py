"""Item bodies in the stream (common/codec.py): compressed both ways, old plain values
and tombstones still read, and the stored form is text the UTF-8 client can carry."""

from __future__ import annotations

import base64

import orjson
from hypothesis import given
from hypothesis import strategies as st

from common.codec import MIN_BYTES, item_json, stored_item, zstd
from common.items import prepare

ITEM = {
    "key": "py:function:json.dumps",
    "status": "ok",
    "doc": "Serialize obj to a JSON formatted str using this conversion table. " * 20,
    "checksum": "0123456789abcdef",
}


def test_a_real_sized_item_is_stored_compressed_and_read_back() -> None:
    data = orjson.dumps(ITEM)
    stored = stored_item(data)
    assert stored.startswith("B") and len(stored) < len(data) / 2.5
    assert stored.isascii()
    assert item_json(stored) == data.decode()


def test_short_items_plain_values_and_tombstones_read_as_is() -> None:
    short = b'{"key":"k","status":"skipped"}'
    assert len(short) < MIN_BYTES and stored_item(short) == short.decode()
    assert item_json('{"key": "k", "status": "removed"}') == '{"key": "k", "status": "removed"}'


def test_prepare_stores_compressed_and_keeps_the_checksum_of_the_json() -> None:
    prepared = prepare(ITEM, 4)
    assert prepared.data.startswith("B")
    assert orjson.loads(item_json(prepared.data)) == ITEM
    assert prepared.value.startswith(ITEM["checksum"][:12])


def test_values_written_as_base85_by_earlier_versions_still_read() -> None:
    data = orjson.dumps(ITEM)
    legacy = "Z" + base64.b85encode(zstd.compress(data)).decode("ascii")
    assert item_json(legacy) == data.decode()


@given(st.text(min_size=0, max_size=3000))
def test_round_trip_of_any_text(text: str) -> None:
    data = orjson.dumps({"doc": text})
    assert item_json(stored_item(data)) == data.decode()


def test_the_shared_compressor_writes_the_frame_a_one_shot_compress_writes() -> None:
    # Every item is a whole frame of its own (readable alone), and reusing the context
    # changes no stored byte: values written before and after it compare equal.
    for doc in ("a", "b" * 5000, "Serialize obj. " * 300):
        data = orjson.dumps({**ITEM, "doc": doc})
        if len(data) >= MIN_BYTES:
            expected = "B" + base64.b64encode(zstd.compress(data, 3)).decode("ascii")
            assert stored_item(data) == expected
