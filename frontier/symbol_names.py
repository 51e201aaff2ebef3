"""A symbol named as ``show`` and ``get_symbol`` accept it (an item key, a qualified name
or an unambiguous last component), turned into its item key for the commands that read
one key across versions (``history``, issue 47.4): ``history requests.get`` said the
symbol "is in no version" while ``show requests.get`` found it.

Kept apart from ``frontier/versions.py``, which ``frontier/search.py`` imports."""

from __future__ import annotations

from invcrawl.common.search.selection import listing
from invcrawl.frontier.search import SymbolLookup, get_symbol
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


def _named(found: SymbolLookup, name: str) -> set[str]:
    """The keys ``found`` gives for ``name`` itself: its item, else the candidates whose
    qualified name or last component is ``name`` (not the nearest other symbols)."""
    if found.item is not None:
        return {str(found.item.get("key"))}
    wanted = name.casefold()
    return {
        hit.key
        for hit in found.candidates
        if hit.name.casefold() == wanted or hit.name.casefold().endswith("." + wanted)
    }


async def symbol_key(frontier: Frontier, name: str, project: str | None) -> str:
    """The item key ``name`` means, in ``project`` (every project when None): looked up in
    each project's latest version, then in older versions newest first. A name of no
    symbol, or of several, raises :class:`CrawlRefError` (a usage error)."""
    name = name.strip()
    if is_key(name):
        return name
    keys = _named(await get_symbol(frontier, name, project=project), name)
    if not keys:
        crawls = await crawl_versions(frontier)
        projects = by_project(crawls)
        if project is not None:
            picked = pick_project(crawls, project)
            projects = {picked: projects[picked]}
        older = [c for rows in projects.values() for c in reversed(versions_only(rows)[:-1])]
        for crawl in older[:OLDER_VERSIONS_TRIED]:
            found = await get_symbol(frontier, name, project=crawl.project, version=crawl.version)
            keys = _named(found, name)
            if keys:
                break
    if len(keys) == 1:
        return keys.pop()
    if keys:
        raise CrawlRefError(
            f"{name} names {len(keys)} symbols ({listing(sorted(keys))}): give its key or --project"
        )
    raise CrawlRefError(f"{name} names no symbol (try `invcrawl search {name}`)")
