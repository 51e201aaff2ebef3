"""Semantic candidates beyond the index's terms (issue 48.1 and 48.3,
``frontier/search_vectors.py``) on a fixture crawl with known answers, on a real
redis-server: an answer sharing no word with the question, nor with the words near the
question's in meaning, is no candidate of the index's lookup; the items nearest the
question in meaning, read from the crawl's vector log (``svec``, written at commit),
propose it, from the CLI as from the engine (and do not when they are disconnected, or
the log is gone: the controls). Items committed after a first search are seen by the
next; a removed item never again; ``--reindex`` writes the log of a crawl that has none,
``forget`` deletes it, a crawl with ``--retain-items exported`` has none; a name query
proposes none by meaning."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from conftest import run

from invcrawl.common.items import key_digest
from invcrawl.common.search import semantic, vector_log
from invcrawl.frontier import search_vectors
from invcrawl.frontier.connection import connect
from invcrawl.frontier.forget import forget
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.search import SearchAnswer, search_answer
from invcrawl.frontier.search_index import reindex
from invcrawl.frontier.session import Frontier
from support import symbols
from support.cli import invcrawl
from support.symbols import build_crawl, names

pytestmark = pytest.mark.integration

CLOCK = {
    "clock": ("module", "Utilities for measuring time."),
    "clock.sleep": ("function", "Suspend the calling thread for the given number of seconds."),
    "clock.monotonic": ("function", "Return the value of a monotonic clock in seconds."),
    "clock.strftime": ("function", "Convert a struct_time to a string as given by format."),
    "clock.tzname": ("data", "The names of the local time zone."),
}
QUESTION = "delay running for a moment"  # no word of clock.sleep's, nor one near them


@pytest.fixture
def crawled(fresh_redis: Any) -> Iterator[str]:
    url = str(fresh_redis.url)

    async def main() -> None:
        client = connect(url)
        try:
            await build_crawl(Frontier(client), "clock-1", ("Clock", "1.0"), CLOCK)
        finally:
            await client.aclose()

    run(main())
    semantic.disable_for_tests(False)
    yield url
    semantic.disable_for_tests(False)


def answer(url: str, query: str, **options: Any) -> SearchAnswer:
    """A search with the candidates by meaning unless ``options`` say otherwise."""
    return symbols.answer(url, query, **{"by_meaning": True, **options})


def test_the_nearest_in_meaning_are_candidates(
    crawled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = answer(crawled, QUESTION, project="Clock")
    assert names(found)[0] == "clock.sleep"
    assert found.hits[0].why["lexical"] is None  # no word of it: meaning alone
    # the index's candidates alone (by_meaning off) and the control, disconnected
    assert "clock.sleep" not in names(answer(crawled, QUESTION, project="Clock", by_meaning=False))
    monkeypatch.setattr(search_vectors, "NEAREST", 0)
    assert "clock.sleep" not in names(answer(crawled, QUESTION, project="Clock"))


def log_of(url: str, crawl_id: str) -> bytes:
    return symbols.key_bytes(url, CrawlKeys(crawl_id).svec)


def test_the_vectors_are_written_at_commit(crawled: str) -> None:
    import numpy as np

    data = log_of(crawled, "clock-1")
    assert len(data) == len(CLOCK) * vector_log.RECORD_BYTES  # one record an item
    keys, vectors = vector_log.decode(np, data)
    digests = {vector_log.hex_digest(k) for k in keys}
    assert digests == {key_digest(f"py:{role}:{name}", 1)[1] for name, (role, _) in CLOCK.items()}
    model = semantic.load()
    assert model is not None
    by_digest = dict(zip((vector_log.hex_digest(k) for k in keys), vectors, strict=True))
    sleep = by_digest[key_digest("py:function:clock.sleep", 1)[1]].astype(np.float32) / 127
    words = semantic.item_words("clock.sleep", CLOCK["clock.sleep"][1])
    assert float(sleep @ model.embed(words)) > 0.99  # the item's words, as the ranker's


def test_the_cli_finds_it_from_the_log(crawled: str, tmp_path: Path) -> None:
    def cli_names() -> list[str]:
        found = invcrawl("search", QUESTION, "--json", "--redis", crawled, cwd=tmp_path)
        assert found.code == 0, found.stderr
        return [r["name"] for r in json.loads(found.stdout)["results"]]

    assert cli_names()[0] == "clock.sleep"
    plain = redis.Redis.from_url(crawled)
    plain.delete(CrawlKeys("clock-1").svec)  # the control: the log disconnected
    plain.close()
    assert "clock.sleep" not in cli_names()


def test_a_removed_item_is_never_proposed(crawled: str) -> None:
    async def main() -> list[str]:
        client = connect(crawled)
        try:
            frontier = Frontier(client)
            assert "clock.sleep" in names(await search_answer(frontier, QUESTION))  # read once
            session = frontier.crawl("clock-1")
            layout = await session.refresh_layout()
            assert await Refresh(session).tombstone(["py:function:clock.sleep"], [], layout.buckets)
            return names(await search_answer(frontier, QUESTION))  # the same client, warm
        finally:
            await client.aclose()

    assert "clock.sleep" not in run(main())
    data = log_of(crawled, "clock-1")
    assert len(data) == (len(CLOCK) + 1) * vector_log.RECORD_BYTES
    assert data[-vector_log.DIMS :] == vector_log.REMOVED
    assert "clock.sleep" not in names(answer(crawled, QUESTION))  # a cold reader too


def test_reindex_writes_the_log_of_an_older_crawl_and_forget_drops_it(crawled: str) -> None:
    plain = redis.Redis.from_url(crawled)
    keys = CrawlKeys("clock-1")
    plain.delete(keys.svec)  # as a crawl created before the vector log
    plain.hdel(keys.meta, "vectors")

    async def main() -> tuple[list[str], int, list[str]]:
        client = connect(crawled)
        try:
            frontier = Frontier(client)
            before = names(await search_answer(frontier, QUESTION))
            await reindex(frontier.crawl("clock-1"))
            length = plain.strlen(keys.svec)
            await reindex(frontier.crawl("clock-1"))  # idempotent: appends nothing
            assert plain.strlen(keys.svec) == length
            search_vectors.forget_cached(frontier)
            after = names(await search_answer(frontier, QUESTION))
            assert (await forget(frontier.crawl("clock-1"))).deleted
            return before, length, after
        finally:
            await client.aclose()

    before, length, after = run(main())
    assert "clock.sleep" not in before  # no log: no candidate by meaning
    assert length == len(CLOCK) * vector_log.RECORD_BYTES
    assert after[0] == "clock.sleep"
    assert not plain.exists(keys.svec)
    plain.close()


def test_a_crawl_that_retains_only_what_is_not_exported_has_no_log(fresh_redis: Any) -> None:
    url = str(fresh_redis.url)

    async def main() -> None:
        client = connect(url)
        try:
            frontier = Frontier(client)
            session = frontier.crawl("exp-1")
            await session.open({"retain_items": "exported"}, 1, 1)
            await build_crawl(frontier, "exp-1", ("Exp", "1.0"), CLOCK)
        finally:
            await client.aclose()

    run(main())
    assert log_of(url, "exp-1") == b""


def test_later_commits_are_seen(crawled: str) -> None:
    async def main() -> tuple[list[str], list[str]]:
        client = connect(url)
        try:
            frontier = Frontier(client)
            before = await search_answer(frontier, QUESTION, by_meaning=True)
            await build_crawl(frontier, "nap-1", ("Nap", "1.0"), {
                "nap.doze": ("function", "Suspend the calling thread for a number of seconds."),
            })  # fmt: skip
            after = await search_answer(frontier, QUESTION, by_meaning=True)
            return names(before), [f"{h.project}:{h.name}" for h in after.hits]
        finally:
            await client.aclose()

    url = crawled
    before, after = run(main())
    assert "nap.doze" not in before and "Nap:nap.doze" in after


def test_a_name_query_proposes_nothing_by_meaning(crawled: str) -> None:
    assert names(answer(crawled, "sleep", project="Clock"))[0] == "clock.sleep"
    assert "clock.sleep" not in names(answer(crawled, "pausing", project="Clock"))
