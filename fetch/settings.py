"""Scrapy settings shared by the producer and consumer processes, built from Config
(the consumer adds its own: ``consumer/settings.py``).

Scrapy's own retry middleware is off: retries are delayed tasks in Redis (counted,
backed off, dead-lettered), never sleeps on the reactor.
"""

from __future__ import annotations

from typing import Any

# Imported here, at a shallow stack, on purpose: Scrapy builds deprecated aliases in
# these modules with inspect.stack(), whose cost grows with the depth of the stack, deep
# when the downloader loads them lazily under the reactor (docs/performance.md, "Figures
# behind the code's choices").
import scrapy.core.downloader.handlers.http11  # noqa: F401

from common.settings.config import Config
from fetch.addresses import ADDRESS_POLICY, AddressPolicy
from fetch.permits import HOST_GATE
from fetch.politeness import HostGate
from frontier.connection import scrapy_redis_settings

MIB = 1024 * 1024


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
        # Never built: docs sites need no cookies (Scrapy 2.19 still imports its module
        # and tldextract elsewhere, so this saves no start-up time; docs/performance.md).
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.cookies.CookiesMiddleware": None,
            # robots.txt once per host for the fleet, through Redis (fetch/robots.py)
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "fetch.robots.SharedRobotsTxtMiddleware": 100,
            # a fleet-wide host permit right before each download, released as soon as
            # the response is in (fetch/permits.py)
            "fetch.permits.HostPermitMiddleware": 950,
            # no connection to loopback, private or metadata addresses unless the site
            # is there (fetch/addresses.py): pages, inventories and robots.txt alike
            "fetch.addresses.AddressGuardMiddleware": 50,
        },
        "TWISTED_DNS_RESOLVER": "fetch.addresses.GuardedResolver",
        "INVCRAWL_ALLOW_HOSTS": list(config.allow_hosts),
        # robots.txt: its Crawl-delay capped, its parsing under the extract budget
        "INVCRAWL_MAX_CRAWL_DELAY": config.max_crawl_delay,
        "INVCRAWL_EXTRACT_BUDGET": config.extract_budget,
        "TELNETCONSOLE_ENABLED": False,
        # Scrapy 2.19's remote control runs Python code sent to an HTTP port of every
        # process (token in a file of the user's profile): never in a crawler fleet. It
        # also cost start-up (aiohttp) and shut-down (its server's stop).
        "REMOTE_CONTROL_ENABLED": False,
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
