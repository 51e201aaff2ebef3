"""The crawls a command acts on, and the event loop it reads them in: one Redis client
(a frontier on a connection of its own: ``frontier/connection.fresh_frontier``), and
SIGINT/SIGTERM that stop the job gracefully and are recorded for the exit code."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from invcrawl.common.settings.config import Config
from invcrawl.errors import Terminated, UsageError, UserError
from invcrawl.frontier.connection import fresh_frontier
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.values import CrawlNotFound
from invcrawl.frontier.versions import resolve_ref
from invcrawl.process import interrupts

T = TypeVar("T")

RECANCEL_EVERY = 1.0  # seconds between cancellations of a job that outlived one


def with_frontier(config: Config, job: Callable[[Frontier], Awaitable[T]]) -> T:
    """Run ``job`` on a fresh event loop with the process's one Redis client. SIGINT,
    SIGTERM and SIGHUP cancel it: a job that follows a stream returns what it did (the
    cursor to resume from...), any other is interrupted; either way the signal is
    recorded, so that the command exits 130, 143 or 129 (process/interrupts.py)."""
    assert config.redis

    async def main() -> T:
        async with fresh_frontier(config.redis or "", config.redis_cluster) as frontier:
            running = asyncio.ensure_future(job(frontier))
            loop = asyncio.get_running_loop()

            def stop(signum: int) -> None:
                interrupts.record(signum)
                cancel()

            def cancel() -> None:
                # Again each second until the job ends: one cancellation can be lost, and
                # the job would then read on after the signal (docs/performance.md,
                # "Figures behind the code's choices"; tests/integration/test_acl.py dumps
                # the stacks).
                if not running.done():
                    running.cancel()
                    loop.call_later(RECANCEL_EVERY, cancel)

            with interrupts.loop_handlers(loop, stop, interrupts.TERMINAL_SIGNALS):
                return await running

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        signum = interrupts.first()
        if signum is None:
            raise
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt from None


async def resolve_crawl(frontier: Frontier, config: Config) -> CrawlSession:
    """The crawl a command acts on: ``--crawl-id``, or the only crawl in Redis."""
    if len(config.crawl_ids) > 1:
        raise UsageError("this command acts on one crawl: give one --crawl-id")
    if config.crawl_id:
        session = frontier.crawl(await resolve_ref(frontier, config.crawl_id))
        if not await session.exists():
            raise CrawlNotFound(config.crawl_id)
        return session
    crawls = await frontier.registry.known()
    if len(crawls) == 1:
        return frontier.crawl(crawls[0])
    if not crawls:
        raise UserError("no crawl in this Redis yet (run `invcrawl produce SITE` first)")
    raise UsageError(
        f"{len(crawls)} crawls in this Redis ({', '.join(crawls)}): pick one with --crawl-id"
    )


async def crawls_in_scope(frontier: Frontier, config: Config) -> list[str]:
    """The crawls a reading command covers: ``--crawl-id``, else every crawl in Redis
    (export, changes, report and dlq: each line they write names its crawl)."""
    if config.crawl_id:
        return [(await resolve_crawl(frontier, config)).crawl_id]
    crawls = await frontier.registry.known()
    if not crawls:
        raise UserError("no crawl in this Redis yet (run `invcrawl produce SITE` first)")
    return crawls
