"""Read-side views: what ``invcrawl status`` shows (and ``--json`` prints), the crawl
supervisor's progress, and the dashboard. Reads only; never changes state.

* :func:`crawl_summary`: one crawl's figures from a few keys (meta, stats, dead letters):
  cheap enough to compute for every crawl of a fleet every second.
* :func:`crawl_status`: the summary plus the per-slot queues, consumers and counters of
  one crawl.
* :func:`fleet_status`: every crawl's summary, every busy host, the consumers and the
  latest dead letters of the fleet (``status --json`` and the dashboard's data).

Each returns its typed model (``frontier/summary.py``: :class:`CrawlSummary`,
:class:`CrawlStatus`, :class:`FleetStatus`), whose ``as_dict()`` is the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from invcrawl.common.items import ItemLayout
from invcrawl.common.sharding import slot_for
from invcrawl.frontier.admin import dead_tasks
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.retention import history
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.summary import CrawlStatus, CrawlSummary, FleetStatus
from invcrawl.frontier.values import CrawlNotFound

HOST_RECENT_MS = 60_000  # a host is shown while busy, blocked or used within this
CONSUMER_RECENT_MS = 600_000  # the fleet view lists consumers that beat within this
DEAD_LETTERS_SHOWN = 100  # the fleet view's latest dead letters
FLEET_PAGE = 50  # crawls of a page of the fleet view (`status`: --page N, --all)
HOSTS_SHOWN = 100  # hosts of a page of the fleet view (the latest listed)


async def _consumers(
    session: CrawlSession, beats: list[tuple[str, float]], now: int, default_lease_ms: int
) -> list[dict[str, Any]]:
    """Every consumer that beat on this crawl: its host, pid, slots, pages held, last
    heartbeat, and whether it is alive: last heartbeat within three of *its own* leases (a
    consumer beats every lease/3), whatever lease the process asking for the status uses."""
    if not beats:
        return []
    infos = await session.commands.hmget(session.keys.cinfo, [c for c, _ in beats])
    out = []
    for (consumer, beat), raw in zip(beats, infos, strict=True):
        try:
            info = json.loads(raw or "")
        except (TypeError, ValueError):
            info = {}
        info = info if isinstance(info, dict) else {}
        lease_ms = int(info.get("lease_ms") or default_lease_ms)
        out.append(
            {
                "id": consumer,
                "host": info.get("host"),
                "pid": info.get("pid"),
                "slots": info.get("slots") or [],
                "held": info.get("held"),
                "last_beat": int(beat),
                "alive": now - beat <= 3 * lease_ms,
            }
        )
    return out


async def crawl_summary(session: CrawlSession, now: int | None = None) -> CrawlSummary:
    """One crawl's state, progress, items by status, rate and ETA."""
    if now is None:
        now = await session.server_ms()
    return (await _summaries(session, [(session.crawl_id, session.keys)], now))[0]


async def crawl_summaries(
    frontier: Frontier, crawl_ids: Sequence[str], now: int | None = None
) -> list[CrawlSummary]:
    """:func:`crawl_summary` of each crawl, in order, read in one round trip (the crawl
    supervisor and ``status`` of the fleet show hundreds of crawls every tick)."""
    if now is None:
        now = await frontier.registry.server_ms()
    return await _summaries(frontier, [(c, frontier.crawl(c).keys) for c in crawl_ids], now)


async def _summaries(
    via: Frontier | CrawlSession, crawls: Sequence[tuple[str, CrawlKeys]], now: int
) -> list[CrawlSummary]:
    pipe = via.pipeline(transaction=False)
    for _, k in crawls:
        pipe.hgetall(k.meta)
        pipe.hgetall(k.stats)
        pipe.zcard(k.dlq)
    replies = await pipe.execute() if crawls else []
    return [
        CrawlSummary.from_redis(crawl_id, meta, stats, int(dead), now)
        for (crawl_id, _), meta, stats, dead in zip(
            crawls, replies[0::3], replies[1::3], replies[2::3], strict=True
        )
    ]


async def crawl_status(session: CrawlSession, lease_ms: int = 30_000) -> CrawlStatus:
    """Everything ``status --crawl-id`` shows."""
    k = session.keys
    now = await session.server_ms()
    summary = await crawl_summary(session, now)
    meta = await session.meta()
    slots, max_slots = meta.slots, meta.max_slots
    pipe = session.pipeline(transaction=False)
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
    stream_len, beats, open_tasks, dead_ids = replies[:4]
    consumers = await _consumers(session, beats, now, lease_ms)
    dead_per_slot: dict[int, int] = {}
    for task_id in dead_ids:
        slot = slot_for(task_id, slots or 1)
        dead_per_slot[slot] = dead_per_slot.get(slot, 0) + 1
    per_slot = []
    for slot in range(max_slots):
        queued, inflight, delayed, owner = replies[4 + 4 * slot : 8 + 4 * slot]
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
    return CrawlStatus(
        summary=summary,
        redis_memory=await crawl_memory(session, layout_of(meta)),
        pages_open=open_tasks - summary.pages_dead,
        stream_entries=stream_len,
        items_trimmed=(await history(session)).trimmed,
        slots=slots,
        per_slot=per_slot,
        consumers_alive=sorted(c["id"] for c in consumers if c["alive"]),
        consumers=consumers,
    )


