"""One crawl's handle on Redis: its keys, the face the other frontier modules call
(frontier/commands.py: ``commands``, ``pipeline``, ``run``, ``run_many``, ``raw``), its
meta hash and its slot layout, with the one place a stale layout is handled
(:meth:`CrawlHandle.with_layout`). :class:`~invcrawl.frontier.session.CrawlSession` adds
producing (frontier/production.py) and delivery (frontier/delivery.py) to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.client import NEVER_DECODE

from invcrawl.common.sharding import slot_for
from invcrawl.frontier.commands import Commands
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.registry import Registry
from invcrawl.frontier.scripts import ScriptCall, Scripts, StaleLayout
from invcrawl.frontier.states import CrawlState
from invcrawl.frontier.values import CrawlNotFound, Layout

STALE_RETRIES = 5
LAYOUT_FIELDS = ("slots", "max_slots", "buckets", "term_logs")
T = TypeVar("T")


def layout_of(meta: CrawlMeta) -> Layout:
    """A crawl's layout from its meta (frontier/meta.py: the defaults of missing fields)."""
    return Layout(meta.slots, meta.max_slots, meta.buckets, meta.term_logs)


class CrawlHandle:
    """One crawl's keys, Redis face, meta and slot layout."""

    def __init__(self, redis: Redis, scripts: Scripts, crawl_id: str) -> None:
        self._redis = redis
        self._scripts = scripts
        self.crawl_id = crawl_id
        self.keys = CrawlKeys(crawl_id)
        self.registry = Registry(redis, scripts)
        self.layout: Layout | None = None

    # -- the face the other frontier modules use (frontier/commands.py) ------------------

    @property
    def commands(self) -> Commands:
        return cast(Commands, self._redis)

    def pipeline(self, transaction: bool = False) -> Pipeline:
        """Commands sent in one round trip (a MULTI/EXEC block when ``transaction``)."""
        return self._redis.pipeline(transaction=transaction)

    async def run(
        self,
        script: str,
        keys: Mapping[str, str],
        args: Sequence[Any] = (),
        more_keys: Sequence[str] = (),
    ) -> Any:
        """One Lua script of frontier/lua (frontier/scripts.Scripts.run)."""
        return await self._scripts.run(script, keys, args, more_keys)

    async def run_many(self, calls: Sequence[ScriptCall]) -> list[Any]:
        """Several scripts in one round trip (frontier/scripts.Scripts.run_many)."""
        return await self._scripts.run_many(calls)

    async def raw(self, *args: Any) -> Any:
        """One command, its reply undecoded (binary values: the stream's ``data``, the
        stored inventory)."""
        return await self._redis.execute_command(*args, **{NEVER_DECODE: True})  # type: ignore[no-untyped-call]

    # -- layout ------------------------------------------------------------------------

    async def meta(self) -> CrawlMeta:
        """The crawl's meta hash (every field a default when the crawl does not exist)."""
        return CrawlMeta.decode(cast(dict[str, str], await self._redis.hgetall(self.keys.meta)))

    async def state(self) -> CrawlState | None:
        """The crawl's state (None: not created yet)."""
        value = await self._redis.hget(self.keys.meta, "state")
        return CrawlState(str(value)) if value else None

    async def meta_field(self, name: str) -> str | None:
        return cast(str | None, await self._redis.hget(self.keys.meta, name))

    async def exists(self) -> bool:
        return bool(await self._redis.exists(self.keys.meta))

    async def refresh_layout(self) -> Layout:
        values = await self._redis.hmget(self.keys.meta, LAYOUT_FIELDS)
        meta = CrawlMeta.decode(dict(zip(LAYOUT_FIELDS, values, strict=True)))
        if not meta.opened:
            raise CrawlNotFound(self.crawl_id)
        self.layout = layout_of(meta)
        return self.layout

    async def with_layout(self, call: Callable[[Layout], Awaitable[T]]) -> T:
        """Run ``call`` under the current slot layout; when a script answers that the
        layout is stale (a reshard ran meanwhile), refresh it and call again. The one
        place a stale layout is handled."""
        layout = self.layout or await self.refresh_layout()
        for _ in range(STALE_RETRIES):
            try:
                return await call(layout)
            except StaleLayout:
                layout = await self.refresh_layout()
        raise StaleLayout("the slot count kept changing; giving up")

    def slot_of(self, task_id: str, layout: Layout) -> int:
        return slot_for(task_id, layout.slots)

    async def server_ms(self) -> int:
        return await self.registry.server_ms()
