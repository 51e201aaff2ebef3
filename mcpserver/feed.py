"""``changes_since``: the change feed, as ``invcrawl changes`` (``frontier/changes.py``,
and the composite cursor of ``frontier/every_crawl.py``)."""

from __future__ import annotations

from typing import Any

from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.every_crawl import (
    CursorTrimmed,
    check_not_trimmed,
    format_cursor,
    parse_cursor,
)
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion, crawl_versions
from invcrawl.mcpserver.bounded import DEFAULT_MAX_CHARS, cut_strings, size
from invcrawl.mcpserver.checks import ToolInputError, plural, shown
from invcrawl.mcpserver.projects import Answer, project_named


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
        name = project_named(project, crawls)
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
