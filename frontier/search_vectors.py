"""Semantic candidates not limited to the index's terms (issue 48.1): every live item of
the crawls searched, embedded by the shipped static model and compared with the query
by one matrix product, the nearest proposed beside the index's candidates.

The index in Redis holds terms only (a name's tokens, a summary's first words): an
answer that shares no word with the question, nor with the words near it in meaning,
is never a candidate of the lexical lookup, whatever the semantic ranker would make of
it. Here each crawl's items are read once a process from its stream (``XRANGE`` in
batches, then only what was appended since: one round trip for every crawl, replying
nothing when no crawl changed), each embedded from the words the semantic ranker
compares (``semantic.item_words``), quantized to int8, and kept per Redis client.
A search takes the best NEAREST by cosine to the query (ties by the item's digest, so
nothing depends on the limit nor on the commit order); ranking reads them again from
their records like any candidate, so an item removed or changed since is never ranked
from its old text.

Nothing is written to Redis: the vectors cost a searching process ~140 B an item
(MAX_ITEMS at most: crawls searched together beyond that are left to the index).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.items import key_digest
from invcrawl.common.search import semantic
from invcrawl.common.search.summary import first_sentence
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.stream import RAW, stream_entries
from invcrawl.frontier.versions import CrawlVersion

NEAREST = 100  # semantic candidates proposed, over every crawl searched
ROUND = 8  # each crawl's best ROUND compete before any crawl's next ones
BATCH = 2000  # stream entries read per crawl and round trip
MAX_ITEMS = 400_000  # items kept per Redis client (int8 vectors: ~55 MB at most)


@dataclass(slots=True)
class _CrawlVectors:
    """One crawl's live items: digest → row, the rows' int8 vectors and scales."""

    created_at: int
    last_id: str = "-"
    rows: dict[str, int] = field(default_factory=dict)  # item digest (12 hex) → row
    digests: list[str] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)  # float vectors not packed yet
    pending_rows: list[int] = field(default_factory=list)
    packed: Any = None  # int8 matrix (rows × dims), unit rows scaled by 127
    live: Any = None  # bool per row (False: a removed item)

    def add(self, digest: str, vector: Any) -> None:
        row = self.rows.get(digest)
        if row is None:
            row = len(self.digests)
            self.rows[digest] = row
            self.digests.append(digest)
        self.pending.append(vector)
        self.pending_rows.append(row)

    def pack(self, np: Any, dims: int) -> None:
        """Fold the pending vectors into the int8 matrix (a changed item's row is
        overwritten; a row of no vector, a removed item's, stays dead)."""
        n = len(self.digests)
        if self.packed is None:
            self.packed = np.zeros((0, dims), dtype=np.int8)
            self.live = np.zeros(0, dtype=bool)
        if n > self.packed.shape[0]:
            grow = n - self.packed.shape[0]
            self.packed = np.concatenate([self.packed, np.zeros((grow, dims), dtype=np.int8)])
            self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        for row, vector in zip(self.pending_rows, self.pending, strict=True):
            if vector is None:
                self.live[row] = False
            else:
                self.packed[row] = np.round(vector * 127).astype(np.int8)
                self.live[row] = True
        self.pending, self.pending_rows = [], []


_cache: weakref.WeakKeyDictionary[Any, dict[str, _CrawlVectors]] = weakref.WeakKeyDictionary()


def _entry_vectors(model: semantic.StaticModel, entries: Sequence[Any]) -> list[tuple[str, Any]]:
    """(digest, unit vector or None) of each stream entry (None: removed, no words)."""
    digests: list[str] = []
    texts: list[list[str]] = []
    removed: list[bool] = []
    for entry in entries:
        digests.append(key_digest(entry.key, 1)[1])
        if entry.removed:
            texts.append([])
            removed.append(True)
            continue
        item = entry.item()
        name = str(item.get("name") or entry.key.split(":", 2)[-1])
        texts.append(semantic.item_words(name, first_sentence(item.get("doc"))))
        removed.append(False)
    vectors = model.embed_many(texts)
    return [(d, None if gone else v) for d, v, gone in zip(digests, vectors, removed, strict=True)]


async def _refresh(
    frontier: Frontier, model: semantic.StaticModel, crawls: Sequence[CrawlVersion]
) -> dict[str, _CrawlVectors]:
    """Each crawl's vectors, read to the end of its stream."""
    known = _cache.setdefault(frontier.commands, {})
    for crawl in crawls:
        have = known.get(crawl.crawl_id)
        if have is None or have.created_at != crawl.created_at:  # forgotten, made again
            known[crawl.crawl_id] = _CrawlVectors(crawl.created_at)
    todo = list(crawls)
    while todo:
        pipe = frontier.pipeline(transaction=False)
        for crawl in todo:
            start = known[crawl.crawl_id].last_id
            start = start if start == "-" else "(" + start
            items = CrawlKeys(crawl.crawl_id).items
            pipe.execute_command("XRANGE", items, start, "+", "COUNT", BATCH, **RAW)
        replies = await pipe.execute()
        more = []
        for crawl, reply in zip(todo, replies, strict=True):
            entries = stream_entries(reply)
            mine = known[crawl.crawl_id]
            for digest, vector in _entry_vectors(model, entries):
                mine.add(digest, vector)
            if entries:
                mine.last_id = entries[-1].id
            if len(entries) >= BATCH:
                more.append(crawl)
        todo = more
    np = model.np
    for crawl in crawls:
        mine = known[crawl.crawl_id]
        if mine.pending or mine.packed is None:
            mine.pack(np, model.dims)
    return known


async def nearest(
    frontier: Frontier,
    model: semantic.StaticModel | None,
    words: Sequence[str],
    weights: Sequence[float],
    crawls: Sequence[CrawlVersion],
    *,
    most: int | None = None,
) -> list[tuple[CrawlVersion, str]]:
    """The ``most`` (NEAREST) live items of ``crawls`` nearest the query's words in meaning,
    (crawl, item digest), best first; none without the model, words it knows, or when
    the crawls hold more than MAX_ITEMS."""
    most = NEAREST if most is None else most
    if model is None or not words or not crawls or most <= 0:
        return []
    if sum(max(crawl.entries, 0) for crawl in crawls) > MAX_ITEMS:
        return []
    query = model.embed(words, weights)
    if query is None:
        return []
    known = await _refresh(frontier, model, crawls)
    np = model.np
    ranked: list[tuple[int, float, int, str, str, CrawlVersion]] = []
    for crawl in crawls:
        mine = known[crawl.crawl_id]
        if mine.packed is None or not mine.packed.shape[0]:
            continue
        sims = (mine.packed.astype(np.float32) @ query) / 127.0
        sims[~mine.live] = -2.0
        take = min(most, int(mine.live.sum()))
        if take <= 0:
            continue
        best = np.argpartition(-sims, take - 1)[:take]
        order = sorted(best.tolist(), key=lambda r: (-float(sims[r]), mine.digests[r]))
        for rank, row in enumerate(order):
            ranked.append(
                (rank // ROUND, -float(sims[row]), crawl.created_at, crawl.crawl_id,
                 mine.digests[row], crawl)
            )  # fmt: skip
    ranked.sort(key=lambda r: r[:5])
    return [(r[5], r[4]) for r in ranked[:most]]


def forget_cached(frontier: Frontier) -> None:
    """Drop this client's vectors (tests)."""
    _cache.pop(frontier.commands, None)
