"""Read-side views of a crawl: status (progress, per-slot figures, consumers, rate, ETA)
and the JSON that ``invcrawl status --json`` prints. Reads only; never changes state."""

from __future__ import annotations

import json
from typing import Any

from common.items import STATUSES
from common.sharding import slot_for
from frontier.session import CrawlNotFound, CrawlSession, Frontier
from frontier.states import CrawlState, ProducerState


async def _alive(
    session: CrawlSession, beats: list[tuple[str, float]], now: int, default_lease_ms: int
) -> list[str]:
    """Consumers whose last heartbeat is within three of *their own* leases (a consumer
    beats every lease/3), whatever lease the process asking for the status uses."""
    if not beats:
        return []
    infos = await session.redis.hmget(session.keys.cinfo, [c for c, _ in beats])
    alive = []
    for (consumer, beat), info in zip(beats, infos, strict=True):
        try:
            lease_ms = int(json.loads(info or "").get("lease_ms") or default_lease_ms)
        except (TypeError, ValueError):
            lease_ms = default_lease_ms
        if now - beat <= 3 * lease_ms:
            alive.append(consumer)
    return alive


async def crawl_status(session: CrawlSession, lease_ms: int = 30_000) -> dict[str, Any]:
    """Everything ``status`` shows, as one JSON-ready dict."""
    k = session.keys
    meta = await session.meta()
    slots = int(meta.get("slots") or 0)
    max_slots = int(meta.get("max_slots") or slots)
    now = await session.server_ms()
    pipe = session.redis.pipeline(transaction=False)
    pipe.hgetall(k.stats)
    pipe.zcard(k.dlq)
    pipe.xlen(k.items)
    pipe.zrange(k.consumers, 0, -1, withscores=True)
    pipe.hlen(k.task)
    pipe.zrange(k.dlq, 0, -1)
    for slot in range(max_slots):
        pipe.llen(k.queue(slot))
        pipe.zcard(k.inflight(slot))
        pipe.zcard(k.delayed(slot))
        pipe.get(k.owner(slot))
    replies = await pipe.execute()
    stats, dead, stream_len, beats, open_tasks, dead_ids = replies[:6]
    alive = await _alive(session, beats, now, lease_ms)
    dead_per_slot: dict[int, int] = {}
    for task_id in dead_ids:
        slot = slot_for(task_id, slots or 1)
        dead_per_slot[slot] = dead_per_slot.get(slot, 0) + 1
    per_slot = []
    for slot in range(max_slots):
        queued, inflight, delayed, owner = replies[6 + 4 * slot : 10 + 4 * slot]
        if slot >= slots and not (queued or inflight or delayed):
            continue
        per_slot.append(
            {
                "slot": slot,
                "queued": queued,
                "inflight": inflight,
                "delayed": delayed,
                "dead": dead_per_slot.get(slot, 0),
                "owner": owner,
            }
        )
    stats = {name: int(value) for name, value in stats.items()}
    pages_total = int(meta.get("tasks") or meta.get("pages") or 0)
    pages_done = stats.get("pages_done", 0)
    by_status = {s: stats.get(f"status:{s}", 0) for s in STATUSES}
    started = int(meta.get("started_at") or 0)
    end = int(meta.get("finished_at") or now)
    elapsed = max(0.0, (end - started) / 1000) if started else 0.0
    rate = pages_done / elapsed if elapsed > 0 else 0.0
    remaining = max(0, pages_total - pages_done - dead)
    return {
        "crawl_id": session.crawl_id,
        "state": meta.get("state", "unknown"),
        "producer": meta.get("producer"),
        "site": meta.get("site"),
        "project": meta.get("project"),
        "version": meta.get("version"),
        "entries_total": int(meta.get("entries") or 0),
        "pages_total": pages_total,
        "pages_done": pages_done,
        "pages_dead": dead,
        "pages_open": open_tasks - dead,
        "items": sum(by_status.values()),
        "items_by_status": by_status,
        "stream_entries": stream_len,
        "slots": slots,
        "per_slot": per_slot,
        "consumers_alive": sorted(alive),
        "elapsed_s": round(elapsed, 1),
        "rate_pages_s": round(rate, 2),
        "eta_s": round(remaining / rate, 1) if rate > 0 and remaining else None,
        "counters": stats,
        "created_at": int(meta.get("created_at") or 0),
        "finished_at": int(meta.get("finished_at") or 0) or None,
        "error": meta.get("error") or None,
    }


def settled(status: dict[str, Any]) -> bool:
    """Nothing more will happen to the crawl without an operator: finished, or its
    producer failed."""
    return status["state"] in (CrawlState.FINISHED, CrawlState.FAILED) or (
        status.get("producer") == ProducerState.FAILED
    )


async def status_view(
    frontier: Frontier, crawl_id: str | None, lease_ms: int
) -> tuple[dict[str, Any] | list[dict[str, Any]], bool]:
    """What ``invcrawl status`` shows: one crawl (``crawl_id``, or the only one), or
    every crawl; and whether all of it is settled (``--watch`` stops then)."""
    if crawl_id:
        session = frontier.crawl(crawl_id)
        if not await session.exists():
            raise CrawlNotFound(crawl_id)
        one = await crawl_status(session, lease_ms)
        return one, settled(one)
    rows = [
        await crawl_status(frontier.crawl(c), lease_ms) for c in await frontier.registry.known()
    ]
    done = all(settled(row) for row in rows)
    return (rows[0] if len(rows) == 1 else rows), done
