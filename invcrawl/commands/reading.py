"""The handlers of the commands that read crawls: ``status`` (their progress),
``report`` (their coverage), ``export`` (their items) and ``changes`` (their change
feed), of ``--crawl-id`` or of every crawl."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from invcrawl import terminal
from invcrawl.common.search import rerank
from invcrawl.common.search.semantic import shipped_rankers
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.errors import EXIT_OK, UsageError, UserError
from invcrawl.frontier.changes import read_changes
from invcrawl.frontier.every_crawl import (
    CursorTrimmed,
    check_not_trimmed,
    coverage_all,
    read_all_changes,
)
from invcrawl.frontier.export import HistoryTrimmed
from invcrawl.frontier.retry import Calls, Once, reconnect
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import FLEET_PAGE, status_view
from invcrawl.frontier.versions import crawl_versions, resolve_ref, same_as
from invcrawl.live_redis import redis_for
from invcrawl.output.export import export_all_to, export_to, follow_all_to, follow_to
from invcrawl.output.files import appending
from invcrawl.output.paths import check_output_file, write_failed
from invcrawl.process import interrupts
from invcrawl.render import fit
from invcrawl.render_status import render_reports, render_status_view
from invcrawl.scope import crawls_in_scope, with_frontier


def cmd_status(config: Config) -> int:
    """One crawl in detail, or all crawls; ``--watch`` refreshes until all are settled."""

    async def job(frontier: Frontier) -> int:
        clear = config.watch and sys.stdout.isatty() and not config.json
        # --watch rides out Redis outages (one line each): the last status stays shown
        redis: Calls = reconnect("status --watch", terminal.note) if config.watch else Once()
        crawl_id = await resolve_ref(frontier, config.crawl_id) if config.crawl_id else None
        # the same project@version as another crawl: said under its title (issue 47.3)
        # (one crawl's view only: the fleet's table reads its page's crawls, not every one)
        twin = same_as(await crawl_versions(frontier)).get(crawl_id) if crawl_id else None
        limit = None if config.show_all else FLEET_PAGE
        offset = (config.page - 1) * FLEET_PAGE
        while True:
            data, settled = await redis.call(
                lambda: status_view(frontier, crawl_id, config.lease_ms, limit, offset)
            )
            rankers = shipped_rankers()  # the search of every crawl here (docs/search.md)
            # the MCP server's adds the transformer re-ranker where its weights are
            served = [*rankers, rerank.NAME] if rerank.installed() else rankers
            if config.json:
                shown = {**data.as_dict(), "search_rankers": rankers, "mcp_search_rankers": served}
                text = json.dumps(shown, indent=None if config.watch else 2)
            else:
                text = render_status_view(data, terminal.width())
                if twin is not None:
                    title, _, rest = text.partition("\n")
                    note = f"same as  {twin}: give a crawl id where PROJECT@VERSION names both"
                    text = f"{title}\n{fit(note, terminal.width())}\n{rest}"
                text += f"\nsearch: {' + '.join(rankers)}"
                if served != rankers:
                    text += f" (MCP server: + {' + '.join(served[len(rankers) :])})"
            if clear:
                sys.stdout.write("\x1b[H\x1b[2J")
            print(text, flush=True)
            if not config.watch or settled:
                return EXIT_OK
            await asyncio.sleep(1.0)

    with redis_for(config, create=False) as live, interrupts.interruptible():
        return with_frontier(live, job)


def cmd_report(config: Config) -> int:
    """Coverage of ``--crawl-id`` (one report), or of every crawl (a list of them)."""

    async def job(frontier: Frontier) -> list[dict[str, Any]]:
        return await coverage_all(frontier, await crawls_in_scope(frontier, config))

    with redis_for(config, create=False) as live:
        reports = with_frontier(live, job)
    if live.json:
        print(json.dumps(reports[0] if config.crawl_id else reports, indent=2))
    else:
        print(render_reports(reports, terminal.width()))
    return EXIT_OK


def cmd_export(config: Config) -> int:
    item_filter = config.item_filter
    picked = config.project is not None or config.version is not None

    async def job(frontier: Frontier) -> int:
        crawls = await crawls_in_scope(frontier, config)
        if picked:
            crawls = await crawls_of_version(frontier, crawls, config.project, config.version)
        try:
            if picked:
                return await export_all_to(frontier, crawls, config.output, item_filter)
            if config.crawl_id is None and config.follow:
                return await follow_all_to(
                    frontier, config.output, config.group, terminal.note, item_filter
                )
            if config.crawl_id is None:
                if config.base is not None:
                    raise UsageError("--base is the earlier export of one crawl: give --crawl-id")
                return await export_all_to(frontier, crawls, config.output, item_filter)
            session = frontier.crawl(crawls[0])
            if config.follow:
                return await follow_to(
                    session, config.output, config.group, terminal.note, item_filter
                )
            return await export_to(session, config.output, config.base, item_filter)
        except HistoryTrimmed as exc:
            raise UserError(str(exc)) from None

    if picked and (config.follow or config.base is not None):
        raise UsageError(
            "--project and --version pick crawls to export once: not with --follow or --base"
        )
    check_output_file(config.output)
    if config.base is not None and not config.base.is_file():
        raise ConfigError(f"--base {config.base}: no such file")
    with redis_for(config, create=False) as live, interrupts.interruptible():
        try:
            count = with_frontier(live, job)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError | ConnectionError | TimeoutError):
                raise
            # (the .part file is gone: removed by the writer on failure)
            raise write_failed(config.output, exc, "nothing was changed in Redis") from None
    if not live.follow:
        terminal.say(f"{count} items written to {live.output or 'stdout'}")
    return EXIT_OK


async def crawls_of_version(
    frontier: Frontier, crawls: list[str], project: str | None, version: str | None
) -> list[str]:
    """The crawls of ``crawls`` whose project (in any case) and version are these."""
    wanted = set(crawls)
    found = [
        c.crawl_id
        for c in await crawl_versions(frontier)
        if c.crawl_id in wanted
        and (project is None or c.project.casefold() == project.casefold())
        and (version is None or c.version == version)
    ]
    if not found:
        named = "@".join(v for v in (project or "*", version or "*"))
        raise UserError(f"no crawl of {named} in this Redis (see `invcrawl versions`)")
    return found


def cmd_changes(config: Config) -> int:
    """The change feed as JSON Lines (of ``--crawl-id``, or of every crawl with each event
    naming its crawl); the cursor to resume from goes to stderr."""

    if config.crawl_id and config.since and "=" in config.since:
        raise UsageError(
            f"--since {config.since} is the cursor of several crawls: give it without "
            "--crawl-id, or the one entry id of this crawl"
        )
    check_output_file(config.output)
    with redis_for(config, create=False) as live, interrupts.interruptible():
        count, cursor = with_frontier(live, lambda frontier: read_changes_of(frontier, config))
    terminal.say(f"{count} change(s); resume with --since {cursor}")
    return EXIT_OK


async def read_changes_of(frontier: Frontier, config: Config) -> tuple[int, str]:
    """Write the change events of ``--crawl-id`` or of every crawl; (events, cursor)."""
    crawls = await crawls_in_scope(frontier, config)
    with appending(config.output) as out:

        def emit(event: dict[str, Any]) -> None:
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
            if config.follow:
                out.flush()

        try:
            if config.crawl_id is None:
                return await read_all_changes(
                    frontier, config.since, emit, config.follow, note=terminal.note
                )
            await check_not_trimmed(frontier, crawls[0], config.since or "0-0")
        except CursorTrimmed as exc:
            raise UserError(str(exc)) from None
        session = frontier.crawl(crawls[0])
        return await read_changes(
            session, config.since, emit, follow=config.follow, note=terminal.note
        )
