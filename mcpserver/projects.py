"""What every tool answers, and which project and version it answers about: a project is
matched case-insensitively and a version is never substituted
(``common/search/selection.py``); what does not exist is a :class:`ToolInputError`
naming what does. ``list_projects`` lists them. Each tool's answer is JSON data read
through the frontier (which makes every Redis call) and a short text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from invcrawl.common.search import rerank, semantic
from invcrawl.common.search.selection import SelectionError, match_project, select_version
from invcrawl.frontier import search
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion, by_project, crawl_versions, versions_only
from invcrawl.mcpserver.bounded import DEFAULT_MAX_CHARS, fit_list
from invcrawl.mcpserver.checks import ToolInputError, plural, shown

Answer = tuple[dict[str, Any], str]  # (structured content, short text)


def project_named(requested: str, crawls: Sequence[CrawlVersion]) -> str:
    """The project ``requested`` names, case-insensitively (an unknown one: an error
    naming those that exist)."""
    try:
        return match_project(requested, sorted({c.project for c in versions_only(crawls)}))
    except SelectionError as exc:
        raise ToolInputError(str(exc)) from None


def version_named(
    project: str, requested: str | None, crawls: Sequence[CrawlVersion]
) -> CrawlVersion:
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
            "versions": [
                {**c.to_json(), "rankers": search.crawl_rankers(c, reranking=True)} for c in rows
            ],
        }
        for project, rows in grouped.items()
    ]
    text = "; ".join(
        f"{shown(project)}: {', '.join(shown(c.version, 20) for c in rows[:8])}"
        + (" ..." if len(rows) > 8 else "")
        for project, rows in list(grouped.items())[:20]
    )
    head = f"{plural(len(projects), 'project')}" + (f": {text}" if text else " (nothing crawled)")
    rankers = semantic.shipped_rankers() + ([rerank.NAME] if rerank.installed() else [])
    head += f"; search ranks by {' and '.join(rankers)}"
    return fit_list({"projects": projects}, "projects", max_chars), head
