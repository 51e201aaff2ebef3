"""The per-crawl vectors of ``frontier/search_vectors.py`` (pure part): an item read again
(changed) overwrites its row, a removed one is dead, rows keep their digests."""

from __future__ import annotations

import numpy as np

from invcrawl.frontier.search_vectors import _CrawlVectors


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_changed_item_overwrites_its_row_and_a_removed_one_is_dead() -> None:
    crawl = _CrawlVectors(created_at=1)
    crawl.add("aaaaaaaaaaaa", unit(1, 0))
    crawl.add("bbbbbbbbbbbb", unit(0, 1))
    crawl.pack(np, 2)
    assert crawl.digests == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"] and crawl.live.tolist() == [True] * 2
    crawl.add("aaaaaaaaaaaa", unit(0, 1))  # changed: appended again to the stream
    crawl.add("bbbbbbbbbbbb", None)  # removed: its tombstone
    crawl.add("cccccccccccc", unit(1, 1))
    crawl.pack(np, 2)
    assert crawl.digests == ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"]
    assert crawl.packed[0].tolist() == [0, 127]
    assert crawl.live.tolist() == [True, False, True]
