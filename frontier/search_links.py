"""How many pages of its crawl link to each candidate of a search: the inbound-link
prior (``common/search/fusion.py``: in the re-ranker's blend, or in the fusion where no
re-ranker runs), from each crawl's link log (``slnk``,
``common/search/link_log.py``), appended by the consumers at commit (``commit.lua``), by
``search --reindex`` and, for a page gone, by its tombstones.

A process reads each log from the offset it read to (``frontier/log_tails.py``; a
one-shot command reads them whole, ~8 B a page and 6 B a distinct link of it) and keeps
each page's last record. A crawl without a link log (created before it, and not
reindexed since) counts no link for any candidate, so the prior leaves its order as it
was.
"""

from __future__ import annotations

from collections.abc import Sequence

from invcrawl.common.search.link_log import InboundLinks
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.log_tails import LogTails
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion


def _log_of(keys: CrawlKeys) -> str:
    return keys.slnk


_tails: LogTails[InboundLinks] = LogTails(_log_of, InboundLinks)


async def inbound_links(
    frontier: Frontier, crawls: Sequence[CrawlVersion]
) -> dict[str, InboundLinks]:
    """Each crawl's inbound links, by crawl id, read to the end of its link log."""
    return await _tails.read(frontier, crawls)


def forget_cached(frontier: Frontier) -> None:
    """Drop this client's link counts (tests)."""
    _tails.forget(frontier)
