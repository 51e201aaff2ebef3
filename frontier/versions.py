"""Versions side by side: which project and version each crawl holds (its meta, written
by the producer), ``PROJECT@VERSION`` resolved to a crawl id, and the latest items of a
crawl or of one symbol, read back from the item stream. Reads only.

The project registry is the crawls' own meta: ``invcrawl:crawls`` lists the crawls, one
pipelined ``HMGET`` per crawl reads their ``project``, ``version``, ``state`` and
figures. No key of its own, so nothing can disagree with the crawls.

A crawl that failed (its inventory could not be read: a mistyped site) is no version:
it is listed after the versions of its project, marked, and never taken for one (the
order, ``PROJECT@VERSION`` when a real crawl matches too, ``history``).
:func:`projects_holding` says which projects hold a key, for a command given a key and
no project (``history``, and whatever else asks: an MCP server).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import orjson

from invcrawl.common.items import Item, key_digest
from invcrawl.common.search.selection import listing
from invcrawl.common.version_order import matches, parse_ref, version_key
from invcrawl.frontier.export import HistoryTrimmed, all_entries, iter_latest
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.retention import trimmed_before
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.stream import StreamEntry
from invcrawl.frontier.values import CrawlNotFound

_FIELDS = (
    "project",
    "version",
    "state",
    "entries",
    "created_at",
    "finished_at",
    "refreshed_at",
    "site",
    "error",
    "buckets",
    "term_logs",
)


class CrawlRefError(ValueError):
    """A project name or ``PROJECT@VERSION`` that names no crawl or several (a usage
    error: the user picks another)."""


@dataclass(frozen=True, slots=True)
class CrawlVersion:
    """One crawl as a version of a project."""

    crawl_id: str
    project: str  # "" when neither the inventory nor --project named it
    version: str
    state: str
    entries: int
    crawled_at: int | None  # ms: the last refresh, else the end of the first crawl
    site: str
    error: str = ""  # why its producer failed (a failed crawl)
    buckets: int = 1  # of its dedup hashes (frontier/keys.py: isum; frontier/meta.py)
    term_logs: int = 1  # of its search index (common/search/postings.py)
    created_at: int = 0  # ms: when this Redis first opened it (not a value the site chose)

    @property
    def failed(self) -> bool:
        """Its inventory could not be read: no version, nothing in it."""
        return self.state == "failed"

    def to_json(self) -> dict[str, Any]:
        return {
            "crawl_id": self.crawl_id,
            "version": self.version,
            "state": self.state,
            "entries": self.entries,
            "crawled_at": self.crawled_at,
            "site": self.site,
            "failed": self.failed,
            "error": self.error or None,
        }


async def crawl_versions(frontier: Frontier) -> list[CrawlVersion]:
    """Every crawl of this Redis with its project and version."""
    crawls = await frontier.registry.known()
    if not crawls:
        return []
    pipe = frontier.pipeline(transaction=False)
    for crawl_id in crawls:
        pipe.hmget(frontier.crawl(crawl_id).keys.meta, list(_FIELDS))
    rows = await pipe.execute()
    out = []
    for crawl_id, row in zip(crawls, rows, strict=True):
        meta = CrawlMeta.decode(dict(zip(_FIELDS, row, strict=True)))
        if meta.state is None and meta.site is None:
            continue  # listed, but its meta is gone
        crawled = meta.refreshed_at or meta.finished_at
        out.append(
            CrawlVersion(
                crawl_id,
                meta.project or "",
                meta.version or "",
                meta.state.value if meta.state else "",
                meta.entries,
                crawled or None,
                meta.site or "",
                meta.error or "",
                meta.buckets,
                meta.term_logs,
                meta.created_at,
            )
        )
    return out


class _Labelled(Protocol):
    @property
    def crawl_id(self) -> str: ...
    @property
    def project(self) -> str | None: ...
    @property
    def version(self) -> str | None: ...
    @property
    def state(self) -> str: ...


def same_as(crawls: Sequence[_Labelled]) -> dict[str, str]:
    """Crawl id -> the crawl it duplicates: the same project (case aside) and version
    crawled again under another id (from another path), which makes ``PROJECT@VERSION``
    ambiguous. The first of each group by id is the one named; failed crawls and
    crawls without a version are none. ``versions`` and ``status`` show it (issue 47.3)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for c in crawls:
        if c.state != "failed" and c.version:
            groups.setdefault(((c.project or "").casefold(), c.version), []).append(c.crawl_id)
    twins: dict[str, str] = {}
    for ids in groups.values():
        first, *others = sorted(ids)
        twins.update((other, first) for other in others)
    return twins


def by_project(crawls: Sequence[CrawlVersion]) -> dict[str, list[CrawlVersion]]:
    """Project → its crawls in version order, failed crawls after the versions (projects
    sorted by name)."""
    grouped: dict[str, list[CrawlVersion]] = {}
    for crawl in crawls:
        grouped.setdefault(crawl.project, []).append(crawl)
    return {
        project: sorted(
            grouped[project],
            key=lambda c: (c.failed, version_key(c.version) if not c.failed else (), c.crawl_id),
        )
        for project in sorted(grouped, key=lambda p: (p.casefold(), p))
    }


def versions_only(crawls: Sequence[CrawlVersion]) -> list[CrawlVersion]:
    """The crawls that are versions: those that did not fail."""
    return [c for c in crawls if not c.failed]


