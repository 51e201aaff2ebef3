"""Scrapy settings shared by the producer and consumer processes, built from Config
(the consumer adds its own: ``consumer/settings.py``).

Scrapy's own retry middleware is off: retries are delayed tasks in Redis (counted,
backed off, dead-lettered), never sleeps on the reactor.
"""

from __future__ import annotations

from typing import Any

from invcrawl.fetch.frames import frames_without_source

# Imported here, at a shallow stack, on purpose: Scrapy builds deprecated aliases in
# these modules with inspect.stack(), whose cost grows with the depth of the stack, deep
# when the downloader loads them lazily under the reactor, and with the modules loaded:
# for each frame it looks for the source, scanning sys.modules for every frozen import
# frame. It only reads the caller's frame, which frames_without_source gives without the
# source (docs/performance.md, "Figures behind the code's choices").
with frames_without_source():
    import scrapy.core.downloader.handlers.http11  # noqa: F401
from scrapy.settings import default_settings

from invcrawl.common.settings.config import Config
from invcrawl.fetch.addresses import ADDRESS_POLICY, AddressPolicy
from invcrawl.fetch.permits import HOST_GATE
from invcrawl.fetch.politeness import HostGate
from invcrawl.frontier.connection import scrapy_redis_settings

MIB = 1024 * 1024

# Components invcrawl never runs. Scrapy imports every key of EXTENSIONS and
# DOWNLOADER_MIDDLEWARES to normalise it, even one set to None, and builds every entry of
# their _BASE to learn it is not configured: each of these cost its import in every
# Scrapy process (the remote control's aiohttp.web ~0.10 CPU-s, the cookies middleware's
# tldextract ~0.04). Left out of the _BASE dicts, they are never imported; a test holds
# the lists of components to Scrapy's defaults less these, plus invcrawl's own.
NEVER_RUN = frozenset({
    # Scrapy 2.19's remote control runs Python code sent to an HTTP port of every
    # process (token in a file of the user's profile): never in a crawler fleet.
    "scrapy.extensions.remote_control.RemoteControl",
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware",  # docs sites need none
    # robots.txt once per host for the fleet, through Redis (fetch/robots.py)
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware",
})  # fmt: skip


def _without_never_run(components: dict[str, int]) -> dict[str, int]:
    return {path: order for path, order in components.items() if path not in NEVER_RUN}


def base_settings(config: Config, host_gate: HostGate | None = None) -> dict[str, Any]:
    """``host_gate``: the process's side of fleet-wide host politeness (with Redis)."""
    settings: dict[str, Any] = {
        "BOT_NAME": "invcrawl",
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "ROBOTSTXT_OBEY": config.robots,
        "RETRY_ENABLED": False,
        "USER_AGENT": config.user_agent,
        "DOWNLOAD_TIMEOUT": config.download_timeout,
        "DOWNLOAD_MAXSIZE": 64 * MIB,
        "DOWNLOAD_WARNSIZE": 16 * MIB,
        "COOKIES_ENABLED": False,
        "DOWNLOADER_MIDDLEWARES_BASE": _without_never_run(
            default_settings.DOWNLOADER_MIDDLEWARES_BASE
        ),
        "EXTENSIONS_BASE": _without_never_run(default_settings.EXTENSIONS_BASE),
        "DOWNLOADER_MIDDLEWARES": {
            "invcrawl.fetch.robots.SharedRobotsTxtMiddleware": 100,
            # a fleet-wide host permit right before each download, released as soon as
            # the response is in (fetch/permits.py)
            "invcrawl.fetch.permits.HostPermitMiddleware": 950,
            # no connection to loopback, private or metadata addresses unless the site
            # is there (fetch/addresses.py): pages, inventories and robots.txt alike
            "invcrawl.fetch.addresses.AddressGuardMiddleware": 50,
        },
        "TWISTED_DNS_RESOLVER": "invcrawl.fetch.addresses.GuardedResolver",
        "INVCRAWL_ALLOW_HOSTS": list(config.allow_hosts),
        # robots.txt: its Crawl-delay capped, its parsing under the extract budget
        "INVCRAWL_MAX_CRAWL_DELAY": config.max_crawl_delay,
        "INVCRAWL_EXTRACT_BUDGET": config.extract_budget,
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,  # (and not among the extensions: NEVER_RUN)
        "LOG_LEVEL": config.scrapy_log_level,  # -v and -q move it (common/settings/config.py)
        # Scrapy logs its dependencies' versions at INFO; finding them (platform.platform()
        # runs `uname -p` and reads the interpreter's binary) costs every process's
        # start-up even when INFO is not shown: only looked up when it is.
        **({} if config.scrapy_log_level in ("DEBUG", "INFO") else {"LOG_VERSIONS": []}),
        "LOGSTATS_INTERVAL": 60.0,
        **scrapy_redis_settings(config.redis),
    }
    ADDRESS_POLICY.put(settings, AddressPolicy(config.allow_hosts))
    if host_gate is not None:
        HOST_GATE.put(settings, host_gate)
    return settings
