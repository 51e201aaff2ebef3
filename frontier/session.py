"""The delivery core: one crawl's page tasks in sharded Redis slots, leased, fenced and
committed atomically with their items. Every state change is one Lua script
(``frontier/lua``, run through :mod:`invcrawl.frontier.scripts`); the modules below build
their keys and arguments and decode their replies into typed values.

Contract (docs/delivery.md): a task leaves its queue only in ``claim.lua`` (which records
its lease in the same step) and is removed only by ``commit.lua`` (which writes its
items), ``fail.lua`` / ``reap.lua`` (retry or dead-letter) or ``release.lua``.

:class:`Frontier` is a process's handle on Redis (one client, one set of scripts);
:meth:`Frontier.crawl` hands out the :class:`CrawlSession` of one crawl, made of its
handle (keys, face, meta, layout: frontier/crawl_handle.py), its producing
(frontier/production.py) and its delivery (frontier/delivery.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from invcrawl.frontier import permissions
from invcrawl.frontier.commands import Commands
from invcrawl.frontier.delivery import TaskDelivery
from invcrawl.frontier.hosts import Hosts
from invcrawl.frontier.production import CrawlProduction
from invcrawl.frontier.registry import Registry
from invcrawl.frontier.scripts import ScriptCall, Scripts


class Frontier:
    """A process's one Redis client and its scripts; hands out crawl sessions."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._scripts = Scripts(redis)
        self.registry = Registry(redis, self._scripts)
        self.hosts = Hosts(redis, self._scripts)

    def crawl(self, crawl_id: str) -> CrawlSession:
        return CrawlSession(self._redis, self._scripts, crawl_id)

    # -- the face the other frontier modules use (frontier/commands.py) ------------------

    @property
    def commands(self) -> Commands:
        return cast(Commands, self._redis)

    def pipeline(self, transaction: bool = False) -> Pipeline:
        """Commands sent in one round trip (a MULTI/EXEC block when ``transaction``)."""
        return self._redis.pipeline(transaction=transaction)

    async def run_many(self, calls: Sequence[ScriptCall], *, raw: bool = False) -> list[Any]:
        """Scripts of several crawls in one round trip (frontier/scripts.Scripts.run_many;
        ``raw``: their replies undecoded)."""
        return await self._scripts.run_many(calls, raw=raw)

    async def write_allowed(self) -> str | None:
        """The first write command the client's Redis user may run (``"SET"``...), or
        None: it may write nothing (:mod:`invcrawl.frontier.permissions`)."""
        return await permissions.write_allowed(self._redis)

    async def aclose(self) -> None:
        await self._redis.aclose()


class CrawlSession(CrawlProduction, TaskDelivery):
    """One crawl's queues and item stream: produced into, delivered from."""
