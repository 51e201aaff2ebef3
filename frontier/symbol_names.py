"""A symbol named as ``show`` and ``get_symbol`` accept it (an item key, a qualified name
or an unambiguous last component): the symbols spelt close to a name of none (the "did
you mean" of ``show``, ``history`` and the MCP ``get_symbol``); and the name turned into
its item key for the commands that read one key across versions (``history``, issue
47.4): ``history requests.get`` said the symbol "is in no version" while ``show
requests.get`` found it.

Kept apart from ``frontier/versions.py``, which ``frontier/search.py`` imports."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from invcrawl.common.search.selection import listing
from invcrawl.frontier.search import SymbolHit, SymbolLookup, get_symbol, search_answer
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import (
    CrawlRefError,
    by_project,
    crawl_versions,
    pick_project,
    versions_only,
)

# versions a name is looked up in, newest first, when the latest ones hold no symbol of
# that name (one removed since); a key given as a key is read in every version anyway
OLDER_VERSIONS_TRIED = 20


def is_key(name: str) -> bool:
    """An item key ``domain:role:name`` (``py:function:json.dumps``), not a name."""
    parts = name.split(":", 2)
    return len(parts) == 3 and all(parts)


DID_YOU_MEAN = 3  # close names offered for a name that is no symbol
CLOSE = 0.75  # difflib's ratio of a close name (a typo or two in a short name)
NEARBY = 20  # symbols the last component alone finds, when the name's search found none close


def spelt_close(requested: str, hits: Sequence[SymbolHit]) -> list[SymbolHit]:
    """At most :data:`DID_YOU_MEAN` of ``hits`` spelt close to ``requested``, the closest
    first: the last component close to the requested one, and, where a parent is given,
    the whole name too (``jsonish.lods`` means ``jsonish.loads``, not ``jsonish.evil``,
    which shares only the module)."""
    wanted = requested.strip().casefold()
    parent, _, tail = wanted.rpartition(".")

    def ratios(hit: SymbolHit) -> tuple[float, float]:
        name = hit.name.casefold()
        ends = difflib.SequenceMatcher(None, tail, name.rpartition(".")[2]).ratio()
        whole = difflib.SequenceMatcher(None, wanted, name).ratio() if parent else ends
        return ends, whole

    scored = [(ratios(h), n, h) for n, h in enumerate(hits)]
    close = [(ends + whole, n, h) for (ends, whole), n, h in scored if min(ends, whole) >= CLOSE]
    return [h for _, _, h in sorted(close, key=lambda t: (-t[0], t[1]))][:DID_YOU_MEAN]


async def close_names(
    frontier: Frontier,
    name: str,
    found: SymbolLookup,
    *,
    project: str | None,
    version: str | None,
) -> list[SymbolHit]:
    """The symbols spelt close to ``name``, which names none: among the nearest the
    lookup ``found`` gave, else among those its last component alone finds (a misspelt
    last component shares no word with the right one)."""
    close = spelt_close(name, found.candidates)
    tail = name.strip().rpartition(".")[2].rpartition(":")[2]
    if close or not tail:
        return close
    try:
        nearby = await search_answer(frontier, tail, project=project, version=version, limit=NEARBY)
    except ValueError:
        return []
    return spelt_close(name, nearby.hits)


def did_you_mean(close: Sequence[SymbolHit]) -> str:
    """What the command line's error adds for the symbols spelt close to a name (their
    keys), or nothing."""
    return f"; did you mean {', '.join(hit.key for hit in close)}?" if close else ""


def _named(found: SymbolLookup) -> set[str]:
    """The keys ``found`` gives for the name itself: its item, else the candidates of
    that name (not the nearest other symbols)."""
    if found.item is not None:
        return {str(found.item.get("key"))}
    return {hit.key for hit in found.candidates} if found.named else set()


async def symbol_key(frontier: Frontier, name: str, project: str | None) -> str:
    """The item key ``name`` means, in ``project`` (every project when None): looked up in
    each project's latest version, then in older versions newest first. A name of no
    symbol, or of several, raises :class:`CrawlRefError` (a usage error)."""
    name = name.strip()
    if is_key(name):
        return name
    latest = await get_symbol(frontier, name, project=project)
    keys = _named(latest)
    if not keys:
        crawls = await crawl_versions(frontier)
        projects = by_project(crawls)
        if project is not None:
            picked = pick_project(crawls, project)
            projects = {picked: projects[picked]}
        older = [c for rows in projects.values() for c in reversed(versions_only(rows)[:-1])]
        for crawl in older[:OLDER_VERSIONS_TRIED]:
            found = await get_symbol(frontier, name, project=crawl.project, version=crawl.version)
            keys = _named(found)
            if keys:
                break
    if len(keys) == 1:
        return keys.pop()
    if keys:
        raise CrawlRefError(
            f"{name} names {len(keys)} symbols ({listing(sorted(keys))}): give its key or --project"
        )
    close = await close_names(frontier, name, latest, project=project, version=None)
    meant = did_you_mean(close)
    raise CrawlRefError(f"{name} names no symbol{meant} (try `invcrawl search {name}`)")
