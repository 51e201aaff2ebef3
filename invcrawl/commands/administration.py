"""The handlers of the commands that administer the fleet rather than read its items:
``redis`` (keep the embedded Redis up for redis-cli), ``dashboard`` (serve the fleet's
web view), ``dlq`` (list and redrive dead letters), ``reshard`` (a crawl's slot count)
and ``forget`` (delete crawls). The dashboard's aiohttp (~0.16 s) is imported by its
handler only."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from invcrawl import terminal
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.dashboard.access import access_secret
from invcrawl.errors import EXIT_FAILED, EXIT_OK, UsageError, fail
from invcrawl.frontier import admin
from invcrawl.frontier.every_crawl import dead_letters_all, redrive_all
from invcrawl.frontier.forget import Forgotten, forget, forget_in_use, is_known
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.values import CrawlNotFound
from invcrawl.frontier.versions import crawl_versions
from invcrawl.live_redis import redis_for, serve_until_stopped
from invcrawl.process import interrupts
from invcrawl.render import duration
from invcrawl.render_status import render_dlq
from invcrawl.scope import crawls_in_scope, resolve_crawl, with_frontier

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


# -- dashboard ----------------------------------------------------------------------------------


def cmd_dashboard(config: Config) -> int:
    """Serve the read-only web dashboard of the fleet (dashboard/)."""
    from invcrawl.dashboard.server import run_dashboard  # noqa: PLC0415 - aiohttp

    secret = access_secret(config)  # a bind beyond loopback without a token: refused
    return serve_until_stopped(
        config, lambda live: run_dashboard(live, secret), lambda live: live.port
    )


# -- dead letters, slots ------------------------------------------------------------------


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


# -- forget ---------------------------------------------------------------------------------


def cmd_forget(config: Config) -> int:
    """Delete crawls from Redis (keys and registry entries), after asking (``--yes``:
    without asking); refused while a consumer holds a crawl's pages, unless ``--force``."""

    if not config.forget_ids and not config.forget_failed:
        raise UsageError("forget needs the CRAWL_ID of the crawl to delete (or --failed)")
    if not config.yes and not sys.stdin.isatty():
        raise UsageError("forget deletes crawls for good: confirm with --yes")
    with redis_for(config, create=False) as live:
        return with_frontier(live, lambda frontier: forget_crawls(frontier, config))


async def forget_crawls(frontier: Frontier, config: Config) -> int:
    """Forget every crawl of ``config.forget_ids``, and with ``--failed`` every failed
    crawl (asked first, unless ``--yes``); the exit code (1 when one was in use and not
    forced)."""
    for crawl_id in config.forget_ids:
        if not await is_known(frontier.crawl(crawl_id)):
            raise CrawlNotFound(crawl_id)
    crawl_ids = list(dict.fromkeys(config.forget_ids))
    if config.forget_failed:
        failed = sorted(c.crawl_id for c in await crawl_versions(frontier) if c.failed)
        crawl_ids += [c for c in failed if c not in crawl_ids]
        if not crawl_ids:
            terminal.say("no failed crawl to forget")
            return EXIT_OK
    if not config.yes and not terminal.confirm(
        f"delete crawl {', '.join(crawl_ids)} from Redis (its queues, items and "
        "counters; output files are kept)? [y/N] "
    ):
        terminal.say("nothing deleted")
        return EXIT_FAILED
    code = EXIT_OK
    for crawl_id in crawl_ids:
        session = frontier.crawl(crawl_id)
        if config.force:
            done = await forget_in_use(session, config.lease_ms, _waiting)
        else:
            done = await forget(session, False, config.lease_ms)
        if done.deleted:
            terminal.say(f"crawl {crawl_id} forgotten ({done.keys} keys deleted)")
            continue
        code = fail(
            f"crawl {crawl_id} is in use ({done.held} page(s) held, {done.serving} "
            "consumer(s) serving it): stop them or let it finish, or pass --force"
        )
    return code


def _waiting(done: Forgotten, seconds: float) -> None:
    terminal.say(
        f"crawl {done.crawl_id} was in use ({done.held} page(s) held, {done.serving} "
        f"consumer(s) serving it): deleted; deleting what they write until they let go, "
        f"in {duration(seconds)}"
    )
