"""The term logs commit.lua writes (the consumer groups a page's entries by log;
index_items in frontier/lua/_prelude.lua appends each log once): the logs end exactly as
one entry at a time would leave them, in commit order, an item committed unchanged adding
nothing; a lookup (search_lookup.lua, and score_postings for a user without scripts)
reads every item of each term once (and the vector log holds a record per item written,
in commit order), on entry boundaries only, and proposes the same
best candidates whatever the commit order (on a real redis-server)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import redis
from conftest import run

from invcrawl.common.items import ItemLayout, PageOutcome, PreparedItem, prepare
from invcrawl.common.search import vector_log
from invcrawl.common.search.postings import (
    ENTRY_BYTES,
    fields_of,
    posting,
    postings_in,
    score_postings,
    term_log,
    term_logs_for,
    term_tag,
)
from invcrawl.common.search.ranking import LookupTerm
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier.connection import connect
from invcrawl.frontier.delivery import vector_records
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.search_pool import _by_gets, _by_script
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion

BUCKETS = 16
LAYOUT = ItemLayout(BUCKETS, term_logs_for(BUCKETS))  # 4 term logs


def item(n: int, doc: str) -> dict[str, Any]:
    return {
        "key": f"py:function:mod.f{n}",
        "name": f"mod.f{n}",
        "doc": doc,
        "status": "ok",
        "generator": "sphinx",
        "checksum": hashlib.sha1(f"{n}{doc}".encode()).hexdigest()[:16],
    }


def expected(pages: list[list[PreparedItem]], k: CrawlKeys) -> dict[str, bytes]:
    """The logs one APPEND per entry leaves, in commit order, and the vector log."""
    logs: dict[str, bytes] = {}
    written: dict[str, str] = {}
    for page in pages:
        records = vector_records(page)
        for n, p in enumerate(page):
            if written.get(p.field) == p.value:
                continue  # unchanged: not written, not indexed
            written[p.field] = p.value
            for bucket, tag in p.terms:
                log = k.search_log(bucket)
                logs[log] = logs.get(log, b"") + tag + posting(p.field)
            size = vector_log.RECORD_BYTES
            logs[k.svec] = logs.get(k.svec, b"") + records[n * size : (n + 1) * size]
    return logs


def test_logs_end_as_one_append_per_entry_would_leave_them(redis_url: str) -> None:
    crawl = "postings-order"
    k = CrawlKeys(crawl)
    # "~mod" and "+frobnicat" are every item's: 3 pages take them past 100 items; page 2
    # repeats 5 keys of page 1 changed (appended again), one key twice in itself, and
    # page 3 one key of page 1 unchanged (not written, not appended).
    docs = ["Frobnicate the widget.", "Frobnicate it again."]
    pages_items = [
        [item(n, docs[0]) for n in range(25)],
        [item(n, docs[1]) for n in range(5)]
        + [item(n, docs[0]) for n in range(25, 60)]
        + [item(30, docs[1])],
        [item(n, docs[0]) for n in range(60, 130)] + [item(20, docs[0])],
    ]
    pages = [[prepare(i, LAYOUT) for i in page] for page in pages_items]  # type: ignore[arg-type]

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
        got = {key: plain.get(key) for key in want}
    finally:
        plain.close()
    assert got == want  # the vector log too: a record per item written, none unchanged
    assert len(want[k.svec]) == (25 + 41 + 70) * vector_log.RECORD_BYTES  # 20 unchanged
    mod = want[k.search_log(term_log("~mod", LAYOUT.term_logs))]
    assert len(mod) % ENTRY_BYTES == 0 and mod.count(term_tag("~mod")) >= 131

    # a lookup: each item once (page 2's changed keys are in the log twice), every one
    # of a term read (not the first 100 committed), ties by the posting's bytes: the
    # script and the plain reads alike
    first_ids = [prepare(i, LAYOUT).field for page in pages_items for i in page]
    distinct = list(dict.fromkeys(first_ids))
    terms = [LookupTerm("~mod", 2.0, "mod"), LookupTerm("=nothing", 1000.0)]
    by_script, by_gets = lookup(redis_url, crawl, terms, len(distinct))
    assert by_script == by_gets
    assert by_script.counts == [len(distinct), 0]
    assert by_script.fields == sorted(distinct)  # equal scores: by bytes
    log = want[k.search_log(term_log("~mod", LAYOUT.term_logs))]
    found = postings_in(log, term_tag("~mod"), None)
    assert sorted(fields_of(found)) == sorted(distinct)
    assert (
        score_postings([found, b""], [2000, 1000000], 5, 200, 1000).fields == sorted(distinct)[:5]
    )


def lookup(url: str, crawl_id: str, terms: list[LookupTerm], wanted: int) -> tuple[Any, Any]:
    crawl = CrawlVersion(crawl_id, "P", "1", "finished", 200, 1, "", "", BUCKETS, 4)

    async def go() -> tuple[Any, Any]:
        client = connect(url)
        try:
            frontier = Frontier(client)
            scripted = await _by_script(frontier, terms, [crawl], wanted)
            assert scripted is not None
            return scripted[0], (await _by_gets(frontier, terms, [crawl], wanted))[0]
        finally:
            await client.aclose()

    return run(go())


@pytest.mark.parametrize("shift", [4, 5, 6])
def test_a_tag_inside_a_posting_is_not_an_entry(shift: int) -> None:
    """Bytes of a posting that equal a term's tag, off an entry's boundary, are not an
    entry of that term."""
    tag = term_tag("~needle")
    other = term_tag("~hay")
    fake = (b"\x00" * 6 + tag + b"\x00" * 6)[shift : shift + 6]
    log = other + fake + other + b"\x01" * 6 + tag + b"\x02" * 6 + tag + b"\x02" * 6
    assert fields_of(postings_in(log, tag)) == ["020202020202"]
