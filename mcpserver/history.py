"""``api_diff`` and ``symbol_history``: the same functions as ``invcrawl diff`` and
``history`` (``common/apidiff/``, ``frontier/versions.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from invcrawl.common.apidiff import diff_all
from invcrawl.common.apidiff.order import history_steps, summary_of
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlRefError, crawl_versions, latest_items, symbol_versions
from invcrawl.mcpserver.bounded import DEFAULT_MAX_CHARS, fit_list
from invcrawl.mcpserver.checks import ToolInputError, plural, shown
from invcrawl.mcpserver.projects import Answer, project_named, version_named


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
    name = project_named(project, crawls)
    old_crawl, new_crawl = version_named(name, old, crawls), version_named(name, new, crawls)
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


def _shown_part(data: dict[str, Any], key: str, offset: int, total: int) -> str:
    """How much of ``total`` a list answer shows, for its text ("" : all of it)."""
    count = len(data[key])
    if offset == 0 and count == total:
        return ""
    return f"; {count} shown from {offset} (offset reads on)"