def layout_of(meta: CrawlMeta) -> ItemLayout:
    """A crawl's dedup buckets and term logs from its meta (0 buckets: not opened, no
    keys to measure)."""
    return ItemLayout(meta.buckets if meta.opened else 0, meta.term_logs)


SAMPLED_KEYS = 8  # of each family of many keys: their mean, times their count


async def crawl_memory(session: CrawlSession, layout: ItemLayout) -> dict[str, int]:
    """Redis memory of one crawl's big keys, bytes (MEMORY USAGE, sampled: cheap enough
    for every status refresh): the item stream, the dedup buckets, the search index
    (records, term logs and the vector log; of each family a few keys measured, times
    their count), task payloads, and what refresh keeps (validators, inventory)."""
    k = session.keys
    logs = layout.term_logs if layout.buckets else 0
    families: list[tuple[str, int, Callable[[int], str]]] = [
        ("dedup", layout.buckets, k.isum),
        ("search_index", layout.buckets, k.search_record),
        ("search_index", logs, k.search_log),
    ]
    pipe = session.pipeline(transaction=False)
    for key in (k.items, k.task, k.pages, k.inventory, k.svec, k.slnk):
        pipe.memory_usage(key, samples=5)
    for _, count, key_of in families:
        for n in range(min(count, SAMPLED_KEYS)):
            pipe.memory_usage(key_of(n), samples=5)
    replies = iter([int(r or 0) for r in await pipe.execute()])
    stream, tasks, pages, inventory, vectors, links = (next(replies) for _ in range(6))
    memory = {"items_stream": stream, "dedup": 0, "search_index": vectors + links}
    memory["tasks"] = tasks
    memory["refresh"] = pages + inventory
    for name, count, _ in families:
        sampled = [next(replies) for _ in range(min(count, SAMPLED_KEYS))]
        if sampled:
            memory[name] += sum(sampled) * count // len(sampled)
    memory["total"] = sum(memory.values())
    return memory


async def fleet_status(
    frontier: Frontier,
    lease_ms: int = 30_000,
    dead_letters: int = DEAD_LETTERS_SHOWN,
    limit: int | None = None,
    offset: int = 0,
) -> FleetStatus:
    """Every crawl (open ones first, then by id) with its live consumer count, every host
    that is busy, blocked or was used in the last minute, every consumer seen lately (its
    crawls, slots, held tasks, last heartbeat), and the latest ``dead_letters`` dead
    letters of the fleet with their reasons.

    ``limit``: a page of the crawls only, ``offset`` crawls in (open ones first, as the
    registry lists them, then by id): what is read and held is the page's, whatever the
    number of crawls (10,000 crawls cost their ids, not their summaries), and the hosts
    are the :data:`HOSTS_SHOWN` listed last within a minute. ``crawls_total`` and
    ``crawls_open`` count every crawl."""
    now = await frontier.registry.server_ms()
    ids = await frontier.registry.known()
    listed_open = set(await frontier.registry.active()) & set(ids)
    ids.sort(key=lambda c: (c not in listed_open, c))
    shown = ids if limit is None else ids[offset : offset + limit]
    crawls = await crawl_summaries(frontier, shown, now)
    consumers = await fleet_consumers(frontier, shown, now, lease_ms)
    alive = {
        crawl.crawl_id: sum(1 for c in consumers if c["alive"] and crawl.crawl_id in c["crawls"])
        for crawl in crawls
    }
    crawls.sort(key=lambda c: (not c.is_open, c.crawl_id))
    since = now - (24 * 3600 * 1000 if limit is None else HOST_RECENT_MS)
    origins = await frontier.hosts.known(since_ms=since)
    hosts = []
    for origin in origins if limit is None else origins[:HOSTS_SHOWN]:
        host = await frontier.hosts.status(origin, now)
        busy = host["in_flight"] or host["blocked_until"]
        if busy or (host["last_at"] or 0) >= now - HOST_RECENT_MS:
            hosts.append(host)
    return FleetStatus(
        crawls=crawls,
        consumers_alive=alive,
        hosts=hosts,
        consumers=consumers,
        dead_letters=await recent_dead_letters(frontier, crawls, dead_letters),
        server_time=now,
        crawls_total=len(ids),
        crawls_open=len(listed_open),
        offset=offset if limit is not None else 0,
        open_elsewhere=bool(listed_open - set(shown)),
    )


