"""Claims of several crawls in one round trip: a consumer serving many crawls asks each
of a turn's crawls for a few tasks (``consumer/worker.py``), and one ``claim.lua`` call
per crawl, each its own round trip, was most of its Redis traffic after the commits.
Each crawl's claim stays its own script call (atomic for that crawl, under that crawl's
hash slot: on a Redis Cluster the pipeline goes out per shard), so nothing about a claim
changes but the packet it travels in."""

from __future__ import annotations

from collections.abc import Sequence

from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.values import Claim


async def claim_many(
    asks: Sequence[tuple[CrawlSession, Sequence[int], int]],
    consumer: str,
    busy: bool,
    lease_ms: int,
) -> list[list[Claim]]:
    """For each (crawl, slots in claim order, how many tasks), what
    :meth:`CrawlSession.claim` would give, the calls sent together. All the crawls are
    of one Redis client."""
    wanted = [i for i, (_, slots, n) in enumerate(asks) if slots and n >= 1]
    got: list[list[Claim]] = [[] for _ in asks]
    if not wanted:
        return got
    sessions = [asks[i][0] for i in wanted]
    calls = [
        session.claim_call(consumer, asks[i][1], asks[i][2], busy, lease_ms)
        for session, i in zip(sessions, wanted, strict=True)
    ]
    replies = await sessions[0].run_many(calls)
    for session, i, reply in zip(sessions, wanted, replies, strict=True):
        got[i] = session.claims_of(reply)
    return got
