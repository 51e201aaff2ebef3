"""Index the items a crawl already holds (``invcrawl search --reindex``): a crawl
committed before the search index existed has none, one indexed under the index's first
layout (``sterm`` hashes) has none that is read, and a refresh rewrites only the items
that changed. Reads the stream once for the latest entry of each key, once more
for the items, and writes their records and postings with ``search_index.lua``, in
batches (idempotent: run twice, it adds nothing)."""

from __future__ import annotations

from typing import Any

from invcrawl.common.items import key_digest
from invcrawl.common.search.postings import posting, record_bucket, term_log, term_tag
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.search.terms import index_terms
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
    indexed = 0
    fixed = session.keys.bind("meta")
    index = KeyIndex(len(fixed))
    args: list[Any] = []
    count = 0
    async for entry in all_entries(session):
        if entry.removed or latest.get(entry.key) != entry.id:
            continue
        item = entry.item()
        _, field = key_digest(entry.key, buckets)
        name = str(item.get("name") or entry.key.split(":", 2)[-1])
        terms = index_terms(name, first_sentence(item.get("doc")))
        record = session.keys.search_record(record_bucket(field, buckets))
        args += [index.add(record), field, entry.id, posting(field), len(terms)]
        for term in terms:
            log = session.keys.search_log(term_log(term, layout.term_logs))
            args += [index.add(log), term_tag(term)]
        count += 1
        if count >= BATCH:
            indexed += int(await session.run("search_index", fixed, args, index.keys))
            index, args, count = KeyIndex(len(fixed)), [], 0
    if count:
        indexed += int(await session.run("search_index", fixed, args, index.keys))
    return indexed
