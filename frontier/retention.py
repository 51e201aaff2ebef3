"""``--retain-items``: how much of its item stream a crawl keeps in Redis.

* ``all`` (the default): every version of every item stays in the stream; ``export``,
  ``changes`` and refreshes read it back at any time.
* ``exported``: an entry stays until every export group (a consumer group on the item
  stream: ``export --follow``, and ``invcrawl crawl``'s output file) has acknowledged
  it, then :func:`trim_exported` drops it. The files those exports wrote
  are then the record of the items; Redis keeps only what dedup (the checksums) and
  refresh (the page validators) need: about 40 B per item instead of about 1.9 KB.

The setting is per crawl, written into its meta when it is produced, so that every
process agrees; the trimming runs in the exporting processes, after they have flushed
and fsynced what they acknowledge, never in the consumer's per-page path.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.exceptions import ResponseError

from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.stream import first_id

ALL = "all"
EXPORTED = "exported"
OUTPUT_GROUP = "crawl-output"  # the group of `invcrawl crawl`'s output files


@dataclass(frozen=True, slots=True)
class Trimmed:
    entries: int  # dropped by this call
    keep_from: str  # the first entry id some group still needs ('' = nothing to trim)


@dataclass(frozen=True, slots=True)
class StreamHistory:
    """What trimming left of a crawl's item stream."""

    trimmed: int  # entries trimmed so far
    trimmed_before: str | None  # every entry before this id may be gone (None: none is)


def entry_before(a: str, b: str) -> bool:
    """Stream entry id ``a`` comes before ``b`` ("ms-seq", compared as numbers)."""
    return _parse(a) < _parse(b)


def _parse(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _next(entry_id: str) -> str:
    ms, seq = _parse(entry_id)
    return f"{ms}-{seq + 1}"


async def retains_all(session: CrawlSession) -> bool:
    return (await session.commands.hget(session.keys.meta, "retain_items") or ALL) != EXPORTED


async def history(session: CrawlSession) -> StreamHistory:
    trimmed = await session.commands.hget(session.keys.stats, "items_trimmed")
    before = await session.commands.hget(session.keys.meta, "trimmed_before")
    return StreamHistory(int(trimmed or 0), str(before) if before else None)


async def trimmed_before(session: CrawlSession) -> str | None:
    """Every stream entry before this id may have been trimmed (None: none was)."""
    return (await history(session)).trimmed_before


async def trim_exported(session: CrawlSession) -> Trimmed:
    """Drop the stream entries every export group has acknowledged: an entry stays
    while a group has not been delivered it or holds it pending (delivered, not
    acknowledged). No group: nothing is trimmed (the stream is the only copy); a crawl
    that retains ``all`` is left as is. Plain commands, not a script: groups only move
    forward, so trimming up to what a snapshot of them allows is safe, and the role
    that acknowledges (the exporter) needs no right to run scripts."""
    if await retains_all(session):
        return Trimmed(0, "")
    items = session.keys.items
    try:
        groups = await session.commands.xinfo_groups(items)
    except ResponseError:  # no stream yet
        return Trimmed(0, "")
    keep_from: str | None = None
    for group in groups:
        pending = await session.commands.xpending(items, group["name"])
        if int(pending["pending"]):
            needs = str(pending["min"])  # its oldest unacknowledged entry
        else:
            needs = _next(str(group["last-delivered-id"]))
        if keep_from is None or entry_before(needs, keep_from):
            keep_from = needs
    if keep_from is None:
        return Trimmed(0, "")
    first = await first_id(session)
    if first is None or not entry_before(first, keep_from):
        return Trimmed(0, keep_from)  # nothing before it left
    # The mark first: a trimmer killed between the two leaves a mark too early (an
    # export then asks for --base it did not need), never a trim without its mark.
    previous = await trimmed_before(session)
    if previous is None or entry_before(previous, keep_from):
        await session.commands.hset(session.keys.meta, "trimmed_before", keep_from)
    # Exact, not `~`: an approximate trim removes whole stream nodes only, and at most
    # 100 x stream-node-max-entries entries per call (a crawl of 15,595 items kept 5,595
    # after its one trim). An exact MINID trim has no such limit and leaves nothing
    # acknowledged behind.
    trimmed = int(await session.commands.xtrim(items, minid=keep_from, approximate=False))
    if trimmed:
        await session.commands.hincrby(session.keys.stats, "items_trimmed", trimmed)
    return Trimmed(trimmed, keep_from)


async def acknowledge_output(session: CrawlSession, through: str) -> Trimmed:
    """``invcrawl crawl``'s output file holds (complete, fsynced) every entry through
    ``through``: its export group (created on first use) moves there; trim."""
    try:
        await session.commands.xgroup_create(session.keys.items, OUTPUT_GROUP, id=through)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
        await session.commands.xgroup_setid(session.keys.items, OUTPUT_GROUP, id=through)
    return await trim_exported(session)
