"""``invcrawl versions``, ``diff`` and ``history``: versions of a project side by side
(docs/versions.md). Their handlers (``cmd_versions``, ``cmd_diff``, ``cmd_history``)
give :func:`versions`, :func:`diff` and :func:`history` the config and ``read``, which
runs a job on the frontier of the configured Redis; each returns an exit code.

What they print comes from sites (projects, versions, keys, parameter names and values):
every string goes through ``invcrawl/render.safe`` (the text outputs) or is written by
the Markdown renderer and then through ``terminal_safe``, whether standard output is a
terminal, a pipe or a file (as ``status`` and ``inventory``): a control character is
shown as ``\\x1b``, never written raw, and Markdown stays Markdown; ``--json`` writes
the control characters JSON leaves raw as ``\\uXXXX`` (``render.json_safe``). A column is as wide as
its values up to :data:`COLUMN`: a longer value overflows its own row only."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from invcrawl import terminal
from invcrawl.common.apidiff import SymbolDiff, diff_all
from invcrawl.common.apidiff.order import Step, history_steps, summary_of
from invcrawl.common.apidiff.render import Style, describe, markdown, summary
from invcrawl.common.items import Item
from invcrawl.common.search.ranking import SearchInputError
from invcrawl.common.search.selection import SelectionError
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.errors import EXIT_OK, UsageError, UserError
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import (
    CrawlVersion,
    by_project,
    crawl_versions,
    latest_items,
    pick_project,
    resolve_ref,
    same_as,
    symbol_versions,
)
from invcrawl.live_redis import redis_for
from invcrawl.render import json_safe, safe, terminal_safe
from invcrawl.scope import with_frontier

T = TypeVar("T")
Read = Callable[[Callable[[Frontier], Awaitable[T]]], T]
TERMINAL = Style(safe, safe)  # site strings on the terminal: control characters escaped
COLUMN = 32  # characters a column pads to at most
PROJECTS_PAGE = 50  # projects a page of `versions` shows (--page N, --all)


def _width(values: list[str]) -> int:
    return min(COLUMN, max((len(v) for v in values), default=0))


def versions(config: Config, read: Read[list[CrawlVersion]]) -> int:
    """Projects and their versions, a page of ``PROJECTS_PAGE`` projects by name (``--page
    N``, ``--all``; ``--project`` one project): a Redis of 10,000 crawls prints a screen
    of them, not every one."""
    crawls = read(crawl_versions)
    grouped = by_project(crawls)
    if config.project_name is not None:
        name = pick_project(crawls, config.project_name)
        grouped = {name: grouped[name]}
    total = len(grouped)
    offset = 0 if config.show_all else (config.page - 1) * PROJECTS_PAGE
    shown = total if config.show_all else PROJECTS_PAGE
    page = dict(itertools.islice(grouped.items(), offset, offset + shown))
    if config.json:
        data = [
            {"project": project, "versions": [c.to_json() for c in rows]}
            for project, rows in page.items()
        ]
        paging = {"offset": offset, "shown": len(page), "total": total}
        listing = {"projects": data, "page": paging}
        print(json_safe(json.dumps(listing, indent=2, ensure_ascii=False)))
        return EXIT_OK
    if not grouped:
        print("no crawl in this Redis yet")
    elif not page:
        print(f"no projects on this page: {total} projects in this Redis")
    else:
        print(render_versions(page))
        if len(page) < total:
            print(
                f"projects {offset + 1}-{offset + len(page)} of {total} shown: "
                "--page N for others, --all for every one, --project NAME for one"
            )
    return EXIT_OK


def _when(ms: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms else "-"


def render_versions(grouped: dict[str, list[CrawlVersion]]) -> str:
    """Each project and its versions in order; its failed crawls (an inventory that
    could not be read: no version) after them, marked, with their error."""
    lines = []
    twins = same_as([c for rows in grouped.values() for c in rows])
    for project, rows in grouped.items():
        real = [c for c in rows if not c.failed]
        failed = [c for c in rows if c.failed]
        counted = f"{len(real)} version(s)" + (f", {len(failed)} failed crawl(s)" if failed else "")
        lines.append(f"{safe(project) or '(no project name)'}: {counted}")
        shown = ["FAILED" if c.failed else safe(c.version) or "-" for c in rows]
        ids = [safe(c.crawl_id) for c in rows]
        width, id_width = _width(shown), _width(ids)
        for c, version, crawl_id in zip(rows, shown, ids, strict=True):
            row = f"  {version:<{width}}  {crawl_id:<{id_width}}  {safe(c.state):<9} "
            if c.failed:
                row += f"not a version: {safe(c.error) or 'its inventory could not be read'}"
            else:
                row += f"{c.entries:>7} entries  {_when(c.crawled_at)}"
                if c.crawl_id in twins:  # PROJECT@VERSION names both: give a crawl id
                    row += f"  same as {safe(twins[c.crawl_id])}"
            lines.append(row)
        if failed:
            lines.append("  (a failed crawl holds nothing: `invcrawl forget ID` removes it)")
    return terminal_safe("\n".join(lines))


def _label(crawl: CrawlVersion | None, crawl_id: str) -> str:
    if crawl is None or not (crawl.project or crawl.version):
        return crawl_id
    return f"{crawl.project} {crawl.version}".strip()


@dataclass(frozen=True, slots=True)
class Compared:
    """What ``diff`` compared: the labels of both sides, the differences, the modules
    documented on either side, and the two crawls (None: unknown to the registry)."""

    old_label: str
    new_label: str
    diffs: list[SymbolDiff]
    modules: set[str]
    old: CrawlVersion | None
    new: CrawlVersion | None


def diff(config: Config, read: Read[Compared]) -> int:
    if not config.old_crawl or not config.new_crawl:
        raise ConfigError(
            "diff needs OLD and NEW: two crawl ids or PROJECT@VERSION (see `invcrawl versions`)"
        )
    if config.json and config.markdown:
        raise ConfigError("--json and --markdown do not go together: pick one")
    old_ref, new_ref = config.old_crawl, config.new_crawl

    async def job(frontier: Frontier) -> Compared:
        old_id = await resolve_ref(frontier, old_ref)
        new_id = await resolve_ref(frontier, new_ref)
        known = {c.crawl_id: c for c in await crawl_versions(frontier)}
        for crawl in (known.get(old_id), known.get(new_id)):
            if crawl is not None and crawl.failed:
                why = crawl.error or "its inventory could not be read"
                raise UsageError(
                    f"crawl {crawl.crawl_id} failed ({why}): it holds no version to compare; "
                    f"`invcrawl forget {crawl.crawl_id}` removes it"
                )
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
        return Compared(
            old_label, new_label, diff_all(old, new), modules, known.get(old_id), known.get(new_id)
        )

    try:
        compared = read(job)
    except HistoryTrimmed as exc:
        raise UserError(str(exc)) from None
    note_other_project(compared.old, compared.new)
    diffs, old_label, new_label = compared.diffs, compared.old_label, compared.new_label
    if config.json:
        for d in diffs:
            sys.stdout.write(json_safe(json.dumps(d.to_json(), ensure_ascii=False)) + "\n")
    elif config.markdown:
        sys.stdout.write(terminal_safe(markdown(diffs, old_label, new_label, compared.modules)))
    else:
        print(terminal_safe(summary(diffs, old_label, new_label, TERMINAL)))
    return EXIT_OK


def note_other_project(old: CrawlVersion | None, new: CrawlVersion | None) -> None:
    """``diff`` of two projects is allowed (a project renamed, a fork), but every symbol
    of one library differs from another's: say so, on standard error (a note: ``-q``
    hides it), before the answer."""
    if old is None or new is None or not old.project or not new.project:
        return
    if old.project.casefold() != new.project.casefold():
        terminal.say(
            f"note: {safe(old.crawl_id)} is project {safe(old.project)} and "
            f"{safe(new.crawl_id)} is project {safe(new.project)}: comparing two projects"
        )


History = tuple[str, str, list[tuple[CrawlVersion, Item | None]]]


def history(config: Config, read: Read[History]) -> int:
    name = config.symbol
    if not name:
        raise ConfigError(
            "history needs NAME: an item key, e.g. py:function:json.dumps, or a qualified name"
        )

    async def job(frontier: Frontier) -> History:
        # (the search engine and its model, for history only: `versions` loads neither)
        from invcrawl.frontier.symbol_names import symbol_key  # noqa: PLC0415

        # a name as `show` takes it (requests.get), turned into its key first
        key = await symbol_key(frontier, name, config.project)
        return (key, *await symbol_versions(frontier, key, config.project))

    try:
        key, project, rows = read(job)
    except HistoryTrimmed as exc:
        raise UserError(str(exc)) from None
    except (SearchInputError, SelectionError) as exc:
        raise UsageError(str(exc)) from None
    steps = history_steps([(c.version or c.crawl_id, c.crawl_id, item) for c, item in rows])
    facts = summary_of(steps)
    if not facts["exists_in"]:
        raise UserError(
            f"{key} is in none of the {len(rows)} version(s) of {project or 'this project'}"
        )
    if config.json:
        data = {"key": key, "project": project, **facts, "steps": [s.to_json() for s in steps]}
        print(json_safe(json.dumps(data, indent=2, ensure_ascii=False)))
        return EXIT_OK
    print(render_history(key, project, steps, facts))
    return EXIT_OK


def render_history(key: str, project: str, steps: list[Step], facts: dict[str, Any]) -> str:
    gone = f"; removed in {safe(facts['removed_in'])}" if facts["removed_in"] else ""
    lines = [
        f"{safe(key)} in {safe(project) or '(no project name)'}: in {len(facts['exists_in'])} "
        f"of {len(steps)} version(s), first in {safe(facts['first'])}{gone}"
    ]
    shown = [safe(s.version) for s in steps]
    width = _width(shown)
    for s, version in zip(steps, shown, strict=True):
        if s.change is None:
            what = "unchanged" if s.present else "-"
        elif s.change == "changed":
            what = "; ".join(
                describe(c, TERMINAL) + (" (breaking)" if c.breaking else "") for c in s.changes
            )
        else:
            what = s.change + (" (breaking)" if s.breaking else "")
        lines.append(f"  {version:<{width}}  {what}")
    return terminal_safe("\n".join(lines))


# -- the handlers -----------------------------------------------------------------------------


def _reader(config: Config) -> Callable[[Callable[[Frontier], Awaitable[Any]]], Any]:
    """Run one read job on the frontier of the configured Redis."""

    def read(job: Callable[[Frontier], Awaitable[Any]]) -> Any:
        with redis_for(config, create=False) as live:
            return with_frontier(live, job)

    return read


def cmd_versions(config: Config) -> int:
    return versions(config, _reader(config))


def cmd_diff(config: Config) -> int:
    return diff(config, _reader(config))


def cmd_history(config: Config) -> int:
    return history(config, _reader(config))
