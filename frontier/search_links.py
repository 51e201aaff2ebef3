"""How many pages of its crawl link to each candidate of a search: the re-ranker's
inbound-link prior (``common/search/fusion.py``), from each crawl's link log (``slnk``,
``common/search/link_log.py``), appended by the consumers at commit (``commit.lua``), by
``search --reindex`` and, for a page gone, by its tombstones.

A process reads each log from the offset it read to (``GETRANGE``: one pipelined round
trip for every crawl, replying nothing when no crawl changed; a one-shot command reads
them whole, ~8 B a page and 6 B a distinct link of it) and keeps each page's last
record. Read only where the re-ranker runs (the MCP server): a crawl without a link log
(created before it, and not reindexed since) counts no link for any candidate, so the
prior leaves its order as it was.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.search.link_log import InboundLinks
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.stream import RAW
from invcrawl.frontier.versions import CrawlVersion


@dataclass(slots=True)
class _CrawlLinks:
    created_at: int
    links: InboundLinks = field(default_factory=InboundLinks)


_cache: weakref.WeakKeyDictionary[Any, dict[str, _CrawlLinks]] = weakref.WeakKeyDictionary()


async def inbound_links(
    frontier: Frontier, crawls: Sequence[CrawlVersion]
) -> dict[str, InboundLinks]:
    """Each crawl's inbound links, by crawl id, read to the end of its link log."""
    known = _cache.setdefault(frontier.commands, {})
    for crawl in crawls:
        have = known.get(crawl.crawl_id)
        if have is None or have.created_at != crawl.created_at:  # forgotten, made again
            known[crawl.crawl_id] = _CrawlLinks(crawl.created_at)
    pipe = frontier.pipeline(transaction=False)
    for crawl in crawls:
        log = CrawlKeys(crawl.crawl_id).slnk
        pipe.execute_command("GETRANGE", log, known[crawl.crawl_id].links.offset, -1, **RAW)
    replies = await pipe.execute()
    for crawl, reply in zip(crawls, replies, strict=True):
        known[crawl.crawl_id].links.merge(bytes(reply or b""))
    return {crawl.crawl_id: known[crawl.crawl_id].links for crawl in crawls}


def forget_cached(frontier: Frontier) -> None:
    """Drop this client's link counts (tests)."""
    _cache.pop(frontier.commands, None)
