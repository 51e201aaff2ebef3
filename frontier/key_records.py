"""Which of some item keys each crawl holds, by the crawl's search records alone (the
``srec`` hash of an item's dedup digest names its latest stream entry: written by
``commit.lua``, dropped by ``tombstone.lua``): one pipelined ``HGET`` per key, no item
read. What the MCP server's ``get_symbol`` asks of the keys a reference may name
(``mcpserver/references.py``); ``frontier/search_pool.read_items`` reads the items."""

from __future__ import annotations

from collections.abc import Sequence

from invcrawl.common.items import key_digest
from invcrawl.frontier.search_pool import record_entries
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion


def record_field(crawl: CrawlVersion, key: str) -> str:
    """The dedup digest ``key`` is recorded under in ``crawl`` (its ``srec`` field)."""
    return key_digest(key, max(crawl.buckets, 1))[1]


async def held(frontier: Frontier, wanted: Sequence[tuple[CrawlVersion, str]]) -> list[bool]:
    """Whether each crawl of ``wanted`` holds an item of its key (one round trip; a
    48-bit digest names the key within its bucket)."""
    fields = [(crawl, record_field(crawl, key)) for crawl, key in wanted]
    return [entry is not None for entry in await record_entries(frontier, fields)]
