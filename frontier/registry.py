"""Which crawls exist and which are open: the registry keys, outside any crawl's hash tag.

A crawl's own keys all share its hash tag; the registry keys are separate, written with
separate commands (never inside a crawl's script), so that a crawl's scripts touch one
Redis Cluster hash slot only. Finding crawls never needs ``KEYS`` or ``SCAN``.

``active`` holds the crawls consumers should look at (producing or running), scored by
the server time of their last (re)opening. The rule that keeps it complete without a
cross-slot transaction: whoever moves a crawl into an open state lists it *before and
after* the transition (open, produced, redrive), and a consumer unlists it only with
``retire.lua``, which does nothing if the crawl was listed again since the consumer read
its score. A crawl can so be listed while finished (harmless: consumers check and retire
it), never missing while open.

The change journal (``changed``, ``changes_seq``) says which crawls' figures changed since
a sequence number: whoever changes them marks the crawl (:meth:`Registry.mark_changed`,
``changed.lua``: one sequence number per mark, however many crawls it names), and a
watcher (the crawl supervisor, a consumer of pinned crawls waiting for their producer)
reads only the crawls marked since its last look (:meth:`Registry.changed_since`): what
a look costs is what changed, not how many crawls Redis holds. A mark is a hint, never
state: reading a crawl marked for nothing is harmless.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, cast

from redis.asyncio import Redis

from invcrawl.frontier.keys import ACTIVE, CHANGED, CHANGES_SEQ, CRAWLS, FLEET, FLEET_INFO
from invcrawl.frontier.scripts import Scripts

FLEET_KEEP_MS = 24 * 3600 * 1000  # a consumer silent for this long leaves the fleet list


class Registry:
    def __init__(self, redis: Redis, scripts: Scripts) -> None:
        self._redis = redis
        self._scripts = scripts

    async def add(self, crawl_id: str) -> None:
        await self._redis.sadd(CRAWLS, crawl_id)

    async def activate(self, crawl_id: str) -> None:
        """List a crawl as open (before and after any transition into an open state)."""
        await self._redis.sadd(CRAWLS, crawl_id)
        await self._redis.zadd(ACTIVE, {crawl_id: await self.server_ms()})
        await self.mark_changed([crawl_id])

    async def mark_changed(self, crawl_ids: Collection[str]) -> None:
        """Mark crawls changed (their state, pages, items or dead letters), one command
        for all of them (see the module docstring)."""
        if crawl_ids:
            keys = {"changed": CHANGED, "seq": CHANGES_SEQ}
            await self._scripts.run("changed", keys, sorted(crawl_ids))

    async def changes_seq(self) -> int:
        """The sequence number of the latest mark (0: none yet): where a watcher that
        has just read every crawl starts."""
        return int(await self._redis.get(CHANGES_SEQ) or 0)

    async def changed_since(self, seq: int) -> tuple[list[str], int]:
        """The crawls marked after sequence number ``seq``, and the sequence number to
        ask from next time (one command)."""
        rows = cast(
            list[tuple[str, float]],
            await self._redis.zrangebyscore(CHANGED, f"({seq}", "+inf", withscores=True),
        )
        return [crawl_id for crawl_id, _ in rows], max([seq, *(int(n) for _, n in rows)])

    async def unmark(self, crawl_id: str) -> None:
        """Take a forgotten crawl out of the change journal."""
        await self._redis.zrem(CHANGED, crawl_id)

    async def active(self) -> dict[str, float]:
        """Open crawls (some perhaps finished since) -> the score :meth:`retire` needs."""
        rows = await self._redis.zrange(ACTIVE, 0, -1, withscores=True)
        return dict(cast(list[tuple[str, float]], rows))

    async def newest(self) -> tuple[str, float] | None:
        """The crawl (re)opened last and its score: a cheap look for a new round."""
        rows = await self._redis.zrange(ACTIVE, -1, -1, withscores=True)
        return cast(tuple[str, float], tuple(rows[0])) if rows else None

    async def retire(self, crawl_id: str, seen: float) -> bool:
        """Unlist a crawl seen finished, unless it was reopened since it was seen."""
        return bool(await self._scripts.run("retire", {"active": ACTIVE}, [crawl_id, repr(seen)]))

    async def known(self) -> list[str]:
        return sorted(cast(set[str], await self._redis.smembers(CRAWLS)))

    async def server_ms(self) -> int:
        """Redis server time in milliseconds (the clock of every lease and timestamp)."""
        seconds, micros = await self._redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    # -- the fleet: every consumer process, serving a crawl or idle ---------------------

    async def beat_consumer(self, consumer_id: str, info: dict[str, Any]) -> None:
        """A consumer's heartbeat for the fleet list (status, dashboard); also drops the
        consumers silent for a day."""
        now = await self.server_ms()
        pipe = self._redis.pipeline(transaction=False)
        pipe.zadd(FLEET, {consumer_id: now})
        pipe.hset(FLEET_INFO, consumer_id, json.dumps(info))
        pipe.zrangebyscore(FLEET, "-inf", now - FLEET_KEEP_MS)
        *_, gone = await pipe.execute()
        if gone:
            await self._redis.zrem(FLEET, *gone)
            await self._redis.hdel(FLEET_INFO, *gone)

    async def leave_fleet(self, consumer_id: str) -> None:
        """A consumer's clean exit: out of the fleet list at once (a killed one ages out
        by its heartbeat instead)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.zrem(FLEET, consumer_id)
        pipe.hdel(FLEET_INFO, consumer_id)
        await pipe.execute()

    async def fleet(self, since_ms: int) -> list[tuple[str, int, dict[str, Any]]]:
        """(consumer id, last beat, info) of the consumers that beat since ``since_ms``."""
        rows = cast(
            list[tuple[str, float]],
            await self._redis.zrangebyscore(FLEET, since_ms, "+inf", withscores=True),
        )
        if not rows:
            return []
        infos = await self._redis.hmget(FLEET_INFO, [consumer for consumer, _ in rows])
        out = []
        for (consumer, beat), raw in zip(rows, infos, strict=True):
            try:
                info = json.loads(raw or "{}")
            except ValueError:
                info = {}
            out.append((consumer, int(beat), info if isinstance(info, dict) else {}))
        return out
