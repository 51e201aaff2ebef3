"""Each tool's answer, as JSON data, read through the frontier (which makes every Redis
call): the same functions as ``invcrawl versions``, ``diff``, ``history`` and ``changes``
(``frontier/versions.py``, ``common/apidiff/``, ``frontier/changes.py``,
``frontier/every_crawl.py``), and the search engine (``frontier/search.py``). A project is
matched case-insensitively and a version is never substituted
(``common/search/selection.py``): what does not exist is a :class:`ToolInputError`
naming what does."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from invcrawl.common.apidiff import diff_all
from invcrawl.common.apidiff.order import history_steps, summary_of
from invcrawl.common.search import semantic
from invcrawl.common.search.selection import SelectionError, match_project, select_version
from invcrawl.frontier import search
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.connection import Client
from invcrawl.frontier.every_crawl import (
    CursorTrimmed,
    check_not_trimmed,
    format_cursor,
    parse_cursor,
)
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import (
    CrawlRefError,
    CrawlVersion,
    by_project,
    crawl_versions,
    latest_items,
    symbol_versions,
    versions_only,
)
from invcrawl.mcpserver.checks import ToolInputError, plural, shown

Answer = tuple[dict[str, Any], str]  # (structured content, short text)


# -- projects and versions -------------------------------------------------------------------


def _project(requested: str, crawls: Sequence[CrawlVersion]) -> str:
    """The project ``requested`` names, case-insensitively (an unknown one: an error
    naming those that exist)."""
    try:
        return match_project(requested, sorted({c.project for c in versions_only(crawls)}))
    except SelectionError as exc:
        raise ToolInputError(str(exc)) from None


def _version(project: str, requested: str | None, crawls: Sequence[CrawlVersion]) -> CrawlVersion:
    """The crawl of ``requested`` (exact, or an X-range's highest match; None: the latest
    finished) among the versions of ``project``, never another one in its place."""
    try:
        return select_version(requested, by_project(crawls).get(project, []))
    except SelectionError as exc:
        raise ToolInputError(str(exc)) from None


async def list_projects(frontier: Frontier) -> Answer:
    grouped = by_project(await crawl_versions(frontier))
    projects = [
        {
            "project": project,
            "versions": [{**c.to_json(), "rankers": search.crawl_rankers(c)} for c in rows],
        }
        for project, rows in grouped.items()
    ]
    text = "; ".join(
        f"{shown(project)}: {', '.join(shown(c.version, 20) for c in rows[:8])}"
        + (" ..." if len(rows) > 8 else "")
        for project, rows in list(grouped.items())[:20]
    )
    head = f"{plural(len(projects), 'project')}" + (f": {text}" if text else " (nothing crawled)")
    head += f"; search ranks by {' and '.join(semantic.shipped_rankers())}"
    return {"projects": projects}, head


# -- diff and history ------------------------------------------------------------------------


async def api_diff(
    frontier: Frontier, project: str, old: str, new: str, *, breaking_only: bool, limit: int
) -> Answer:
    crawls = await crawl_versions(frontier)
    name = _project(project, crawls)
    old_crawl, new_crawl = _version(name, old, crawls), _version(name, new, crawls)
    try:
        old_items, new_items = await asyncio.gather(
            latest_items(frontier.crawl(old_crawl.crawl_id)),
            latest_items(frontier.crawl(new_crawl.crawl_id)),
        )
    except HistoryTrimmed as exc:
        raise ToolInputError(str(exc)) from None
    diffs = sorted(diff_all(old_items, new_items), key=lambda d: (not d.breaking, d.key))
    counts = {
        change: sum(1 for d in diffs if d.change == change)
        for change in ("added", "removed", "changed")
    }
    counts["breaking"] = sum(1 for d in diffs if d.breaking)
    kept = [d for d in diffs if d.breaking or not breaking_only]
    data = {
        "project": name,
        "old": {"version": old_crawl.version, "crawl_id": old_crawl.crawl_id},
        "new": {"version": new_crawl.version, "crawl_id": new_crawl.crawl_id},
        "counts": counts,
        "total": len(kept),
        "truncated": len(kept) > limit,
        "changes": [d.to_json() for d in kept[:limit]],
    }
    text = (
        f"{shown(name)} {shown(old_crawl.version)} -> {shown(new_crawl.version)}: "
        f"{plural(len(diffs), 'symbol')} differ ({counts['added']} added, "
        f"{counts['removed']} removed, {counts['changed']} changed; {counts['breaking']} "
        f"breaking)" + (f"; the first {limit} shown" if len(kept) > limit else "")
    )
    return data, text


async def symbol_history(frontier: Frontier, key: str, project: str | None) -> Answer:
    """``invcrawl history``: the project given (case-insensitive), else the one holding
    the key (frontier/versions.history_project)."""
    try:
        name, rows = await symbol_versions(frontier, key, project)
    except (CrawlRefError, HistoryTrimmed) as exc:
        raise ToolInputError(str(exc).replace("--project", "project")) from None
    steps = history_steps([(c.version or c.crawl_id, c.crawl_id, item) for c, item in rows])
    facts = summary_of(steps)
    if not facts["exists_in"]:
        raise ToolInputError(
            f"{shown(key)} is in none of the {len(rows)} version(s) of {shown(name)}"
        )
    data = {"key": key, "project": name, **facts, "steps": [s.to_json() for s in steps]}
    changed = [s for s in steps if s.change is not None and s.version != facts["first"]]
    gone = f", removed in {shown(facts['removed_in'])}" if facts["removed_in"] else ""
    text = (
        f"{shown(key)} in {shown(name)}: in {len(facts['exists_in'])} of "
        f"{plural(len(steps), 'version')}, first in {shown(facts['first'])}{gone}; "
        f"{plural(len(changed), 'later change')}"
    )
    return data, text


# -- the change feed -------------------------------------------------------------------------


class _Full(Exception):
    """The answer holds ``limit`` events: stop reading."""


def _compact(event: dict[str, Any], crawl: CrawlVersion | None) -> dict[str, Any]:
    """An event without its whole item (``get_symbol`` gives that): what changed, where."""
    item = event.get("item") or {}
    out = {
        "event": event["event"],
        "key": event["key"],
        "project": crawl.project if crawl else None,
        "version": crawl.version if crawl else None,
        "crawl": crawl.crawl_id if crawl else None,
        "cursor": event["cursor"],
        "name": item.get("name"),
        "url": item.get("url"),
    }
    if "changes" in event:
        out["changes"] = event["changes"]
        out["breaking"] = event["breaking"]
    return out


async def changes_since(
    frontier: Frontier, project: str | None, cursor: str | None, limit: int
) -> Answer:
    """The events after ``cursor`` of every crawl (of ``project``), crawl by crawl, at
    most ``limit``; ``next_cursor`` resumes exactly after the last one (the composite
    cursor of ``invcrawl changes``)."""
    crawls = await crawl_versions(frontier)
    known = await frontier.registry.known()
    by_id = {c.crawl_id: c for c in crawls}
    if project is not None:
        name = _project(project, crawls)
        scope = [c for c in known if c in by_id and by_id[c].project == name]
    else:
        scope = list(known)
    positions, default = parse_cursor(cursor)
    for crawl_id in scope:  # those this answer does not reach keep where they stand
        positions.setdefault(crawl_id, default)
    events: list[dict[str, Any]] = []
    more = False
    for crawl_id in scope:
        start = positions[crawl_id]
        try:
            await check_not_trimmed(frontier, crawl_id, start)
        except CursorTrimmed as exc:
            raise ToolInputError(str(exc).replace("--retain-items", "retain-items")) from None

        def emit(event: dict[str, Any], crawl_id: str = crawl_id) -> None:
            events.append(_compact(event, by_id.get(crawl_id)))
            positions[crawl_id] = event["cursor"]
            if len(events) >= limit:
                raise _Full

        try:
            _, positions[crawl_id] = await read_changes(frontier.crawl(crawl_id), start, emit)
        except _Full:
            more = True
            break
    # Crawls outside the scope keep their positions; forgotten ones leave the cursor.
    next_cursor = format_cursor({c: p for c, p in positions.items() if c in known})
    data = {"events": events, "next_cursor": next_cursor, "more": more}
    kinds = {k: sum(1 for e in events if e["event"] == k) for k in ("added", "changed", "removed")}
    text = (
        f"{plural(len(events), 'event')} ({kinds['added']} added, {kinds['changed']} changed, "
        f"{kinds['removed']} removed){'; more to read' if more else ''}; "
        f"next cursor {shown(next_cursor, 200)}"
    )
    return data, text


# -- search ----------------------------------------------------------------------------------


async def search_symbols(
    redis: Client,
    query: str,
    *,
    project: str | None,
    version: str | None,
    kind: str | None,
    limit: int,
) -> Answer:
    try:
        answer = await search.search_answer(
            redis, query, project=project, version=version, kind=kind, limit=limit
        )
    except ValueError as exc:  # SelectionError included
        raise ToolInputError(str(exc)) from None
    hits = answer.hits
    top = ", ".join(
        f"{shown(h.name, 60)} ({shown(h.role, 20)}, {shown(h.project, 30)} {shown(h.version, 20)})"
        for h in hits[:5]
    )
    text = f"{plural(len(hits), 'result')} for {shown(query)}" + (f": {top}" if top else "")
    if answer.no_good_match:
        text = f"no good match for {shown(query)}: nothing clears the relevance floor"
    if answer.note:
        text += f" ({answer.note})"
    return answer.to_json(query), text


async def get_symbol(
    redis: Client, name: str, *, project: str | None, version: str | None
) -> Answer:
    try:
        found = await search.get_symbol(redis, name, project=project, version=version)
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None
    where = {"project": found.project, "version": found.version}
    if found.item is not None:
        item = found.item
        text = (
            f"{shown(item.get('key'))} in {shown(found.project)} {shown(found.version)}: "
            f"{shown(item.get('signature') or item.get('name'), 200)}"
        )
        for field, words in (("inherited_from", "inherited from"), ("alias_of", "alias of")):
            if item.get(field):
                text += f" ({words} {shown(item[field])})"
        return {**where, "item": item}, text
    if found.candidates:  # several symbols by that name, or none: the nearest
        text = (
            f"{shown(name)} names no single symbol: "
            f"{plural(len(found.candidates), 'candidate')}, "
            + ", ".join(shown(c.key, 80) for c in found.candidates[:5])
        )
        return {**where, "candidates": [c.to_json() for c in found.candidates]}, text
    raise ToolInputError(
        f"no symbol {shown(name)} in {shown(found.project)} {shown(found.version)} "
        "(search_symbols finds symbols by words of their name)"
    )
