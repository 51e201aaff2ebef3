"""Operator actions on a crawl, beside the delivery core: list and redrive dead-lettered
tasks (and read them back for their ``failed`` items: ``consumer/dead_pages.py``), and
reshard the queues (``invcrawl dlq`` and ``invcrawl reshard``). Each state
change is one Lua script (``redrive.lua``, ``reshard.lua``), run through the crawl's
session, and only the processes that run these actions ever load them."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any, cast

from invcrawl.common.tasks import decode_task
from invcrawl.frontier.scripts import KeyIndex, StaleLayout
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.values import Layout


async def dead_tasks(session: CrawlSession, limit: int | None = None) -> list[dict[str, Any]]:
    """Dead-lettered tasks with their URL, entry count, time of death and reason, oldest
    first (with ``limit``: the latest ``limit`` only)."""
    k = session.keys
    first = -limit if limit else 0
    ids_scores = cast(
        list[tuple[str, float]], await session.commands.zrange(k.dlq, first, -1, withscores=True)
    )
    if not ids_scores:
        return []
    ids = [task_id for task_id, _ in ids_scores]
    whys = await session.commands.hmget(k.dlq_why, ids)
    payloads = await session.commands.hmget(k.task, ids)
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


async def dead_letters(
    session: CrawlSession, skip: Collection[str] = ()
) -> list[tuple[str, str | None, str | None]]:
    """The dead-lettered tasks not in ``skip``: (task id, task payload, the dead letter's
    JSON reason), a payload None for a task redriven and committed meanwhile."""
    k = session.keys
    dead = [str(t) for t in await session.commands.zrange(k.dlq, 0, -1) if t not in skip]
    if not dead:
        return []
    payloads = cast(list[str | None], await session.commands.hmget(k.task, dead))
    whys = cast(list[str | None], await session.commands.hmget(k.dlq_why, dead))
    return list(zip(dead, payloads, whys, strict=True))


async def redrive(session: CrawlSession, task_ids: Sequence[str] | None) -> int:
    """Put dead tasks (all of them when ``task_ids`` is None) back in their queues."""
    k = session.keys
    if task_ids is None:
        task_ids = cast(list[str], await session.commands.zrange(k.dlq, 0, -1))
    if not task_ids:
        return 0
    ids = list(task_ids)

    async def call(layout: Layout) -> int:
        fixed = k.bind("meta", "stats", "tries", "reaped", "errors", "dlq", "dlq_why")
        queues = KeyIndex(len(fixed))
        args: list[Any] = [layout.slots, len(ids)]
        for task_id in ids:
            args += [task_id, queues.add(k.queue(session.slot_of(task_id, layout)))]
        return int(await session.run("redrive", fixed, args, queues.keys))

    await session.registry.activate(session.crawl_id)  # redrive reopens a finished crawl
    redriven = await session.with_layout(call)
    if redriven:
        await session.registry.activate(session.crawl_id)
    return redriven


async def reshard(session: CrawlSession, new_slots: int) -> tuple[int, int]:
    """Move queued and delayed tasks to ``new_slots`` slots; returns the counts moved."""
    if new_slots < 1:
        raise ValueError("slot count must be >= 1")
    k = session.keys
    layout = await session.refresh_layout()
    per_slot = [
        key
        for slot in range(max(layout.slots, new_slots))
        for key in (k.queue(slot), k.delayed(slot))
    ]
    try:
        queued, delayed = await session.run(
            "reshard", k.bind("meta"), [layout.slots, new_slots], per_slot
        )
    except StaleLayout:
        raise StaleLayout("the slot count changed during resharding; run it again") from None
    await session.refresh_layout()
    return int(queued), int(delayed)
