"""Runs a command: :data:`HANDLERS` names the handler of each command of the command table
(``common/settings/commands.py``), one row per command, grouped by what they do:
``crawling`` (inventory, produce, consume, crawl), ``reading`` (status, report, export,
changes), ``versions`` (versions, diff, history), ``administration`` (redis,
dashboard, dlq, reshard, forget) and ``serving`` (mcp); ``search`` and ``show`` are
``invcrawl/symbol_cmds.py``'s. Each handler returns an exit code; user mistakes raise
one of :data:`USER_ERRORS` and are printed as one line by :func:`run`."""

from __future__ import annotations

from collections.abc import Callable

from redis.exceptions import NoPermissionError

from invcrawl import symbol_cmds
from invcrawl.commands import administration, crawling, reading, serving, versions
from invcrawl.common.inventory import InventoryError
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.common.site import SiteError
from invcrawl.errors import EXIT_FAILED, EXIT_USAGE, UsageError, UserError, fail
from invcrawl.frontier.scripts import StaleLayout
from invcrawl.frontier.session import CrawlNotFound
from invcrawl.frontier.versions import CrawlRefError
from invcrawl.localredis.server import RedisServerError

USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ConfigError,
    SiteError,
    InventoryError,
    RedisServerError,
    CrawlNotFound,
    StaleLayout,
    CrawlRefError,
)


Handler = Callable[[Config], int]

# Every command of common/settings/commands.py, and its handler (a unit test keeps the two
# tables in step).
HANDLERS: dict[str, Handler] = {
    "crawl": crawling.cmd_crawl,
    "produce": crawling.cmd_produce,
    "consume": crawling.cmd_consume,
    "inventory": crawling.cmd_inventory,
    "status": reading.cmd_status,
    "report": reading.cmd_report,
    "export": reading.cmd_export,
    "changes": reading.cmd_changes,
    "versions": versions.cmd_versions,
    "diff": versions.cmd_diff,
    "history": versions.cmd_history,
    "search": symbol_cmds.cmd_search,
    "show": symbol_cmds.cmd_show,
    "redis": administration.cmd_redis,
    "dashboard": administration.cmd_dashboard,
    "dlq": administration.cmd_dlq,
    "reshard": administration.cmd_reshard,
    "forget": administration.cmd_forget,
    "mcp": serving.cmd_mcp,
}


def run(command: str, config: Config) -> int:
    handler = HANDLERS[command]
    try:
        return handler(config)
    except CrawlNotFound as exc:
        return fail(f"no crawl {exc} in this Redis (see `invcrawl status`)", EXIT_USAGE)
    except NoPermissionError as exc:  # an ACL user without the rights of this command
        return fail(
            f"Redis refused a command to this user: {exc} (deploy/redis/users.acl.in "
            "lists what each invcrawl user may do)"
        )
    except USER_ERRORS as exc:
        usage = isinstance(exc, (ConfigError, SiteError, UsageError, CrawlRefError))
        return fail(str(exc), EXIT_USAGE if usage else EXIT_FAILED)