def pick_project(crawls: Sequence[CrawlVersion], project: str | None) -> str:
    """The project a command means: ``project`` (case-insensitive), or the only one."""
    projects = sorted({c.project for c in crawls}, key=lambda p: (p.casefold(), p))
    if project is not None:
        exact = [p for p in projects if p == project]
        folded = [p for p in projects if p.casefold() == project.casefold()]
        if exact or len(folded) == 1:
            return (exact or folded)[0]
        raise CrawlRefError(f"no project {project!r} in this Redis (projects: {listing(projects)})")
    if len(projects) == 1:
        return projects[0]
    if not projects:
        raise CrawlRefError("no crawl in this Redis yet (run `invcrawl crawl SITE` first)")
    raise CrawlRefError(
        f"{len(projects)} projects in this Redis ({listing(projects)}): pick one with --project"
    )


async def resolve_ref(frontier: Frontier, ref: str) -> str:
    """The crawl id of ``ref``: a crawl id as is, ``PROJECT@VERSION`` looked up (an exact
    project name first, then one that differs in case only)."""
    parsed = parse_ref(ref)
    if parsed is None:
        return ref
    crawls = await crawl_versions(frontier)
    for exact in (True, False):
        matched = [c for c in crawls if matches(parsed, c.project, c.version, exact)]
        found = [c.crawl_id for c in versions_only(matched) or matched]  # a failed one last
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise CrawlRefError(
                f"{ref} is {len(found)} crawls ({', '.join(found)}): give one crawl id"
            )
    raise CrawlNotFound(ref)


async def given_names(session: CrawlSession) -> tuple[str | None, str | None]:
    """The project and version ``--project`` / ``--version`` gave the crawl earlier: a
    later run without them keeps them (the inventory header names it otherwise)."""
    project, version = await session.commands.hmget(
        session.keys.meta, ["project_given", "version_given"]
    )
    return (str(project) if project else None), (str(version) if version else None)


async def _check_complete(session: CrawlSession) -> None:
    if await trimmed_before(session):
        raise HistoryTrimmed(
            f"crawl {session.crawl_id} keeps its items only until they are exported "
            "(--retain-items exported): its stream no longer holds every item; compare its "
            "export files instead"
        )


async def latest_items(session: CrawlSession) -> dict[str, Item]:
    """Key → the latest live item of the crawl."""
    if not await session.exists():
        raise CrawlNotFound(session.crawl_id)
    await _check_complete(session)
    out: dict[str, Item] = {}
    async for data in iter_latest(session):
        item: Item = orjson.loads(data)
        out[item["key"]] = item
    return out


async def latest_item(session: CrawlSession, key: str) -> Item | None:
    """The latest version of one item (None: never there, or its latest entry is a
    tombstone): one pass over the stream."""
    await _check_complete(session)
    found: StreamEntry | None = None
    async for entry in all_entries(session):
        if entry.key == key:
            found = entry
    if found is None or found.removed:
        return None
    return cast(Item, found.item())  # not a tombstone: a whole item


async def projects_holding(
    frontier: Frontier, key: str, crawls: Sequence[CrawlVersion] | None = None
) -> list[str]:
    """The projects (sorted by name) with a version holding a live item of ``key``: one
    pipelined ``HEXISTS`` per crawl on the dedup hash of the key's bucket (its 48-bit
    digest, ``common/items.key_digest``; a tombstone removes it), no stream read.
    ``crawls``: those of :func:`crawl_versions`, if already read."""
    candidates = versions_only(crawls or await crawl_versions(frontier))
    if not candidates:
        return []
    pipe = frontier.pipeline(transaction=False)
    for crawl in candidates:
        bucket, field = key_digest(key, crawl.buckets)
        pipe.hexists(frontier.crawl(crawl.crawl_id).keys.isum(bucket), field)
    held = await pipe.execute()
    found = {c.project for c, there in zip(candidates, held, strict=True) if there}
    return sorted(found, key=lambda p: (p.casefold(), p))


async def history_project(frontier: Frontier, key: str, crawls: Sequence[CrawlVersion]) -> str:
    """The project ``history KEY`` means without ``--project``: the only one, else the
    only one holding the key (several projects in one Redis are the common case)."""
    projects = {c.project for c in crawls}
    if len(projects) <= 1:
        return pick_project(crawls, None)
    holding = await projects_holding(frontier, key, crawls)
    if len(holding) == 1:
        return holding[0]
    names = listing(holding or sorted(projects, key=lambda p: (p.casefold(), p)))
    if holding:
        raise CrawlRefError(
            f"{key} is in {len(holding)} projects ({names}): pick one with --project"
        )
    raise CrawlRefError(
        f"{key} is in no version of the {len(projects)} projects in this Redis ({names})"
    )


async def symbol_versions(
    frontier: Frontier, key: str, project: str | None
) -> tuple[str, list[tuple[CrawlVersion, Item | None]]]:
    """The project (``project``, else :func:`history_project`), and each of its versions
    (failed crawls left out) in version order with the symbol's item."""
    crawls = await crawl_versions(frontier)
    if project is not None:
        name = pick_project(crawls, project)
    else:
        name = await history_project(frontier, key, crawls)
    ordered = versions_only(by_project(crawls)[name])
    return name, [(c, await latest_item(frontier.crawl(c.crawl_id), key)) for c in ordered]
