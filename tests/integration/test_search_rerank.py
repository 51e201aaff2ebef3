"""The transformer re-ranker (issue 48, ``common/search/rerank.py``) on a fixture crawl
with a known answer, on a real redis-server, with a tiny BERT written by the test
(``support/tiny_bert.py``: it knows ``stop``, ``suspend`` and ``pause`` as one meaning):
the answer the engine ranks below a distractor that shares more of the question's words
comes first when the re-ranker runs, and not when it is disconnected (the control).
Without the model, search still answers (lexical + semantic) and says which rankers it
ran; name tiers and name-like queries are never re-ranked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run

from invcrawl.common.search import rerank, semantic, transformer
from invcrawl.frontier.connection import connect
from invcrawl.frontier.search import SearchAnswer, crawl_list, crawl_rankers
from invcrawl.frontier.session import Frontier
from support import symbols
from support.cli import clean_env, invcrawl
from support.symbols import names
from support.tiny_bert import write_model

pytestmark = pytest.mark.integration

TIMER = {
    "timer": ("module", "Utilities for timing threads."),
    "timer.pause": ("function", "Suspend the calling thread for the given number of seconds."),
    "timer.elapsed": ("function", "Return the seconds the calling thread has run, in seconds."),
    "timer.stamp": ("function", "Format a thread clock time as text."),
    "timer.Timer": ("class", "A clock of a thread."),
}
QUESTION = "stop the calling thread for seconds"
TOPICS = {"stop": 1, "suspend": 1, "pause": 1}


@pytest.fixture
def crawled(fresh_redis: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = str(fresh_redis.url)
    symbols.built(url, "timer-1", ("Timer", "1.0"), TIMER)
    monkeypatch.setenv(transformer.MODEL_ENV, str(write_model(tmp_path / "bert", TOPICS)))
    semantic.disable_for_tests(False)
    rerank.disable_for_tests(False)
    yield url
    rerank.disable_for_tests(False)


def answer(url: str, query: str, **options: Any) -> SearchAnswer:
    """A search of the Timer crawl, re-ranked unless ``options`` say otherwise."""
    return symbols.answer(url, query, **{"project": "Timer", "reranking": True, **options})


def test_the_reranker_brings_the_answer_first(crawled: str) -> None:
    found = answer(crawled, QUESTION)
    assert found.rankers == ["lexical", "semantic", "transformer"]
    assert names(found)[0] == "timer.pause"
    assert found.hits[0].why["rerank"] == {"rank": 1, "cosine": 1.0}
    assert [h.score for h in found.hits] == sorted((h.score for h in found.hits), reverse=True)
    # the control: the same search without it (the caller's switch, or no model)
    assert names(answer(crawled, QUESTION, reranking=False))[0] == "timer.elapsed"
    rerank.disable_for_tests(True)
    off = answer(crawled, QUESTION)
    assert names(off)[0] == "timer.elapsed" and off.rankers == ["lexical", "semantic"]
    assert "rerank" not in off.hits[0].why


def test_without_the_model_search_answers_and_says_so(
    crawled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(transformer.MODEL_ENV, str(tmp_path / "nothing-here"))
    rerank.disable_for_tests(False)
    assert not rerank.installed()
    found = answer(crawled, QUESTION)
    assert found.rankers == ["lexical", "semantic"] and found.hits
    assert "no transformer re-ranker" in rerank.unavailable()


def test_names_are_never_reranked(crawled: str) -> None:
    found = answer(crawled, "pause")  # a name-like query: its name tier first, as ever
    assert names(found)[0] == "timer.pause" and "rerank" not in found.hits[0].why
    assert all("rerank" not in h.why for h in answer(crawled, "Timer").hits)


def test_the_rankers_of_a_crawl_name_it_where_it_runs(crawled: str) -> None:
    async def main() -> list[Any]:
        client = connect(crawled)
        try:
            return await crawl_list(Frontier(client))
        finally:
            await client.aclose()

    crawl = next(c for c in run(main()) if c.project == "Timer")
    assert crawl_rankers(crawl, reranking=True) == ["lexical", "semantic", "transformer"]
    assert crawl_rankers(crawl) == ["lexical", "semantic"]  # a one-shot command's search


def test_status_says_what_the_mcp_server_adds(crawled: str, tmp_path: Path) -> None:
    env = {**clean_env(), transformer.MODEL_ENV: str(tmp_path / "bert")}
    shown = invcrawl("status", "--redis", crawled, cwd=tmp_path, env=env)
    assert shown.code == 0, shown.stderr
    assert "search: lexical + semantic (MCP server: + transformer)" in shown.stdout
    data = json.loads(
        invcrawl("status", "--json", "--redis", crawled, cwd=tmp_path, env=env).stdout
    )
    assert data["search_rankers"] == ["lexical", "semantic"]
    assert data["mcp_search_rankers"] == ["lexical", "semantic", "transformer"]
    env[transformer.MODEL_ENV] = str(tmp_path / "nothing-here")  # not installed: not said
    shown = invcrawl("status", "--redis", crawled, cwd=tmp_path, env=env)
    assert (
        "search: lexical + semantic\n" in shown.stdout + "\n" and "MCP server" not in shown.stdout
    )
