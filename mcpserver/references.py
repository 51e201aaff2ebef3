"""The references of a ``get_symbol`` answer (issue 48, 4): each link of the item's doc
as the key of the symbol it names and, when that symbol is another crawled project's, the
project and crawl holding it (``common/references.py`` tells the crawl and the
keys to try; one read of their records here answers which exist); a link no crawl here
holds keeps its URL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from invcrawl.common.references import (
    MAX_SHOWN,
    Site,
    candidate_keys,
    page_match,
    shown_reference,
    site_base,
    target_site,
)
from invcrawl.common.search.selection import SelectionError
from invcrawl.frontier.key_records import held, record_field
from invcrawl.frontier.search import choose_crawls, crawl_list
from invcrawl.frontier.search_pool import read_items
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion


def _site(crawl: CrawlVersion) -> Site:
    return Site(crawl.crawl_id, crawl.project, crawl.version, site_base(crawl.site))


def _others(crawls: Sequence[CrawlVersion], own: CrawlVersion) -> list[CrawlVersion]:
    """The latest finished crawl of each project but the item's own (a search's default
    scope: ``search.choose_crawls``)."""
    try:
        latest = choose_crawls(crawls, None, None)
    except SelectionError:  # no project has a version: none but the item's own
        return []
    return [c for c in latest if c.project != own.project]


MAX_READS = 1536  # candidate records read for one answer, at most (~30 ms of pipeline)


async def with_references(frontier: Frontier, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its ``references`` shown by key (:func:`shown_reference`), at most
    :data:`MAX_SHOWN` of them, each symbol once; an item without any as it is."""
    stored = item.get("references")
    if not isinstance(stored, list) or not stored:
        return item
    crawls = await crawl_list(frontier)  # (the answer's search just read it)
    own = next((c for c in crawls if c.crawl_id == item.get("crawl")), None)
    refs = [r for r in stored if isinstance(r, dict)][:MAX_SHOWN]
    if own is None:  # its crawl was forgotten meanwhile: the links as they are
        gone = Site(str(item.get("crawl")), "", "", "")
        return {**item, "references": [shown_reference(r, None, gone) for r in refs]}
    others = _others(crawls, own)
    by_id = {c.crawl_id: c for c in (own, *others)}
    own_site, other_sites = _site(own), [_site(c) for c in others]
    plans: list[tuple[Site | None, list[tuple[Site, str]]]] = []
    for ref in refs:
        if ref.get("key"):  # an entry of the item's own page: there, no read
            plans.append((own_site, [(own_site, str(ref["key"]))]))
            continue
        site = target_site(str(ref.get("url") or ""), own_site, other_sites)
        sites = [site] if site else [own_site, *other_sites]
        plans.append((site, [(s, key) for key in candidate_keys(ref) for s in sites]))
    # every reference's likeliest candidates first, so that a cut drops the least likely
    ranked = sorted(
        (rank, n, s.crawl_id, key)
        for n, (ref, (_, plan)) in enumerate(zip(refs, plans, strict=True))
        if not ref.get("key")
        for rank, (s, key) in enumerate(plan)
    )
    wanted = list(dict.fromkeys((crawl_id, key) for *_, crawl_id, key in ranked))[:MAX_READS]
    there = await _held(frontier, by_id, wanted)
    # the URLs of the candidates held for a link no crawl's site holds (another copy of
    # a site): few, each read whole
    copies = [
        pair
        for (site, plan) in plans
        if site is None
        for pair in ((s.crawl_id, k) for s, k in plan)
        if pair in there
    ]
    urls = await _urls(frontier, by_id, list(dict.fromkeys(copies)))
    shown: list[dict[str, Any]] = []
    keys: set[tuple[str, str]] = set()
    for ref, (site, plan) in zip(refs, plans, strict=True):
        found = _found(ref, site, plan, there, urls, own_site)
        if found is not None:
            if (found[0].crawl_id, found[1]) in keys:
                continue
            keys.add((found[0].crawl_id, found[1]))
        shown.append(shown_reference(ref, found, own_site))
    return {**item, "references": shown}


def _found(  # noqa: PLR0917 - the reference and what was read of its candidates
    ref: dict[str, Any],
    site: Site | None,
    plan: list[tuple[Site, str]],
    there: set[tuple[str, str]],
    urls: dict[tuple[str, str], str],
    own: Site,
) -> tuple[Site, str] | None:
    """The (crawl, key) ``ref`` names: its own key; in the crawl whose site holds its URL,
    the first candidate held; else the held candidate at the same page and anchor
    (``page_match``: the most of the path in common, the item's own crawl on a tie)."""
    if ref.get("key"):
        return plan[0]
    if site is not None:
        return next(((s, k) for s, k in plan if (s.crawl_id, k) in there), None)
    url = str(ref.get("url") or "")
    scored = [
        (page_match(url, urls[(s.crawl_id, k)]), s is own, -n, (s, k))
        for n, (s, k) in enumerate(plan)
        if (s.crawl_id, k) in urls
    ]
    best = max(scored, default=None, key=lambda t: t[:3])
    return best[3] if best is not None and best[0] > 0 else None


async def _held(
    frontier: Frontier, crawls: dict[str, CrawlVersion], wanted: list[tuple[str, str]]
) -> set[tuple[str, str]]:
    """Which (crawl id, key) of ``wanted`` their crawls hold (``frontier/key_records``)."""
    found = await held(frontier, [(crawls[crawl_id], key) for crawl_id, key in wanted])
    return {pair for pair, there in zip(wanted, found, strict=True) if there}


async def _urls(
    frontier: Frontier, crawls: dict[str, CrawlVersion], wanted: list[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """The URL of the item of each (crawl id, key) of ``wanted`` (one read of those items:
    ``frontier/search_pool.read_items``)."""
    candidates = [
        (crawls[crawl_id], record_field(crawls[crawl_id], key)) for crawl_id, key in wanted
    ]
    asked = set(wanted)
    return {
        (crawl.crawl_id, str(item.get("key"))): str(item.get("url") or "")
        for crawl, item in await read_items(frontier, candidates)
        if (crawl.crawl_id, str(item.get("key"))) in asked
    }