async def fleet_consumers(
    frontier: Frontier, crawl_ids: list[str], now: int, default_lease_ms: int
) -> list[dict[str, Any]]:
    """Every consumer that beat (on some crawl, or idle) within :data:`CONSUMER_RECENT_MS`, once,
    with what it holds per crawl: ``{id, host, pid, started, last_beat, alive, held,
    crawls: {crawl id: {slots, held, last_beat}}}``, by id. A consumer is ``alive`` while
    its last heartbeat is within three of its own leases."""
    pipe = frontier.pipeline(transaction=False)
    for crawl_id in crawl_ids:
        pipe.zrangebyscore(
            frontier.crawl(crawl_id).keys.consumers,
            now - CONSUMER_RECENT_MS,
            "+inf",
            withscores=True,
        )
    beats = await pipe.execute() if crawl_ids else []
    pipe = frontier.pipeline(transaction=False)
    asked = []
    for crawl_id, rows in zip(crawl_ids, beats, strict=True):
        if rows:
            pipe.hmget(frontier.crawl(crawl_id).keys.cinfo, [c for c, _ in rows])
            asked.append((crawl_id, rows))
    infos = await pipe.execute() if asked else []
    out: dict[str, dict[str, Any]] = {}
    for (crawl_id, rows), row_infos in zip(asked, infos, strict=True):
        for (consumer, beat), raw in zip(rows, row_infos, strict=True):
            try:
                info = json.loads(raw or "{}")
            except ValueError:
                info = {}
            entry = _beat(
                out, consumer, int(beat), info, now=now, default_lease_ms=default_lease_ms
            )
            held = int(info.get("held") or 0)
            entry["crawls"][crawl_id] = {
                "slots": list(info.get("slots") or []),
                "held": held,
                "last_beat": int(beat),
            }
            entry["held"] += held
    # Every consumer process also beats the fleet list, serving a crawl or idle.
    for consumer, beat, info in await frontier.registry.fleet(now - CONSUMER_RECENT_MS):
        _beat(out, consumer, beat, info, now=now, default_lease_ms=default_lease_ms)
    return [out[c] for c in sorted(out)]


def _beat(
    out: dict[str, dict[str, Any]],
    consumer: str,
    beat: int,
    info: dict[str, Any],
    *,
    now: int,
    default_lease_ms: int,
) -> dict[str, Any]:
    """Count one heartbeat (of a crawl's list or of the fleet's) in ``consumer``'s entry;
    alive while its last beat is within three of its own leases."""
    entry = out.setdefault(
        consumer,
        {
            "id": consumer,
            "host": info.get("host"),
            "pid": info.get("pid"),
            "started": info.get("started"),
            "last_beat": 0,
            "alive": False,
            "held": 0,
            "crawls": {},
        },
    )
    lease = int(info.get("lease_ms") or default_lease_ms)
    entry["last_beat"] = max(entry["last_beat"], beat)
    entry["alive"] = entry["alive"] or now - beat <= 3 * lease
    return entry


async def recent_dead_letters(
    frontier: Frontier, crawls: list[CrawlSummary], limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` latest dead letters of the fleet (``dlq list`` rows with their
    ``crawl_id``), newest first."""
    rows: list[dict[str, Any]] = []
    if limit <= 0:
        return rows
    for crawl in crawls:
        if crawl.pages_dead:
            session = frontier.crawl(crawl.crawl_id)
            rows += [
                {"crawl_id": crawl.crawl_id, **row}
                for row in await dead_tasks(session, limit=limit)
            ]
    rows.sort(key=lambda r: (-r["died_at"], r["crawl_id"], r["id"]))
    return rows[:limit]


async def status_view(
    frontier: Frontier,
    crawl_id: str | None,
    lease_ms: int,
    limit: int | None = None,
    offset: int = 0,
) -> tuple[CrawlStatus | FleetStatus, bool]:
    """What ``invcrawl status`` shows: one crawl in detail (``--crawl-id``), or the fleet
    (a page of ``limit`` crawls from ``offset``, None: every crawl; busy hosts); and
    whether all of it is settled (``--watch`` stops)."""
    if crawl_id:
        session = frontier.crawl(crawl_id)
        if not await session.exists():
            raise CrawlNotFound(crawl_id)
        one = await crawl_status(session, lease_ms)
        return one, one.summary.is_settled
    fleet = await fleet_status(frontier, lease_ms, limit=limit, offset=offset)
    return fleet, fleet.is_settled
