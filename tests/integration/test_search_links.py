"""The inbound-link prior (issue 48, ``common/search/link_log.py``) on a fixture crawl
on a real redis-server: two answers to a question, one a little closer in words, the
other linked to from six pages; re-ranked, the linked one comes first, and not once the
link log is disconnected (the control). The log is written at commit, a page gone
(its tombstones) drops its links, ``search --reindex`` writes it for an older crawl and
``forget`` deletes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from conftest import run

from invcrawl.common.search import link_log, rerank, semantic, transformer
from invcrawl.frontier import search_links
from invcrawl.frontier.connection import connect
from invcrawl.frontier.forget import forget
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.search import SearchAnswer, search_answer
from invcrawl.frontier.search_index import reindex
from invcrawl.frontier.session import Frontier
from support import symbols
from support.cli import invcrawl
from support.symbols import built, key_bytes, names
from support.tiny_bert import write_model

pytestmark = pytest.mark.integration

CRAWL = "links-1"
USERS = 6
KIT = {
    "kit.alpha": ("function", "Copy a directory tree."),
    "kit.beta": ("function", "Copy a directory tree, in the old way."),
    **{f"kit.user{n}": ("function", f"Build the index of site number {n}.") for n in range(USERS)},
}
# one symbol a page, in the names' order: kit.beta is on p1
BETA_URL = f"http://docs.test/{CRAWL}/p1.html#kit.beta"
CONTENTS = {
    f"kit.user{n}": {"references": [{"name": "kit.beta", "url": BETA_URL}]} for n in range(USERS)
}
QUESTION = "copy a directory tree"
TOPICS = {"copy": 1, "directory": 1, "tree": 1}


@pytest.fixture
def crawled(fresh_redis: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = str(fresh_redis.url)
    built(url, CRAWL, ("Kit", "1.0"), KIT, per_page=1, contents=CONTENTS)
    monkeypatch.setenv(transformer.MODEL_ENV, str(write_model(tmp_path / "bert", TOPICS)))
    semantic.disable_for_tests(False)
    rerank.disable_for_tests(False)
    yield url
    rerank.disable_for_tests(False)


def answer(url: str, **options: Any) -> SearchAnswer:
    return symbols.answer(url, QUESTION, **{"project": "Kit", "reranking": True, **options})


def log_of(url: str) -> bytes:
    return key_bytes(url, CrawlKeys(CRAWL).slnk)


def inbound(url: str) -> int:
    links = link_log.InboundLinks()
    links.merge(log_of(url))
    return links.count(BETA_URL)


@pytest.mark.parametrize("reranking", [True, False])  # the MCP server's, the CLI's
def test_the_linked_answer_comes_first_and_not_without_the_log(
    crawled: str, reranking: bool
) -> None:
    found = answer(crawled, reranking=reranking)
    assert names(found)[:2] == ["kit.beta", "kit.alpha"]
    assert found.hits[0].why["linked_from_pages"] == USERS
    assert "linked_from_pages" not in found.hits[1].why
    assert ("rerank" in found.hits[0].why) is reranking
    # the control: the log deleted
    plain = redis.Redis.from_url(crawled)
    plain.delete(CrawlKeys(CRAWL).slnk)
    plain.close()
    assert names(answer(crawled, reranking=reranking))[0] == "kit.alpha"


def test_explain_says_how_many_pages_link_to_it(crawled: str, tmp_path: Path) -> None:
    found = invcrawl("search", QUESTION, "--explain", "--redis", crawled, cwd=tmp_path)
    assert found.code == 0, found.stderr
    first = found.stdout.split("\n\n")[0]
    assert first.startswith("kit.beta") and f"linked from {USERS} pages" in first


def test_the_log_is_written_at_commit_one_record_a_linking_page(crawled: str) -> None:
    data = log_of(crawled)
    records = list(link_log.each_record(data))
    assert len(records) == USERS  # a page of no link adds no record
    assert all(targets == (link_log.url_digest(BETA_URL),) for _, targets, _ in records)
    assert inbound(crawled) == USERS


def test_a_page_gone_drops_its_links(crawled: str) -> None:
    tasks_gone = [symbols.page_task(CRAWL, n, [], {}).id for n in (2, 3)]

    async def main() -> list[str]:
        client = connect(crawled)
        try:
            frontier = Frontier(client)
            assert (
                names(await search_answer(frontier, QUESTION, project="Kit", reranking=True))[0]
                == "kit.beta"
            )
            session = frontier.crawl(CRAWL)
            layout = await session.refresh_layout()
            keys = ["py:function:kit.user0", "py:function:kit.user1"]
            assert await Refresh(session).tombstone(keys, tasks_gone, layout.buckets) == 2
            found = await search_answer(frontier, QUESTION, project="Kit", reranking=True)
            return [f"{h.name}:{h.why.get('linked_from_pages', 0)}" for h in found.hits]
        finally:
            await client.aclose()

    assert "kit.beta:4" in run(main())  # the same client, warm: it read the new records
    assert inbound(crawled) == USERS - 2


def test_reindex_writes_the_log_of_an_older_crawl_and_forget_drops_it(crawled: str) -> None:
    plain = redis.Redis.from_url(crawled)
    keys = CrawlKeys(CRAWL)
    plain.delete(keys.slnk)  # as a crawl created before the link log
    plain.hdel(keys.meta, "links")

    async def main() -> tuple[int, list[str]]:
        client = connect(crawled)
        try:
            frontier = Frontier(client)
            await reindex(frontier.crawl(CRAWL))
            length = plain.strlen(keys.slnk)
            assert plain.hget(keys.meta, "links") == b"1"  # commits append from now on
            await reindex(frontier.crawl(CRAWL))  # idempotent: appends nothing
            assert plain.strlen(keys.slnk) == length
            search_links.forget_cached(frontier)
            after = names(await search_answer(frontier, QUESTION, project="Kit", reranking=True))
            assert (await forget(frontier.crawl(CRAWL))).deleted
            return length, after
        finally:
            await client.aclose()

    length, after = run(main())
    assert length and after[0] == "kit.beta"
    assert not plain.exists(keys.slnk)
    plain.close()
