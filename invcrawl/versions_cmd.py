"""``invcrawl versions``, ``diff`` and ``history``: versions of a project side by side
(docs/versions.md). Each takes the config and ``read``, which runs a job on the frontier
of the configured Redis (``invcrawl/reader_cmds.py`` provides it, so this module needs nothing
of that one's), and returns an exit code."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from common.apidiff import SymbolDiff, diff_all
from common.apidiff_render import describe, markdown, summary
from common.apidiff_versions import Step, history_steps, summary_of
from common.config import Config, ConfigError
from frontier.export import HistoryTrimmed
from frontier.session import Frontier
from frontier.versions import (
    CrawlVersion,
    by_project,
    crawl_versions,
    latest_items,
    pick_project,
    resolve_ref,
    symbol_versions,
)
from invcrawl.errors import EXIT_OK, UserError

T = TypeVar("T")
Read = Callable[[Callable[[Frontier], Awaitable[T]]], T]


def versions(config: Config, read: Read[list[CrawlVersion]]) -> int:
    crawls = read(crawl_versions)
    grouped = by_project(crawls)
    if config.project_name is not None:
        name = pick_project(crawls, config.project_name)
        grouped = {name: grouped[name]}
    if config.json:
        data = [
            {"project": project, "versions": [c.to_json() for c in rows]}
            for project, rows in grouped.items()
        ]
        print(json.dumps({"projects": data}, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(render_versions(grouped) if grouped else "no crawl in this Redis yet")
    return EXIT_OK


def _when(ms: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms else "-"


def render_versions(grouped: dict[str, list[CrawlVersion]]) -> str:
    lines = []
    for project, rows in grouped.items():
        lines.append(f"{project or '(no project name)'}: {len(rows)} version(s)")
        width = max(len(c.version or "-") for c in rows)
        ids = max(len(c.crawl_id) for c in rows)
        for c in rows:
            lines.append(
                f"  {c.version or '-':<{width}}  {c.crawl_id:<{ids}}  {c.state:<9} "
                f"{c.entries:>7} entries  {_when(c.crawled_at)}"
            )
    return "\n".join(lines)


def _label(crawl: CrawlVersion | None, crawl_id: str) -> str:
    if crawl is None or not (crawl.project or crawl.version):
        return crawl_id
    return f"{crawl.project} {crawl.version}".strip()


def diff(config: Config, read: Read[tuple[str, str, list[SymbolDiff], set[str]]]) -> int:
    if not config.old_crawl or not config.new_crawl:
        raise ConfigError(
            "diff needs OLD and NEW: two crawl ids or PROJECT@VERSION (see `invcrawl versions`)"
        )
    if config.json and config.markdown:
        raise ConfigError("--json and --markdown do not go together: pick one")
    old_ref, new_ref = config.old_crawl, config.new_crawl

    async def job(frontier: Frontier) -> tuple[str, str, list[SymbolDiff], set[str]]:
        old_id = await resolve_ref(frontier, old_ref)
        new_id = await resolve_ref(frontier, new_ref)
        known = {c.crawl_id: c for c in await crawl_versions(frontier)}
        old, new = await asyncio.gather(
            latest_items(frontier.crawl(old_id)), latest_items(frontier.crawl(new_id))
        )
        modules = {
            str(i.get("name"))
            for items in (old, new)
            for i in items.values()
            if i.get("domain") == "py" and i.get("role") == "module"
        }
        old_label = _label(known.get(old_id), old_id)
        new_label = _label(known.get(new_id), new_id)
        if old_label == new_label:
            old_label, new_label = old_id, new_id
        return old_label, new_label, diff_all(old, new), modules

    try:
        old_label, new_label, diffs, modules = read(job)
    except HistoryTrimmed as exc:
        raise UserError(str(exc)) from None
    if config.json:
        for d in diffs:
            sys.stdout.write(json.dumps(d.to_json(), ensure_ascii=False) + "\n")
    elif config.markdown:
        sys.stdout.write(markdown(diffs, old_label, new_label, modules))
    else:
        print(summary(diffs, old_label, new_label))
    return EXIT_OK


def history(
    config: Config, read: Read[tuple[str, list[tuple[CrawlVersion, dict[str, Any] | None]]]]
) -> int:
    key = config.symbol
    if not key:
        raise ConfigError("history needs KEY: an item key, e.g. py:function:json.dumps")

    async def job(
        frontier: Frontier,
    ) -> tuple[str, list[tuple[CrawlVersion, dict[str, Any] | None]]]:
        return await symbol_versions(frontier, key, config.project)

    try:
        project, rows = read(job)
    except HistoryTrimmed as exc:
        raise UserError(str(exc)) from None
    steps = history_steps([(c.version or c.crawl_id, c.crawl_id, item) for c, item in rows])
    facts = summary_of(steps)
    if not facts["exists_in"]:
        raise UserError(
            f"{key} is in none of the {len(rows)} version(s) of {project or 'this project'}"
        )
    if config.json:
        data = {"key": key, "project": project, **facts, "steps": [s.to_json() for s in steps]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(render_history(key, project, steps, facts))
    return EXIT_OK


def render_history(key: str, project: str, steps: list[Step], facts: dict[str, Any]) -> str:
    gone = f"; removed in {facts['removed_in']}" if facts["removed_in"] else ""
    lines = [
        f"{key} in {project or '(no project name)'}: in {len(facts['exists_in'])} of "
        f"{len(steps)} version(s), first in {facts['first']}{gone}"
    ]
    width = max(len(s.version) for s in steps)
    for s in steps:
        if s.change is None:
            what = "unchanged" if s.present else "-"
        elif s.change == "changed":
            what = "; ".join(
                describe(c) + (" (breaking)" if c["breaking"] else "") for c in s.changes
            )
        else:
            what = s.change + (" (breaking)" if s.breaking else "")
        lines.append(f"  {s.version:<{width}}  {what}")
    return "\n".join(lines)
