"""Semantic candidates beyond the index's terms (issue 48.1, ``frontier/search_vectors.py``)
on a fixture crawl with known answers, on a real redis-server: an answer sharing no word
with the question, nor with the words near the question's in meaning, is no candidate of
the index's lookup; the items nearest the question in meaning propose it (and do not
when they are disconnected: the control). Items committed after a first search are
seen by the next; a name query proposes none by meaning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import run

from invcrawl.common.search import semantic
from invcrawl.frontier import search_vectors
from invcrawl.frontier.connection import connect
from invcrawl.frontier.search import SearchAnswer, search_answer
from invcrawl.frontier.session import Frontier
from support.symbols import build_crawl

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
    async def main() -> SearchAnswer:
        client = connect(url)
        try:
            return await search_answer(Frontier(client), query, **{"by_meaning": True, **options})
        finally:
            await client.aclose()

    return run(main())


def names(found: SearchAnswer) -> list[str]:
    return [h.name for h in found.hits]


def test_the_nearest_in_meaning_are_candidates(
    crawled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = answer(crawled, QUESTION, project="Clock")
    assert names(found)[0] == "clock.sleep"
    assert found.hits[0].why["lexical"] is None  # no word of it: meaning alone
    # a one-shot command's search (by_meaning off) and the control, disconnected
    assert "clock.sleep" not in names(answer(crawled, QUESTION, project="Clock", by_meaning=False))
    monkeypatch.setattr(search_vectors, "NEAREST", 0)
    assert "clock.sleep" not in names(answer(crawled, QUESTION, project="Clock"))


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
