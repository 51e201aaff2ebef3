"""The vector log's records (``common/search/vector_log.py``) and the per-crawl rows
``frontier/search_vectors.py`` keeps from them (pure part): an item appended again
(changed) wins over its earlier record, a removed one's record drops it, rows keep their
digests, a torn record waits for the next read, and the rows are the vectors quantized."""

from __future__ import annotations

import numpy as np

from invcrawl.common.search import vector_log
from invcrawl.frontier.search_vectors import _CrawlVectors


def unit(*values: float) -> np.ndarray:
    v = np.zeros(vector_log.DIMS, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def log(*items: tuple[str, np.ndarray | None]) -> bytes:
    return vector_log.records(np, [d for d, _ in items], [v for _, v in items])


def digests(crawl: _CrawlVectors) -> list[str]:
    return [vector_log.hex_digest(k) for k in crawl.keys]


def test_a_changed_item_wins_and_a_removed_one_is_dropped() -> None:
    a, b, c = "aaaaaaaaaaaa", "0000000000bb", "cccccccccccc"
    first = log((a, unit(1, 0)), (b, unit(0, 1)))
    assert len(first) == 2 * vector_log.RECORD_BYTES
    crawl = _CrawlVectors()
    crawl.merge(first)
    assert digests(crawl) == [b, a]  # sorted by digest
    assert crawl.rows[1][:2].tolist() == [1.0, 0.0]  # 127 / 127
    later = log((a, unit(0, 1)), (b, None), (c, unit(1, 1)))
    crawl.merge(later[: -vector_log.RECORD_BYTES // 2])  # a torn last record
    assert digests(crawl) == [a] and crawl.offset == 4 * vector_log.RECORD_BYTES
    crawl.merge(later[2 * vector_log.RECORD_BYTES :])  # read again from the offset
    assert digests(crawl) == [a, c]
    assert crawl.rows[0][:2].tolist() == [0.0, 1.0]
    assert np.allclose(crawl.rows[1][:2], [90 / 127, 90 / 127])  # rint(127 / sqrt 2)


def test_a_record_decodes_to_its_digest_and_int8_vector() -> None:
    data = log(("0123456789ab", unit(-1, 0, 0)), ("ffffffffffff", None))
    keys, vectors = vector_log.decode(np, data)
    assert [vector_log.hex_digest(k) for k in keys] == ["0123456789ab", "ffffffffffff"]
    assert vectors.dtype == np.int8 and vectors[0][0] == -127 and not vectors[1].any()
    assert data[vector_log.RECORD_BYTES + vector_log.POSTING_BYTES :] == vector_log.REMOVED


def test_each_record_is_what_decode_reads_and_a_torn_one_is_left() -> None:
    a, b = "aaaaaaaaaaaa", "0000000000bb"
    data = log((a, unit(1, 0)), (b, None))
    keys, vectors = vector_log.decode(np, data)
    read = list(vector_log.each_record(data + data[:10]))  # a torn record after them
    assert [digest for digest, _, _ in read] == [vector_log.hex_digest(k) for k in keys]
    assert [vector for _, vector, _ in read] == [bytes(v.view(np.uint8)) for v in vectors]
    assert read[1][1] == vector_log.REMOVED
    assert b"".join(record for _, _, record in read) == data
