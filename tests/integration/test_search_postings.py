"""The postings commit.lua writes (add_posting in frontier/lua/_prelude.lua buffers a
script's chunk fields and writes each once): the hashes end exactly as one posting at a
time would leave them, field order included, across chunk boundaries, a full term and
items committed again (on a real redis-server)."""

from __future__ import annotations

import hashlib
from typing import Any

import redis
from conftest import run

from common.items import PageOutcome, PreparedItem, prepare
from common.search.postings import CHUNK_BYTES, MAX_CHUNKS, posting, term_bucket
from common.tasks import Task, TaskEntry
from frontier.connection import connect
from frontier.keys import CrawlKeys
from frontier.session import Frontier

BUCKETS = 4  # 16 term hashes of ~20 fields: listpacks (field order kept, HGETALL shows it)


def item(n: int, doc: str) -> dict[str, Any]:
    return {
        "key": f"py:function:mod.f{n}",
        "name": f"mod.f{n}",
        "doc": doc,
        "status": "ok",
        "generator": "sphinx",
        "checksum": hashlib.sha1(f"{n}{doc}".encode()).hexdigest()[:16],
    }


def expected(pages: list[list[PreparedItem]], k: CrawlKeys) -> dict[str, list[tuple[bytes, bytes]]]:
    """The sterm hashes one HSET per posting leaves (the algorithm before the buffer)."""
    hashes: dict[str, dict[bytes, bytes]] = {}
    written: dict[str, str] = {}
    for page in pages:
        for p in page:
            if written.get(p.field) == p.value:
                continue  # unchanged: not written, not indexed
            written[p.field] = p.value
            for bucket, term in p.terms:
                fields = hashes.setdefault(k.search_terms(bucket), {})
                add_posting(fields, term.encode(), posting(p.field))
    return {key: list(fields.items()) for key, fields in hashes.items()}


def add_posting(fields: dict[bytes, bytes], term: bytes, mine: bytes) -> None:
    names = [term] + [term + b"\0" + bytes([c]) for c in range(1, MAX_CHUNKS)]
    last = fields.get(names[-1])
    if last is not None and len(last) >= CHUNK_BYTES:
        return
    for name in names:
        chunk = fields.get(name)
        if chunk is None:
            fields[name] = mine
            return
        if any(chunk[i : i + 6] == mine for i in range(0, len(chunk), 6)):
            return
        if len(chunk) < CHUNK_BYTES:
            fields[name] = chunk + mine
            return


def test_postings_end_as_one_write_per_posting_would_leave_them(redis_url: str) -> None:
    crawl = "postings-order"
    k = CrawlKeys(crawl)
    # "~mod" and "+frobnicat" are every item's: 3 pages take them past a chunk, past a
    # page, to a full term (100 postings) and beyond; page 2 repeats 5 keys of page 1
    # changed, and one key twice in itself (its posting is there already: not again).
    docs = ["Frobnicate the widget.", "Frobnicate it again."]
    pages_items = [
        [item(n, docs[0]) for n in range(25)],
        [item(n, docs[1]) for n in range(5)]
        + [item(n, docs[0]) for n in range(25, 60)]
        + [item(30, docs[1])],
        [item(n, docs[0]) for n in range(60, 130)],
    ]
    pages = [[prepare(i, BUCKETS) for i in page] for page in pages_items]  # type: ignore[arg-type]

    async def commit_all() -> None:
        client = connect(redis_url)
        session = Frontier(client).crawl(crawl)
        tasks = [
            Task(
                f"{n:016x}",
                f"http://x.test/{n}.html",
                tuple(TaskEntry(i["name"], "py", "function", 1, "-", "-") for i in page),
            )
            for n, page in enumerate(pages_items)
        ]
        await session.open({"site": "x", "max_tries": 3}, 1, BUCKETS)
        await session.enqueue(tasks)
        await session.produced({"entries": 131}, len(tasks))
        claims = await session.claim("w", [0], len(tasks), False, 600_000)
        by_id = {t.id: page for t, page in zip(tasks, pages, strict=True)}
        for claim in sorted(claims, key=lambda c: c.task.id):
            await session.commit(claim, by_id[claim.task.id], PageOutcome.FETCHED)
        await client.aclose()

    run(commit_all())
    want = expected(pages, k)
    plain = redis.Redis.from_url(redis_url)
    try:
        got = {key: list(plain.hgetall(key).items()) for key in want}
    finally:
        plain.close()
    assert got == want
    chunks = dict(want[k.search_terms(term_bucket("~mod", BUCKETS))])
    assert len(chunks[b"~mod\0\x09"]) == CHUNK_BYTES  # the term is full
    assert "hashtable" not in plain_encodings(redis_url, list(want))  # listpack or ziplist


def plain_encodings(url: str, keys: list[str]) -> set[str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return {str(client.object("encoding", key)) for key in keys}
    finally:
        client.close()
