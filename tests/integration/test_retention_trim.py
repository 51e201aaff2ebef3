"""``--retain-items exported`` trims everything every export group has acknowledged, in
one call, however long the stream: an approximate (``~``) trim stops at whole stream
nodes and at 100 x ``stream-node-max-entries`` entries per call, which left 5,595 of a
crawl's 15,595 entries behind."""

from __future__ import annotations

import pytest
import redis
from conftest import run

from invcrawl.frontier.connection import connect
from invcrawl.frontier.retention import acknowledge_output, trim_exported
from invcrawl.frontier.session import Frontier

pytestmark = pytest.mark.integration

CRAWL = "trim"
ENTRIES = 15_595  # the CPython docs' item count: more than one approximate trim removes


def fill(url: str, entries: int) -> list[str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    frontier_keys = Frontier(connect(url)).crawl(CRAWL).keys
    client.hset(frontier_keys.meta, mapping={"retain_items": "exported"})
    pipe = client.pipeline(transaction=False)
    for i in range(entries):
        pipe.xadd(frontier_keys.items, {"k": f"py:function:m.f{i}", "t": "new"})
    ids = pipe.execute()
    client.close()
    return [str(i) for i in ids]


def test_an_acknowledged_output_leaves_nothing_in_the_stream(redis_url: str) -> None:
    last = fill(redis_url, ENTRIES)[-1]

    async def scenario() -> tuple[int, int, int]:
        frontier, raw = Frontier(connect(redis_url)), connect(redis_url)
        session = frontier.crawl(CRAWL)
        trimmed = await acknowledge_output(session, last)
        left = int(await raw.xlen(session.keys.items))
        counted = int(await raw.hget(session.keys.stats, "items_trimmed") or 0)
        await frontier.aclose()
        await raw.aclose()
        return trimmed.entries, left, counted

    trimmed, left, counted = run(scenario())
    assert (trimmed, left, counted) == (ENTRIES, 0, ENTRIES)


def test_a_lagging_group_keeps_exactly_what_it_has_not_acknowledged(redis_url: str) -> None:
    ids = fill(redis_url, 3_000)
    middle, last = ids[1_499], ids[-1]

    async def scenario() -> tuple[int, int, str]:
        frontier, raw = Frontier(connect(redis_url)), connect(redis_url)
        session = frontier.crawl(CRAWL)
        await raw.xgroup_create(session.keys.items, "follower", id=middle)
        await acknowledge_output(session, last)
        left = int(await raw.xlen(session.keys.items))
        first = await raw.xrange(session.keys.items, count=1)
        # The follower catches up: the rest goes too.
        await raw.xgroup_setid(session.keys.items, "follower", id=last)
        await trim_exported(session)
        rest = int(await raw.xlen(session.keys.items))
        await frontier.aclose()
        await raw.aclose()
        first_id = first[0][0]
        return left, rest, first_id.decode() if isinstance(first_id, bytes) else first_id

    left, rest, first_id = run(scenario())
    # Exactly the entries after the follower's last delivered one were kept, then none.
    assert (left, first_id, rest) == (1_500, ids[1_500], 0)
