"""Runs a command: its handler, ``cmd_<command>`` for each entry of
:data:`common.options.COMMANDS`, is in ``invcrawl/crawl_cmds.py`` (the commands that
crawl), ``invcrawl/reader_cmds.py`` (those that read or administer crawls),
``invcrawl/symbol_cmds.py`` (``search``, ``show``) or ``invcrawl/mcp_cmd.py`` (the MCP
server). Each returns an exit code; user mistakes raise one of :data:`USER_ERRORS` and
are printed as one line by :func:`run`."""

from __future__ import annotations

from collections.abc import Callable

from redis.exceptions import NoPermissionError

from common.config import Config, ConfigError
from common.inventory import InventoryError
from common.options import COMMAND_NAMES
from common.site import SiteError
from frontier.scripts import StaleLayout
from frontier.session import CrawlNotFound
from frontier.versions import CrawlRefError
from invcrawl import crawl_cmds, mcp_cmd, reader_cmds, symbol_cmds
from invcrawl.errors import EXIT_FAILED, EXIT_USAGE, UsageError, UserError, fail
from localredis.server import RedisServerError

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


_HANDLER_MODULES = (crawl_cmds, reader_cmds, symbol_cmds, mcp_cmd)
HANDLERS: dict[str, Callable[[Config], int]] = {
    name: next(
        getattr(module, f"cmd_{name}")
        for module in _HANDLER_MODULES
        if hasattr(module, f"cmd_{name}")
    )
    for name in COMMAND_NAMES
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
