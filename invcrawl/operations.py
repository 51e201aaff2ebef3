"""The Redis jobs of ``changes`` and ``forget``: what they read and write, and what they
say, once their command has its Redis (``invcrawl/live_redis.py``)."""

from __future__ import annotations

import json
from typing import Any

from common.settings.config import Config
from frontier.changes import read_changes
from frontier.every_crawl import CursorTrimmed, check_not_trimmed, read_all_changes
from frontier.forget import Forgotten, forget, forget_in_use, is_known
from frontier.session import CrawlNotFound, Frontier
from invcrawl import terminal
from invcrawl.errors import EXIT_FAILED, EXIT_OK, UserError, fail
from invcrawl.output.files import appending
from invcrawl.render import duration
from invcrawl.scope import crawls_in_scope


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


async def forget_crawls(frontier: Frontier, config: Config) -> int:
    """Forget every crawl of ``config.forget_ids`` (asked first, unless ``--yes``); the
    exit code (1 when one was in use and not forced)."""
    for crawl_id in config.forget_ids:
        if not await is_known(frontier.crawl(crawl_id)):
            raise CrawlNotFound(crawl_id)
    if not config.yes and not terminal.confirm(
        f"delete crawl {', '.join(config.forget_ids)} from Redis (its queues, items and "
        "counters; output files are kept)? [y/N] "
    ):
        terminal.say("nothing deleted")
        return EXIT_FAILED
    code = EXIT_OK
    for crawl_id in config.forget_ids:
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
