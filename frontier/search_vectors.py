"""Semantic candidates not limited to the index's terms (issue 48.1): every live item of
the crawls searched, compared with the query by one matrix product, the nearest
proposed beside the index's candidates.

The index's terms (a name's tokens, a summary's first words) miss an answer that shares
no word with the question, nor with the words near it in meaning, whatever the semantic
ranker would make of it. Each crawl's item vectors are in Redis, in its vector log
(``svec``, ``common/search/vector_log.py``), appended by the consumers at commit
(``commit.lua``) and by ``search --reindex``, a removed record by each tombstone. A
process reads each log from the offset it read to (``frontier/log_tails.py``: one
pipelined ``GETRANGE`` for every crawl; a one-shot command reads them whole, ~134 B an
item), keeps each item's last record as a float32 row (converted
once, as read), and takes the best NEAREST by cosine to the query (ties by the item's
digest, so nothing depends on the limit nor on the commit order); ranking reads them
again from their records like any candidate, so an item removed or changed since is
never ranked from its old text. A crawl without a vector log (created before it, and
not reindexed since) proposes none (docs/search.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from invcrawl.common.search import semantic, vector_log
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.log_tails import LogTails
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion

NEAREST = 100  # semantic candidates proposed, over every crawl searched
ROUND = 8  # each crawl's best ROUND compete before any crawl's next ones
MAX_ITEMS = 400_000  # items kept per Redis client (float32 rows: ~200 MB at most)


@dataclass(slots=True)
class _CrawlVectors:
    """One crawl's live items as its log holds them, read to ``offset``: their digests
    (uint64) and float32 rows (unit vectors, as quantized)."""

    offset: int = 0
    keys: Any = None
    rows: Any = None

    def merge(self, data: bytes) -> None:
        """Fold the log's bytes from ``offset`` on into the rows (an item's last record
        wins; a removed one's drops it); a torn record is left for the next read. Only
        the new records are converted, once."""
        import numpy as np  # noqa: PLC0415 - read only where the model is (semantic.py)

        whole = len(data) - len(data) % vector_log.RECORD_BYTES
        if not whole and self.keys is not None:
            return
        touched, vectors = vector_log.last_records(np, *vector_log.decode(np, data[:whole]))
        live = np.any(vectors != 0, axis=1)
        rows = np.multiply(vectors[live], np.float32(1 / vector_log.SCALE), dtype=np.float32)
        keys = touched[live]
        if self.keys is not None and len(self.keys):
            kept = ~np.isin(self.keys, touched)  # items changed or removed: their old rows go
            keys = np.concatenate([self.keys[kept], keys])
            rows = np.concatenate([self.rows[kept], rows])
        self.keys, self.rows = keys, rows
        self.offset += whole


def _log_of(keys: CrawlKeys) -> str:
    return keys.svec


_tails: LogTails[_CrawlVectors] = LogTails(_log_of, _CrawlVectors)


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
    the crawls hold more than MAX_ITEMS; none of a crawl without a vector log (its
    ``GETRANGE`` replies nothing)."""
    most = NEAREST if most is None else most
    if model is None or not words or not crawls or most <= 0:
        return []
    if sum(max(crawl.entries, 0) for crawl in crawls) > MAX_ITEMS:
        return []
    query = model.embed(words, weights)
    if query is None:
        return []
    np = model.np
    known = await _tails.read(frontier, crawls)
    ranked: list[tuple[int, float, int, str, str, CrawlVersion]] = []
    for crawl in crawls:
        mine = known[crawl.crawl_id]
        if mine.keys is None or not len(mine.keys):
            continue
        # (einsum's own loop: a BLAS product of a few thousand rows spreads over threads,
        # 2-10x slower on a busy machine, measured)
        sims = np.einsum("ij,j->i", mine.rows, query.astype(np.float32))
        take = min(most, len(sims))
        best = np.argpartition(-sims, take - 1)[:take]
        order = sorted(best.tolist(), key=lambda r: (-float(sims[r]), int(mine.keys[r])))
        for rank, row in enumerate(order):
            ranked.append(
                (rank // ROUND, -float(sims[row]), crawl.created_at, crawl.crawl_id,
                 vector_log.hex_digest(mine.keys[row]), crawl)
            )  # fmt: skip
    ranked.sort(key=lambda r: r[:5])
    return [(r[5], r[4]) for r in ranked[:most]]


def forget_cached(frontier: Frontier) -> None:
    """Drop this client's vectors (tests)."""
    _tails.forget(frontier)
