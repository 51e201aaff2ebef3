"""``invcrawl forget``: remove one crawl from Redis, its keys and its registry entries.

Every key of the crawl is listed from :class:`invcrawl.frontier.keys.CrawlKeys` and the crawl's
layout (slots ever used, dedup buckets): never found by ``KEYS`` or ``SCAN``, which the
Redis users of deploy/ may not run. ``forget.lua`` deletes them in one step on the
crawl's shard, refusing while a consumer holds a page of the crawl or serves it; the
registry entries (``crawls``, ``active``) go afterwards, each with a command of its own
(Redis Cluster: they live on other shards). A crawl interrupted half-way (keys gone,
still listed) is forgotten by running it again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from invcrawl.common.search.postings import FIRST_TERM_LOGS_PER_BUCKET, stored_term_logs
from invcrawl.frontier.keys import ACTIVE, CRAWLS, CrawlKeys
from invcrawl.frontier.scripts import KeyIndex
from invcrawl.frontier.session import CrawlSession

DEFAULT_LEASE_MS = 30_000  # a consumer that did not record its own (Config.lease)


@dataclass(frozen=True, slots=True)
class Forgotten:
    crawl_id: str
    deleted: bool  # False: in use, left as it was
    keys: int = 0  # keys deleted
    held: int = 0  # pages held by consumers under a live lease (when refused)
    serving: int = 0  # consumers serving the crawl
    lease_ms: int = 0  # the longest lease of those consumers
    listed: bool = False  # it was in the registry


def crawl_key_names(
    keys: CrawlKeys, slots: int, buckets: int, term_logs: str | bytes | None
) -> tuple[list[str], list[str]]:
    """(every key of the crawl but meta, consumers and cinfo; its inflight sets) for a
    layout of ``slots`` slots ever used, ``buckets`` dedup buckets and its meta's
    ``term_logs``."""
    fixed = [
        keys.task,
        keys.seen,
        keys.lease,
        keys.tries,
        keys.reaped,
        keys.errors,
        keys.dlq,
        keys.dlq_why,
        keys.items,
        keys.stats,
        keys.pages,
        keys.inventory,
        keys.ring,
        keys.svec,
        keys.slnk,
    ]
    inflight = [keys.inflight(slot) for slot in range(slots)]
    per_slot = [
        key
        for slot in range(slots)
        for key in (keys.queue(slot), keys.delayed(slot), keys.owner(slot))
    ]
    search = [keys.search_record(b) for b in range(buckets)]
    if buckets:
        search += [keys.search_log(h) for h in range(stored_term_logs(term_logs, buckets))]
    if buckets and not term_logs:  # created before term_logs: maybe the index's first layout
        search += [keys.old_search_postings(h) for h in range(buckets * FIRST_TERM_LOGS_PER_BUCKET)]
    dedup = [keys.isum(b) for b in range(buckets)]
    return fixed + inflight + per_slot + dedup + search, inflight


async def forget(
    session: CrawlSession, force: bool = False, default_lease_ms: int = DEFAULT_LEASE_MS
) -> Forgotten:
    """Delete the crawl's keys (unless in use and not ``force``), then its registry
    entries."""
    k = session.keys
    slots, max_slots, buckets, term_logs = await session.commands.hmget(
        k.meta, ["slots", "max_slots", "buckets", "term_logs"]
    )
    ever = max(int(slots or 0), int(max_slots or 0))
    others, inflight = crawl_key_names(k, ever, int(buckets or 0), term_logs)
    fixed = k.bind("meta", "consumers", "cinfo")
    index = KeyIndex(len(fixed))
    for key in others:
        index.add(key)
    args = [int(force), default_lease_ms, len(inflight), *(index.add(key) for key in inflight)]
    deleted, count, held, serving, lease_ms = (
        int(n) for n in await session.run("forget", fixed, args, index.keys)
    )
    listed = False
    if deleted:
        listed = bool(await session.commands.srem(CRAWLS, session.crawl_id))
        listed = bool(await session.commands.zrem(ACTIVE, session.crawl_id)) or listed
        await session.registry.unmark(session.crawl_id)
    return Forgotten(session.crawl_id, bool(deleted), count, held, serving, lease_ms, listed)


async def forget_in_use(
    session: CrawlSession,
    default_lease_ms: int = DEFAULT_LEASE_MS,
    waiting: Callable[[Forgotten, float], None] = lambda forgotten, seconds: None,
) -> Forgotten:
    """``forget --force``: delete the crawl, then, if consumers were serving it, wait one
    of their leases and delete again what they wrote meanwhile. Within a lease each of
    them has beaten three times, found the crawl gone and let go of it (a commit already
    on its way when the keys went is fenced, and counted in a ``stats`` key of its own:
    the second pass deletes it)."""
    first = await forget(session, True, default_lease_ms)
    if not (first.held or first.serving):
        return first
    seconds = (first.lease_ms or default_lease_ms) / 1000 + 1
    waiting(first, seconds)
    await asyncio.sleep(seconds)
    second = await forget(session, True, default_lease_ms)
    return replace(first, keys=first.keys + second.keys, listed=first.listed or second.listed)


async def is_known(session: CrawlSession) -> bool:
    """Whether anything of the crawl is left: its meta, or its registry entry."""
    if await session.exists():
        return True
    return bool(await session.commands.sismember(CRAWLS, session.crawl_id))


async def withdraw(session: CrawlSession, consumer_id: str) -> None:
    """Take a consumer's own entries out of a forgotten crawl's consumer lists (its
    heartbeat may have written them after the deletion; the last one out deletes the
    key). Its slot owner keys expire by themselves within a lease."""
    k = session.keys
    pipe = session.pipeline(transaction=False)
    pipe.zrem(k.consumers, consumer_id)
    pipe.zrem(k.ring, consumer_id)
    pipe.hdel(k.cinfo, consumer_id)
    await pipe.execute()
