"""Index the items a crawl already holds (``invcrawl search --reindex``): a crawl
committed before the search index existed has none, one indexed under the index's first
layout (``sterm`` hashes) has none that is read, and a refresh rewrites only the items
that changed; a crawl created before the vector log (``svec``) or the link log (``slnk``) has none.
Reads the stream once for the latest entry of each key, once more for the items, and
writes their records, postings and vectors with ``search_index.lua``, in batches, then
the pages' link records (idempotent: run twice, it adds nothing), marking the crawl's
meta (``vectors``, ``links``) so commits append to the logs from then on."""

from __future__ import annotations

from typing import Any

from invcrawl.common.items import key_digest, reference_urls
from invcrawl.common.search import link_log, semantic, vector_log
from invcrawl.common.search.postings import posting, record_bucket, term_log, term_tag
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.search.terms import index_terms
from invcrawl.common.sharding import task_id_for
from invcrawl.frontier.export import all_entries, latest_entry_ids
from invcrawl.frontier.retention import retains_all
from invcrawl.frontier.scripts import KeyIndex
from invcrawl.frontier.session import CrawlSession

BATCH = 200  # items a script call indexes


async def reindex(session: CrawlSession) -> int:
    """Index every live item of the crawl; returns how many (none for a crawl that
    keeps only what is not exported yet: it has no index, commit.lua)."""
    if not await retains_all(session):
        return 0
    layout = await session.refresh_layout()
    buckets = layout.buckets
    latest = await latest_entry_ids(session)
    model = semantic.load()
    vectors = _Vectors(model, await _held_vectors(session) if model else {})
    indexed = 0
    links = _Links(await _held_links(session))
    fixed = session.keys.bind("meta", "svec", "slnk")
    index = KeyIndex(len(fixed))
    args: list[Any] = []
    count = 0
    async for entry in all_entries(session):
        if entry.removed or latest.get(entry.key) != entry.id:
            continue
        item = entry.item()
        _, field = key_digest(entry.key, buckets)
        name = str(item.get("name") or entry.key.split(":", 2)[-1])
        summary = first_sentence(item.get("doc"))
        terms = index_terms(name, summary)
        record = session.keys.search_record(record_bucket(field, buckets))
        args += [index.add(record), field, entry.id, posting(field), len(terms)]
        for term in terms:
            log = session.keys.search_log(term_log(term, layout.term_logs))
            args += [index.add(log), term_tag(term)]
        vectors.add(field, semantic.item_words(name, summary))
        links.add(item)
        count += 1
        if count >= BATCH:
            batch = [*vectors.args(), "0", b"", *args]
            indexed += int(await session.run("search_index", fixed, batch, index.keys))
            index, args, count = KeyIndex(len(fixed)), [], 0
    vectors.gone()  # items the log holds that are live no more
    last = [*vectors.args(), "1", links.records(), *args]  # (the meta's marks, at least)
    indexed += int(await session.run("search_index", fixed, last, index.keys))
    return indexed


async def _held_links(session: CrawlSession) -> dict[bytes, tuple[bytes, ...]]:
    """The link log's last record of each page: digest → targets."""
    held = link_log.InboundLinks()
    held.merge(bytes(await session.raw("GET", session.keys.slnk) or b""))
    return held.records()


class _Links:
    """The link log records a reindex appends: each page of a live item whose last record
    is not its links now, then a record of none for each page the log holds links of
    that has no live item (run twice, it appends nothing)."""

    def __init__(self, held: dict[bytes, tuple[bytes, ...]]) -> None:
        self.held = held
        self.pages: dict[str, list[str]] = {}  # page URL -> its items' links

    def add(self, item: dict[str, Any]) -> None:
        page = str(item.get("page_url") or link_log.page_of(str(item.get("url") or "")))
        if page:
            self.pages.setdefault(page, []).extend(reference_urls(item))

    def records(self) -> bytes:
        out: list[bytes] = []
        live: set[bytes] = set()
        for page, urls in self.pages.items():
            record = link_log.page_record(task_id_for(page), page, urls)
            digest = record[: link_log.PAGE_BYTES]
            live.add(digest)
            if b"".join(self.held.get(digest, ())) != record[link_log.HEAD_BYTES :]:
                out.append(record)
        for digest, targets in self.held.items():
            if digest not in live and targets:
                out.append(digest + bytes(link_log.COUNT_BYTES))
        return b"".join(out)


async def _held_vectors(session: CrawlSession) -> dict[str, bytes]:
    """The vector log's last record of each item: digest (12 hex) → vector bytes."""
    data = bytes(await session.raw("GET", session.keys.svec) or b"")
    return {digest: vector for digest, vector, _ in vector_log.each_record(data)}


class _Vectors:
    """The vector log records a reindex appends: each live item whose last record is not
    its vector now, then a removed record for each item the log holds as live that is
    live no more (run twice, it appends nothing)."""

    def __init__(self, model: semantic.StaticModel | None, held: dict[str, bytes]) -> None:
        self.model = model
        self.held = held
        self.live: set[str] = set()
        self.fields: list[str] = []
        self.words: list[list[str]] = []
        self.extra: list[str] = []

    def add(self, field: str, words: list[str]) -> None:
        if self.model is not None:
            self.live.add(field)
            self.fields.append(field)
            self.words.append(words)

    def gone(self) -> None:
        removed = vector_log.REMOVED
        for field, vector in self.held.items():
            if field not in self.live and vector != removed:
                self.extra.append(field)

    def args(self) -> list[Any]:
        """search_index.lua's first two ARGV for the items added since (and the removed)."""
        if self.model is None:
            return ["0", b""]
        np = self.model.np
        vectors = [*self.model.embed_many(self.words), *([None] * len(self.extra))]
        joined = vector_log.records(np, [*self.fields, *self.extra], vectors)
        out = [
            record
            for n, (field, vector, record) in enumerate(vector_log.each_record(joined))
            if n >= len(self.fields) or self.held.get(field) != vector
        ]
        self.fields, self.words, self.extra = [], [], []
        return ["1", b"".join(out)]
