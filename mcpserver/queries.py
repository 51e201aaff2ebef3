"""Each tool's answer, as JSON data, read through the frontier (which makes every Redis
call): the same functions as ``invcrawl versions``, ``diff``, ``history`` and ``changes``
(``frontier/versions.py``, ``common/apidiff/``, ``frontier/changes.py``,
``frontier/every_crawl.py``), and the search engine (``frontier/search.py``). A project is
matched case-insensitively and a version is never substituted
(``common/search/selection.py``): what does not exist is a :class:`ToolInputError`
naming what does."""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence
from typing import Any

from invcrawl.common.apidiff import diff_all
from invcrawl.common.apidiff.order import history_steps, summary_of
from invcrawl.common.search import semantic
from invcrawl.common.search.selection import SelectionError, match_project, select_version
from invcrawl.frontier import search
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.every_crawl import (
    CursorTrimmed,
    check_not_trimmed,
    format_cursor,
    parse_cursor,
)
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.search import SymbolHit
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
from invcrawl.mcpserver.bounded import (
    DEFAULT_MAX_CHARS,
    PAGED,
    cut_strings,
    fit_item,
    fit_list,
    page,
    size,
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


async def list_projects(frontier: Frontier, max_chars: int = DEFAULT_MAX_CHARS) -> Answer:
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
    return fit_list({"projects": projects}, "projects", max_chars), head


# -- diff and history ------------------------------------------------------------------------


async def api_diff(
    frontier: Frontier,
    project: str,
    old: str,
    new: str,
    *,
    breaking_only: bool,
    limit: int,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
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
        "truncated": len(kept) > offset + limit or offset > 0,
        "changes": [d.to_json() for d in kept[offset : offset + limit]],
    }
    if offset:
        data["offset"] = offset
    data = fit_list(data, "changes", max_chars)
    text = (
        f"{shown(name)} {shown(old_crawl.version)} -> {shown(new_crawl.version)}: "
        f"{plural(len(diffs), 'symbol')} differ ({counts['added']} added, "
        f"{counts['removed']} removed, {counts['changed']} changed; {counts['breaking']} "
        f"breaking)" + _shown_part(data, "changes", offset, len(kept))
    )
    return data, text


async def symbol_history(
    frontier: Frontier, key: str, project: str | None, max_chars: int = DEFAULT_MAX_CHARS
) -> Answer:
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
    data = fit_list(data, "steps", max_chars)
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
    frontier: Frontier,
    project: str | None,
    cursor: str | None,
    limit: int,
    max_chars: int = DEFAULT_MAX_CHARS,
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
    # the events that fit max_chars: the one that would not is the next answer's first,
    # so that next_cursor stays exact (one alone too long: its strings cut)
    budget, used = max_chars - 600, [0]
    for crawl_id in scope:
        start = positions[crawl_id]
        try:
            await check_not_trimmed(frontier, crawl_id, start)
        except CursorTrimmed as exc:
            raise ToolInputError(str(exc).replace("--retain-items", "retain-items")) from None

        def emit(event: dict[str, Any], crawl_id: str = crawl_id) -> None:
            compact = _compact(event, by_id.get(crawl_id))
            weight = size(compact) + 1
            if events and used[0] + weight > budget:
                raise _Full
            events.append(cut_strings(compact, budget))
            used[0] += weight
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
    frontier: Frontier,
    query: str,
    *,
    project: str | None,
    version: str | None,
    kind: str | None,
    limit: int,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Answer:
    try:
        answer = await search.search_answer(
            frontier, query, project=project, version=version, kind=kind, limit=limit
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
    return fit_list(answer.to_json(query), "results", max_chars), text


async def get_symbol(
    frontier: Frontier,
    name: str,
    *,
    project: str | None,
    version: str | None,
    field: str | None = None,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Answer:
    """The item ``name`` names, within ``max_chars`` (``cut`` says what was cut); with
    ``field``, the part of that field from ``offset`` (mcpserver/bounded.py)."""
    if field is not None and field not in PAGED:
        raise ToolInputError(f"field {shown(field)} is not one that is cut: {', '.join(PAGED)}")
    try:
        found = await search.get_symbol(frontier, name, project=project, version=version)
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None
    where = {"project": found.project, "version": found.version}
    if found.item is not None:
        item = found.item
        if field is not None:
            return _part(where, item, field, offset, max_chars)
        answer = fit_item({**where, "item": item}, max_chars)
        cut = answer.get("cut") or {}
        text = (
            f"{shown(item.get('key'))} in {shown(found.project)} {shown(found.version)}: "
            f"{shown(item.get('signature') or item.get('name'), 200)}"
            + (f"; cut to {max_chars:,} characters: {', '.join(cut)} (read on with field and "
               "offset)" if cut else "")
        )  # fmt: skip
        for field_name, words in (("inherited_from", "inherited from"), ("alias_of", "alias of")):
            if item.get(field_name):
                text += f" ({words} {shown(item[field_name])})"
        return answer, text
    named = [c for c in found.candidates if _names(name, c)]
    if named:  # several symbols by that name: which one is meant
        text = (
            f"{shown(name)} names no single symbol: {plural(len(named), 'candidate')}, "
            + ", ".join(shown(c.key, 80) for c in named[:5])
        )
        answer = {**where, "candidates": [c.to_json() for c in named]}
        return fit_list(answer, "candidates", max_chars), text
    close = _close(name, found.candidates)
    tail = name.strip().rpartition(".")[2].rpartition(":")[2]
    if not close and tail:  # the name's last component alone finds a misspelt one
        try:
            nearby = await search.search_answer(
                frontier, tail, project=project, version=version, limit=20
            )
        except ValueError:
            nearby = None
        close = _close(name, nearby.hits) if nearby else []
    scope = f"{shown(found.project)} {shown(found.version)}" if found.project else "any project"
    raise ToolInputError(
        f"no symbol {shown(name)} in {scope}"
        + (f"; did you mean {', '.join(shown(c.key, 80) for c in close)}?" if close else "")
        + " (search_symbols finds symbols by words of their name)"
    )


def _part(
    where: dict[str, Any], item: dict[str, Any], field: str, offset: int, max_chars: int
) -> Answer:
    """The part of ``item[field]`` from ``offset`` that fits ``max_chars``."""
    value = item.get(field)
    total = len(value) if isinstance(value, (str, list)) else 0
    if offset > total:
        raise ToolInputError(f"offset {offset} is past the end of {field} ({total:,} in all)")
    head = {**where, "key": item["key"], "field": field, "offset": offset, "total": total}
    part, next_offset = page(value, offset, max_chars - size(head) - 200)
    data = {**head, "next_offset": next_offset, "part": part}
    count = len(part) if isinstance(part, (str, list)) else 0
    text = f"{shown(item['key'])} {field}: {offset:,} to {offset + count:,} of {total:,}" + (
        f"; next offset {next_offset}" if next_offset is not None else "; the end"
    )
    return data, text


def _shown_part(data: dict[str, Any], key: str, offset: int, total: int) -> str:
    """How much of ``total`` a list answer shows, for its text ("" : all of it)."""
    count = len(data[key])
    if offset == 0 and count == total:
        return ""
    return f"; {count} shown from {offset} (offset reads on)"


DID_YOU_MEAN = 3  # close names offered for a name that is no symbol
CLOSE = 0.75  # difflib's ratio of a close name (a typo or two in a short name)


def _names(requested: str, hit: SymbolHit) -> bool:
    """Whether ``requested`` names ``hit`` (its key, qualified name or a dotted tail of
    it, in any case): a symbol it may mean, not merely a neighbour of the search."""
    wanted, name = requested.strip().lower(), hit.name.lower()
    return wanted in (hit.key.lower(), name) or name.endswith("." + wanted)


def _close(requested: str, hits: Sequence[SymbolHit]) -> list[SymbolHit]:
    """At most :data:`DID_YOU_MEAN` of ``hits`` whose name (or its last component) is
    spelt close to ``requested``, the closest first."""
    wanted = requested.strip().lower()
    tail = wanted.rpartition(".")[2]

    def ratio(hit: SymbolHit) -> float:
        name = hit.name.lower()
        return max(
            difflib.SequenceMatcher(None, wanted, name).ratio(),
            difflib.SequenceMatcher(None, tail, name.rpartition(".")[2]).ratio(),
        )

    scored = sorted(((ratio(h), n, h) for n, h in enumerate(hits)), key=lambda t: (-t[0], t[1]))
    return [h for r, _, h in scored if r >= CLOSE][:DID_YOU_MEAN]
