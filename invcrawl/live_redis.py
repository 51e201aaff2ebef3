"""The Redis a command runs against: the ``--redis`` URL, or the embedded server of
``--data-dir``, checked before any work starts, with ``PROJECT@VERSION`` crawl ids
resolved."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Iterator

from invcrawl import terminal
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.common.settings.datadir import holds_index
from invcrawl.errors import UserError
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.startup import RedisUnavailable, redis_url, wait_for_redis
from invcrawl.frontier.versions import resolve_ref
from invcrawl.localredis.embedded import embedded_redis
from invcrawl.process import interrupts
from invcrawl.process.secrets import mask_secrets
from invcrawl.scope import with_frontier


@contextlib.contextmanager
def redis_for(config: Config, *, create: bool) -> Iterator[Config]:
    """Yield the config with ``redis`` set: the given URL, or the embedded server of
    ``--data-dir`` (started if needed; ``create=False`` refuses to start an empty one)."""
    if config.redis_cluster and not config.redis:
        raise ConfigError(
            "--redis-cluster needs --redis URL of a cluster node (the embedded Redis is one server)"
        )
    if config.redis:
        live = dataclasses.replace(config, redis=redis_url(config))  # TLS options
        preflight(live.redis or "", config.redis_wait)
        yield resolved(live)
        return
    data_dir = config.data_dir
    if not create and not holds_index(data_dir):
        raise UserError(
            f"no --redis given and no embedded Redis data in {data_dir}/: pass "
            "--redis URL or the --data-dir of your crawls, or run `invcrawl crawl SITE` first"
        )
    with embedded_redis(data_dir, config.fsync) as url:
        preflight(url, 0)
        yield resolved(dataclasses.replace(config, redis=url))


def resolved(config: Config) -> Config:
    """``--crawl-id`` with ``PROJECT@VERSION`` parts turned into crawl ids, for the
    commands that hand the config on (crawl, produce, consume); the others resolve it
    where they pick their crawl (``resolve_crawl``, status, diff), all through
    ``invcrawl.frontier.versions.resolve_ref``."""
    if "@" not in (config.crawl_id or ""):
        return config

    async def job(frontier: Frontier) -> tuple[str, ...]:
        return tuple([await resolve_ref(frontier, ref) for ref in config.crawl_ids])

    return dataclasses.replace(config, crawl_ids=with_frontier(config, job))


def preflight(url: str, wait: float) -> None:
    """Check Redis answers before any work starts, retrying for up to ``wait`` seconds
    (a Redis restarting beside us); fail in one line when it does not or cannot."""

    def say(text: str) -> None:
        terminal.say(f"invcrawl: {text}")

    try:
        # A stop signal raises KeyboardInterrupt where the loop stands (interruptible):
        # left to asyncio.run's own SIGINT handler, one that came as its task ended was
        # lost (the task cancelled, the cancellation swallowed while the client closed),
        # and a consumer then served on until killed.
        with interrupts.interruptible(interrupts.TERMINAL_SIGNALS):
            asyncio.run(wait_for_redis(url, wait, say))
    except ValueError as exc:
        raise UserError(mask_secrets(str(exc))) from None
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None


def serve_until_stopped(
    config: Config, serve: Callable[[Config], int], port: Callable[[Config], int]
) -> int:
    """Run a read-only server (the dashboard, the MCP server over HTTP) on the configured
    Redis until a stop signal; a port it cannot listen on is one line."""
    with redis_for(config, create=False) as live, interrupts.interruptible():
        try:
            return serve(live)
        except OSError as exc:
            raise UserError(
                f"cannot listen on {live.bind}:{port(live)}: {exc.strerror or exc}"
            ) from None
