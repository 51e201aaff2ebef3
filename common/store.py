"""The delivery core: page tasks in sharded Redis slots, leased, fenced and committed
atomically with their items. Every state change is one Lua script (``common/lua``);
this module only builds their KEYS/ARGV and decodes replies.

Contract (docs/delivery.md): a task leaves its queue only in ``claim.lua`` (which records
its lease in the same step) and is removed only by ``commit.lua`` (which writes its
items), ``fail.lua`` / ``reap.lua`` (retry or dead-letter) or ``release.lua``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from common.items import PreparedItem
from common.keys import CRAWLS, CrawlKeys
from common.sharding import slot_for
from common.tasks import Task, decode_task, encode_task

LUA_DIR = Path(__file__).with_name("lua")
ENQUEUE_BATCH = 500


class StaleSlots(RuntimeError):
    """The crawl was resharded under us; refresh the layout and try again."""


class CrawlNotFound(LookupError):
    pass


@cache
def lua_source(name: str) -> str:
    return (LUA_DIR / f"{name}.lua").read_text(encoding="utf-8")


@dataclass(slots=True)
class Claim:
    """A leased task as the consumer holds it."""

    task: Task
    token: str
    deliveries: int
    slot: int
    suspect: bool
    claimed_at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class CommitResult:
    committed: bool
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    expired: bool = False


@dataclass(frozen=True, slots=True)
class Layout:
    slots: int
    max_slots: int
    buckets: int


class Store:
    """One crawl's queues and item stream, on one shared redis.asyncio client."""

    def __init__(self, redis: Redis, crawl_id: str) -> None:
        self.redis = redis
        self.crawl_id = crawl_id
        self.keys = CrawlKeys(crawl_id)
        self._scripts = {
            name: redis.register_script(lua_source(name))
            for name in (
                "claim",
                "commit",
                "fail",
                "release",
                "renew",
                "reap",
                "enqueue",
                "complete",
                "redrive",
                "reshard",
                "assign",
            )
        }
        self.layout: Layout | None = None

    # -- layout --------------------------------------------------------------------

    async def meta(self) -> dict[str, str]:
        return await self.redis.hgetall(self.keys.meta)  # type: ignore[no-any-return]

    async def exists(self) -> bool:
        return bool(await self.redis.exists(self.keys.meta))

    async def refresh_layout(self) -> Layout:
        slots, max_slots, buckets = await self.redis.hmget(
            self.keys.meta, ["slots", "max_slots", "buckets"]
        )
        if slots is None:
            raise CrawlNotFound(self.crawl_id)
        self.layout = Layout(int(slots), int(max_slots or slots), int(buckets or 1))
        return self.layout

    async def _layout(self) -> Layout:
        return self.layout or await self.refresh_layout()

    def slot_of(self, task_id: str, layout: Layout) -> int:
        return slot_for(task_id, layout.slots)

    # -- producer --------------------------------------------------------------------

    async def open_crawl(self, fields: dict[str, Any], slots: int, buckets: int) -> Layout:
        """Create the crawl's metadata, or reopen it keeping its slot count and buckets."""
        now = await self.server_ms()
        pipe = self.redis.pipeline(transaction=True)
        pipe.hsetnx(self.keys.meta, "slots", slots)
        pipe.hsetnx(self.keys.meta, "max_slots", slots)
        pipe.hsetnx(self.keys.meta, "buckets", buckets)
        pipe.hsetnx(self.keys.meta, "created_at", now)
        pipe.hsetnx(self.keys.meta, "state", "producing")
        pipe.hset(self.keys.meta, mapping={k: _plain(v) for k, v in fields.items()})
        pipe.hset(self.keys.meta, "producer", "running")
        pipe.sadd(CRAWLS, self.crawl_id)
        await pipe.execute()
        return await self.refresh_layout()

    async def enqueue(self, tasks: Sequence[Task]) -> int:
        """Enqueue tasks idempotently in batches; returns how many were new."""
        added = 0
        for start in range(0, len(tasks), ENQUEUE_BATCH):
            batch = tasks[start : start + ENQUEUE_BATCH]
            added += await self._retry_stale(lambda b=batch: self._enqueue_batch(b))
        return added

    async def _enqueue_batch(self, batch: Sequence[Task]) -> int:
        layout = await self._layout()
        queues: dict[str, int] = {}
        keys = [self.keys.seen, self.keys.task, self.keys.stats, self.keys.meta]
        args: list[Any] = [layout.slots, len(batch)]
        for task in batch:
            index = key_index(keys, queues, self.keys.queue(self.slot_of(task.id, layout)))
            args += [task.id, encode_task(task), index]
        result = int(await self._scripts["enqueue"](keys=keys, args=args))
        if result == -2:
            raise StaleSlots
        return result

    async def finish_producing(self, fields: dict[str, Any], added: int) -> None:
        now = await self.server_ms()
        mapping = {k: _plain(v) for k, v in fields.items()}
        mapping.update(producer="done", produced_at=str(now))
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(self.keys.meta, mapping=mapping)
        if added:
            pipe.hset(self.keys.meta, "state", "running")
            pipe.hdel(self.keys.meta, "finished_at")
        await pipe.execute()
        state = await self.redis.hget(self.keys.meta, "state")
        if state == "producing":
            await self.redis.hset(self.keys.meta, "state", "running")

    async def fail_producing(self, error: str) -> None:
        await self.redis.hset(self.keys.meta, mapping={"producer": "failed", "error": error})

    # -- consumer --------------------------------------------------------------------

    async def claim(
        self, consumer: str, slots: Sequence[int], max_tasks: int, busy: bool, lease_ms: int
    ) -> list[Claim]:
        if not slots or max_tasks < 1:
            return []
        k = self.keys
        keys = [k.lease, k.tries, k.reaped, k.task, k.stats, k.meta]
        for slot in slots:
            keys += [k.queue(slot), k.delayed(slot), k.inflight(slot)]
        args = [consumer, lease_ms, max_tasks, "1" if busy else "0", *slots]
        reply = await self._scripts["claim"](keys=keys, args=args)
        claims = []
        for i in range(1, len(reply), 6):
            task_id, token, tries, payload, slot, suspect = reply[i : i + 6]
            claims.append(
                Claim(
                    task=decode_task(payload),
                    token=token,
                    deliveries=int(tries),
                    slot=int(slot),
                    suspect=suspect == 1,
                )
            )
            assert claims[-1].task.id == task_id
        return claims

    async def commit(
        self, claim: Claim, items: Sequence[PreparedItem], outcome: str
    ) -> CommitResult:
        k = self.keys
        keys = [
            k.lease,
            k.tries,
            k.reaped,
            k.task,
            k.stats,
            k.items,
            k.meta,
            k.errors,
            k.inflight(claim.slot),
        ]
        buckets: dict[str, int] = {}
        args: list[Any] = [claim.task.id, claim.token, outcome, len(items)]
        for item in items:
            index = key_index(keys, buckets, k.isum(item.bucket))
            args += [index, item.field, item.value, item.key, item.status, item.data]
        code, new, updated, unchanged = await self._scripts["commit"](keys=keys, args=args)
        return CommitResult(
            committed=code == 1, new=new, updated=updated, unchanged=unchanged, expired=code == -1
        )

    async def fail(
        self,
        claim: Claim,
        error: dict[str, Any],
        delay_ms: int,
        max_tries: int,
        dead_now: bool = False,
    ) -> str:
        """Retry later or dead-letter. Returns "retry", "dead" or "fenced"."""

        async def call() -> str:
            layout = await self._layout()
            k = self.keys
            keys = [
                k.lease,
                k.tries,
                k.reaped,
                k.stats,
                k.errors,
                k.dlq,
                k.dlq_why,
                k.meta,
                k.inflight(claim.slot),
                k.delayed(self.slot_of(claim.task.id, layout)),
            ]
            args = [
                claim.task.id,
                claim.token,
                int(delay_ms),
                max_tries,
                json.dumps(error, ensure_ascii=False),
                "1" if dead_now else "0",
                layout.slots,
            ]
            code, outcome, _ = await self._scripts["fail"](keys=keys, args=args)
            if code == -2:
                raise StaleSlots
            return str(outcome)

        return await self._retry_stale(call)

    async def release(self, claim: Claim) -> bool:
        async def call() -> bool:
            layout = await self._layout()
            k = self.keys
            keys = [
                k.lease,
                k.tries,
                k.stats,
                k.meta,
                k.inflight(claim.slot),
                k.queue(self.slot_of(claim.task.id, layout)),
            ]
            code = await self._scripts["release"](
                keys=keys, args=[claim.task.id, claim.token, layout.slots]
            )
            if code == -2:
                raise StaleSlots
            return bool(code == 1)

        return await self._retry_stale(call)

    async def renew(
        self, consumer: str, claims: Iterable[Claim], lease_ms: int, info: dict[str, Any]
    ) -> set[str]:
        """Heartbeat: extend leases; returns the ids of tasks this consumer has lost."""
        k = self.keys
        keys = [k.lease, k.consumers, k.cinfo]
        sets: dict[str, int] = {}
        triples: list[Any] = []
        for claim in claims:
            index = key_index(keys, sets, k.inflight(claim.slot))
            triples += [claim.task.id, claim.token, index]
        args = [consumer, lease_ms, json.dumps(info), len(triples) // 3, *triples]
        reply = await self._scripts["renew"](keys=keys, args=args)
        return set(reply[1:])

    async def reap(self, slot: int, max_tries: int) -> tuple[int, int]:
        """Return expired leases of ``slot`` to their queues (or the DLQ)."""
        now = await self.server_ms()
        expired = await self.redis.zrangebyscore(
            self.keys.inflight(slot), "-inf", f"({now}", start=0, num=500
        )
        if not expired:
            return 0, 0

        async def call() -> tuple[int, int]:
            layout = await self._layout()
            k = self.keys
            keys = [
                k.lease,
                k.tries,
                k.reaped,
                k.stats,
                k.dlq,
                k.dlq_why,
                k.errors,
                k.meta,
                k.inflight(slot),
            ]
            queues: dict[str, int] = {}
            args: list[Any] = [max_tries, layout.slots, len(expired)]
            for task_id in expired:
                args += [task_id, key_index(keys, queues, k.queue(self.slot_of(task_id, layout)))]
            requeued, dead = await self._scripts["reap"](keys=keys, args=args)
            if requeued == -2:
                raise StaleSlots
            return int(requeued), int(dead)

        return await self._retry_stale(call)

    async def is_complete(self) -> bool:
        async def call() -> bool:
            layout = await self.refresh_layout()
            keys = [self.keys.meta]
            for slot in range(layout.max_slots):
                keys += [self.keys.queue(slot), self.keys.delayed(slot), self.keys.inflight(slot)]
            code = await self._scripts["complete"](keys=keys, args=[layout.max_slots])
            if code == -2:
                raise StaleSlots
            return bool(code == 1)

        return await self._retry_stale(call)

    async def assign_slots(
        self,
        consumer: str,
        slot_count: int,
        owner_ms: int,
        cutoff_ms: int,
        pinned: Sequence[int] | None,
    ) -> tuple[int, list[int]]:
        """Heartbeat-time slot ownership (assign.lua): returns (live consumers, owned)."""
        keys = [self.keys.consumers, self.keys.ring]
        keys += [self.keys.owner(s) for s in range(slot_count)]
        args = [
            consumer,
            owner_ms,
            cutoff_ms,
            "pinned" if pinned is not None else "auto",
            ",".join(str(s) for s in pinned or []),
        ]
        reply = await self._scripts["assign"](keys=keys, args=args)
        return int(reply[0]), [int(s) for s in reply[1:]]

    async def drop_slots(self, consumer: str, slot_count: int) -> None:
        """Give up every slot this consumer owns (clean exit): assign.lua pinned to no
        slot drops exactly our own owner keys, atomically; then leave the member set."""
        await self.assign_slots(consumer, slot_count, 1, 1, pinned=[])
        await self.redis.zrem(self.keys.consumers, consumer)

    # -- helpers -----------------------------------------------------------------------

    async def server_ms(self) -> int:
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    async def _retry_stale(self, call: Any) -> Any:
        for _ in range(5):
            try:
                return await call()
            except StaleSlots:
                await self.refresh_layout()
        raise StaleSlots("slot count kept changing; giving up")


def key_index(keys: list[str], seen: dict[str, int], key: str) -> int:
    """Append ``key`` to KEYS once and return its 1-based Lua index."""
    index = seen.get(key)
    if index is None:
        keys.append(key)
        index = seen[key] = len(keys)
    return index


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
