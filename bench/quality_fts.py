"""The baseline of ``bench/search_quality.py``: an SQLite FTS5 BM25 index over the same
items invcrawl searches, as the docs MCP servers ship it.

docs-mcp-server (github ``arabold/docs-mcp-server``, ``src/store/DocumentStore.ts``)
indexes its chunks in an FTS5 table with ``tokenize='porter unicode61'`` and asks
``"the whole query" OR "word1" OR "word2" ...`` ranked by ``bm25()``;
python-docs-mcp-server does the same over its sections. Here each row is one item:
its name (dotted parts split by the tokenizer), its summary (the doc's first sentence)
and its whole doc, the three columns weighted equally (``bm25()``'s default: the
baseline is the plain one, not one tuned for this bench). Nothing of invcrawl's engine
is used, so the baseline stays the same while the engine changes."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.quality_sets import Hit

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`'\"])")
MAX_SUMMARY = 300


def summary_of(doc: str) -> str:
    """The doc's first sentence (the bench's own rule, not the engine's: a change of the
    engine's summaries must not move the baseline)."""
    text = " ".join(doc.split())
    first = SENTENCE_END.split(text, maxsplit=1)[0]
    return first[:MAX_SUMMARY]


def fts_query(query: str) -> str:
    """docs-mcp-server's ``escapeFtsQuery``: the phrase, OR each word, every token
    quoted (so no character is FTS5 syntax)."""
    tokens = [t for t in query.replace('"', " ").split() if t]
    if not tokens:
        return '""'
    quoted = [f'"{t}"' for t in tokens]
    if len(quoted) == 1:
        return quoted[0]
    return f'"{" ".join(tokens)}" OR ' + " OR ".join(quoted)


@dataclass(frozen=True, slots=True)
class Row:
    project: str
    key: str
    name: str
    doc: str
    page: str  # the page's path below its site's root


class Baseline:
    """One in-memory FTS5 table of every item of every crawl."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE items USING fts5("
            "name, summary, doc, project UNINDEXED, key UNINDEXED, page UNINDEXED, "
            "tokenize='porter unicode61')"
        )
        self._db.executemany(
            "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)",
            ((r.name, summary_of(r.doc), r.doc, r.project, r.key, r.page) for r in rows),
        )
        self._db.commit()
        self.count = int(self._db.execute("SELECT count(*) FROM items").fetchone()[0])

    def search(self, query: str, project: str | None, limit: int) -> list[Hit]:
        where = "items MATCH ?" + (" AND project = ?" if project else "")
        args: Sequence[object] = (
            (fts_query(query), project, limit)
            if project
            else (
                fts_query(query),
                limit,
            )
        )
        try:
            found = self._db.execute(
                f"SELECT project, key, page FROM items WHERE {where} ORDER BY bm25(items) LIMIT ?",
                args,
            ).fetchall()
        except sqlite3.OperationalError:  # a query FTS5 cannot parse finds nothing
            return []
        return [Hit(project=p, key=k, page=pg) for p, k, pg in found]

    def close(self) -> None:
        self._db.close()
