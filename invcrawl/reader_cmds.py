"""The handlers of the commands that read or administer crawls: ``status``, ``report``,
``export``, ``changes``, ``dlq``, ``reshard``, ``redis``, ``forget``, ``dashboard``,
``versions``, ``diff`` and ``history`` (``invcrawl/commands.py`` dispatches to them).
The dashboard's aiohttp (~0.16 s) is imported by its handler only."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from common import interrupts
from common.config import Config, ConfigError
from dashboard.access import access_secret
from frontier import admin
from frontier.every_crawl import coverage_all, dead_letters_all, redrive_all
from frontier.export import HistoryTrimmed
from frontier.reconnect import Calls, Once, reconnect
from frontier.session import Frontier
from frontier.status import FLEET_PAGE, status_view
from frontier.versions import resolve_ref
from invcrawl import terminal, versions_cmd
from invcrawl.errors import EXIT_OK, UsageError, UserError
from invcrawl.exporting import export_all_to, export_to, follow_all_to, follow_to
from invcrawl.live_redis import redis_for
from invcrawl.operations import forget_crawls, read_changes_of
from invcrawl.outputs import check_output_file, write_failed
from invcrawl.render_status import render_dlq, render_reports, render_status_view
from invcrawl.scope import crawls_in_scope, resolve_crawl, with_frontier


def cmd_status(config: Config) -> int:
    """One crawl in detail, or all crawls; ``--watch`` refreshes until all are settled."""

    async def job(frontier: Frontier) -> int:
        clear = config.watch and sys.stdout.isatty() and not config.json
        # --watch rides out Redis outages (one line each): the last status stays shown
        redis: Calls = reconnect("status --watch", terminal.note) if config.watch else Once()
        crawl_id = await resolve_ref(frontier, config.crawl_id) if config.crawl_id else None
        limit = None if config.status_all else FLEET_PAGE
        offset = (config.status_page - 1) * FLEET_PAGE
        while True:
            data, settled = await redis.call(
                lambda: status_view(frontier, crawl_id, config.lease_ms, limit, offset)
            )
            if config.json:
                text = json.dumps(data.as_dict(), indent=None if config.watch else 2)
            else:
                text = render_status_view(data, terminal.width())
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
    async def job(frontier: Frontier) -> int:
        crawls = await crawls_in_scope(frontier, config)
        try:
            if config.crawl_id is None and config.follow:
                return await follow_all_to(frontier, config.output, config.group, terminal.note)
            if config.crawl_id is None:
                if config.base is not None:
                    raise UsageError("--base is the earlier export of one crawl: give --crawl-id")
                return await export_all_to(frontier, crawls, config.output)
            session = frontier.crawl(crawls[0])
            if config.follow:
                return await follow_to(session, config.output, config.group, terminal.note)
            return await export_to(session, config.output, config.base)
        except HistoryTrimmed as exc:
            raise UserError(str(exc)) from None

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


def cmd_dlq(config: Config) -> int:
    """Dead letters of ``--crawl-id`` or of every crawl; redrive the given ones (found in
    whichever crawl holds them) or all."""

    if config.dlq_action == "redrive" and not (config.all_tasks or config.task_ids):
        raise UsageError("dlq redrive needs TASK_ID... or --all")

    async def job(frontier: Frontier) -> Any:
        crawls = await crawls_in_scope(frontier, config)
        if config.dlq_action == "list":
            return await dead_letters_all(frontier, crawls)
        return await redrive_all(frontier, crawls, None if config.all_tasks else config.task_ids)

    with redis_for(config, create=False) as live:
        result = with_frontier(live, job)
    if config.dlq_action == "redrive":
        per_crawl = "".join(f"\n  crawl {c}: {n}" for c, n in result.items())
        terminal.say(f"{sum(result.values())} task(s) redriven{per_crawl}")
        return EXIT_OK
    if config.crawl_id:  # one crawl's rows, as before: no crawl column
        result = [{k: v for k, v in row.items() if k != "crawl_id"} for row in result]
    if live.json:
        print(json.dumps(result, indent=2))
    else:
        print(render_dlq(result, terminal.width()))
    return EXIT_OK


def cmd_reshard(config: Config) -> int:
    async def job(frontier: Frontier) -> tuple[int, int]:
        return await admin.reshard(await resolve_crawl(frontier, config), config.slots)

    with redis_for(config, create=False) as live:
        queued, delayed = with_frontier(live, job)
    terminal.say(
        f"resharded to {live.slots} slots: moved {queued} queued and {delayed} delayed task(s)"
    )
    return EXIT_OK


# -- redis ------------------------------------------------------------------------------------


def cmd_redis(config: Config) -> int:
    """Run (or join) the embedded Redis and keep it running until interrupted, for
    redis-cli (docs/redis-keys.md): its port and password are files of the data dir."""
    if config.redis:
        raise ConfigError("invcrawl redis runs the embedded Redis: give no --redis")
    with redis_for(config, create=True), interrupts.interruptible():
        data_dir = config.data_dir
        print(
            f"invcrawl: the embedded Redis of {data_dir}/ runs on 127.0.0.1, port in "
            f"{data_dir}/port, password in {data_dir}/password (docs/redis-keys.md); "
            "Ctrl-C to release it",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(3600)


def cmd_forget(config: Config) -> int:
    """Delete crawls from Redis (keys and registry entries), after asking (``--yes``:
    without asking); refused while a consumer holds a crawl's pages, unless ``--force``."""

    if not config.forget_ids:
        raise UsageError("forget needs the CRAWL_ID of the crawl to delete")
    if not config.yes and not sys.stdin.isatty():
        raise UsageError("forget deletes crawls for good: confirm with --yes")
    with redis_for(config, create=False) as live:
        return with_frontier(live, lambda frontier: forget_crawls(frontier, config))


# -- dashboard ----------------------------------------------------------------------------------


def cmd_dashboard(config: Config) -> int:
    """Serve the read-only web dashboard of the fleet (dashboard/)."""
    from dashboard.server import run_dashboard  # noqa: PLC0415 - aiohttp

    secret = access_secret(config)  # a bind beyond loopback without a token: refused
    with redis_for(config, create=False) as live, interrupts.interruptible():
        try:
            return run_dashboard(live, secret)
        except OSError as exc:
            raise UserError(
                f"cannot listen on {live.bind}:{live.port}: {exc.strerror or exc}"
            ) from None


# -- versions / diff / history (invcrawl/versions_cmd.py) ------------------------------


def _reader(config: Config) -> Callable[[Callable[[Frontier], Awaitable[Any]]], Any]:
    """Run one read job on the frontier of the configured Redis."""

    def read(job: Callable[[Frontier], Awaitable[Any]]) -> Any:
        with redis_for(config, create=False) as live:
            return with_frontier(live, job)

    return read


def cmd_versions(config: Config) -> int:
    return versions_cmd.versions(config, _reader(config))


def cmd_diff(config: Config) -> int:
    return versions_cmd.diff(config, _reader(config))


def cmd_history(config: Config) -> int:
    return versions_cmd.history(config, _reader(config))
