"""Operator actions on a crawl, beside the delivery core: list and redrive dead-lettered
tasks, and reshard the queues (``invcrawl dlq`` and ``invcrawl reshard``). Each state
change is one Lua script (``redrive.lua``, ``reshard.lua``), as in :mod:`common.store`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from common.store import StaleSlots, Store, key_index
from common.tasks import decode_task


class AdminStore(Store):
    # -- dead letters ------------------------------------------------------------------

    async def dead_tasks(self) -> list[dict[str, Any]]:
        ids_scores = await self.redis.zrange(self.keys.dlq, 0, -1, withscores=True)
        if not ids_scores:
            return []
        ids = [task_id for task_id, _ in ids_scores]
        whys = await self.redis.hmget(self.keys.dlq_why, ids)
        payloads = await self.redis.hmget(self.keys.task, ids)
        out = []
        for (task_id, score), why, payload in zip(ids_scores, whys, payloads, strict=True):
            info = json.loads(why) if why else {}
            task = decode_task(payload) if payload else None
            out.append(
                {
                    "id": task_id,
                    "url": task.url if task else None,
                    "entries": len(task.entries) if task else 0,
                    "died_at": int(score),
                    "reason": info.get("reason"),
                    "error": info.get("error"),
                    "tries": info.get("tries"),
                }
            )
        return out

    async def redrive(self, task_ids: Sequence[str] | None) -> int:
        if task_ids is None:
            task_ids = list(await self.redis.zrange(self.keys.dlq, 0, -1))
        if not task_ids:
            return 0

        async def call() -> int:
            layout = await self._layout()
            k = self.keys
            keys = [k.dlq, k.dlq_why, k.tries, k.reaped, k.stats, k.meta, k.errors]
            queues: dict[str, int] = {}
            args: list[Any] = [layout.slots, len(task_ids)]
            for task_id in task_ids:
                args += [task_id, key_index(keys, queues, k.queue(self.slot_of(task_id, layout)))]
            code = int(await self._scripts["redrive"](keys=keys, args=args))
            if code == -2:
                raise StaleSlots
            return code

        return await self._retry_stale(call)

    # -- resharding --------------------------------------------------------------------

    async def reshard(self, new_slots: int) -> tuple[int, int]:
        """Move queued and delayed tasks to ``new_slots`` slots; returns the counts moved."""
        if new_slots < 1:
            raise ValueError("slot count must be >= 1")
        layout = await self.refresh_layout()
        keys = [self.keys.meta]
        for slot in range(max(layout.slots, new_slots)):
            keys += [self.keys.queue(slot), self.keys.delayed(slot)]
        queued, delayed = await self._scripts["reshard"](keys=keys, args=[layout.slots, new_slots])
        if queued == -2:
            raise StaleSlots("the slot count changed during resharding; run it again")
        await self.refresh_layout()
        return int(queued), int(delayed)
