"""Runs a command: :data:`HANDLERS` names the handler of each command of the command table
(``common/settings/commands.py``), one row per command, grouped by what they do:
``crawling`` (inventory, produce, consume, crawl), ``reading`` (status, report, export,
changes), ``versions`` (versions, diff, history), ``administration`` (redis,
dashboard, dlq, reshard, forget) and ``serving`` (mcp); ``search`` and ``show`` are
``invcrawl/symbol_cmds.py``'s, each module imported only when its command runs. Each
handler returns an exit code; user mistakes raise one of :func:`user_errors` and are
printed as one line by :func:`run`."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from invcrawl.common.settings.config import Config, ConfigError

Handler = Callable[[Config], int]

# Every command of common/settings/commands.py, and its handler as "module:function",
# imported when its command runs: `invcrawl search` then loads neither the crawling
# modules nor the dashboard's (a unit test keeps the two tables in step and resolves
# every row).
HANDLERS: dict[str, str] = {
    "crawl": "invcrawl.commands.crawling:cmd_crawl",
    "produce": "invcrawl.commands.crawling:cmd_produce",
    "consume": "invcrawl.commands.crawling:cmd_consume",
    "inventory": "invcrawl.commands.crawling:cmd_inventory",
    "status": "invcrawl.commands.reading:cmd_status",
    "report": "invcrawl.commands.reading:cmd_report",
    "export": "invcrawl.commands.reading:cmd_export",
    "changes": "invcrawl.commands.reading:cmd_changes",
    "versions": "invcrawl.commands.versions:cmd_versions",
    "diff": "invcrawl.commands.versions:cmd_diff",
    "history": "invcrawl.commands.versions:cmd_history",
    "search": "invcrawl.symbol_cmds:cmd_search",
    "show": "invcrawl.symbol_cmds:cmd_show",
    "redis": "invcrawl.commands.administration:cmd_redis",
    "dashboard": "invcrawl.commands.administration:cmd_dashboard",
    "dlq": "invcrawl.commands.administration:cmd_dlq",
    "reshard": "invcrawl.commands.administration:cmd_reshard",
    "forget": "invcrawl.commands.administration:cmd_forget",
    "mcp": "invcrawl.commands.serving:cmd_mcp",
}


def handler_of(command: str) -> Handler:
    """The handler of ``command``, its module imported now."""
    module, _, name = HANDLERS[command].partition(":")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that are a user's mistake: one line, no traceback. Imported when
    asked for (they come from the modules a command runs anyway)."""
    from invcrawl.common.inventory import InventoryError  # noqa: PLC0415
    from invcrawl.common.settings.config import ConfigError  # noqa: PLC0415
    from invcrawl.common.site import SiteError  # noqa: PLC0415
    from invcrawl.errors import UserError  # noqa: PLC0415
    from invcrawl.frontier.scripts import StaleLayout  # noqa: PLC0415
    from invcrawl.frontier.values import CrawlNotFound  # noqa: PLC0415
    from invcrawl.frontier.versions import CrawlRefError  # noqa: PLC0415
    from invcrawl.localredis.server import RedisServerError  # noqa: PLC0415

    return (
        UserError,
        ConfigError,
        SiteError,
        InventoryError,
        RedisServerError,
        CrawlNotFound,
        StaleLayout,
        CrawlRefError,
    )


def run(command: str, config: Config) -> int:
    handler = handler_of(command)
    try:
        return handler(config)
    except Exception as exc:
        code = user_error(exc)
        if code is None:
            raise
        return code


def user_error(exc: Exception) -> int | None:
    """Print a user's mistake as one line and return its exit code; None for a bug."""
    from redis.exceptions import NoPermissionError  # noqa: PLC0415

    from invcrawl.common.site import SiteError  # noqa: PLC0415
    from invcrawl.errors import EXIT_FAILED, EXIT_USAGE, UsageError, fail  # noqa: PLC0415
    from invcrawl.frontier.values import CrawlNotFound  # noqa: PLC0415
    from invcrawl.frontier.versions import CrawlRefError  # noqa: PLC0415

    if isinstance(exc, CrawlNotFound):
        return fail(f"no crawl {exc} in this Redis (see `invcrawl status`)", EXIT_USAGE)
    if isinstance(exc, NoPermissionError):  # an ACL user without the rights of this command
        return fail(
            f"Redis refused a command to this user: {exc} (deploy/redis/users.acl.in "
            "lists what each invcrawl user may do)"
        )
    if isinstance(exc, user_errors()):
        usage = isinstance(exc, (ConfigError, SiteError, UsageError, CrawlRefError))
        return fail(str(exc), EXIT_USAGE if usage else EXIT_FAILED)
    return None
