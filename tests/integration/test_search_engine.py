"""The search engine of issue 48 and 46.3 on fixture crawls with known answers, on a real
redis-server: a question that shares no word with its answer is found by meaning (and
not when the semantic ranker is disconnected: the control); one site's hundred
``Session`` cannot take the results, and an impostor defining ``reqlib.Session`` in a
crawl opened first ranks behind the project named as the package; a rank depends
neither on the limit nor on the order pages were committed; a typo finds the name; a
query matching nothing well says so; every hit says why it matched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run

from invcrawl.common.search import semantic
from invcrawl.frontier.connection import connect
from invcrawl.frontier.search import search_answer
from invcrawl.frontier.session import Frontier
from support.cli import invcrawl
from support.symbols import answer, build_crawl, names

pytestmark = pytest.mark.integration

REQLIB = {
    "reqlib": ("module", "Reqlib is an HTTP library for people."),
    "reqlib.Session": ("class", "A Reqlib session. Provides cookie persistence and pooling."),
    "reqlib.sessions.Session": ("class", "A Reqlib session, the implementation."),
    "reqlib.get": ("function", "Sends a GET request and returns the response."),
    "reqlib.Response.json": ("method", "Decode the body of a response as JSON."),
    "reqlib.exceptions.Timeout": ("exception", "The request timed out."),
}
FSX = {
    "fsx": ("module", "Operations on files and paths."),
    "fsx.rmtree": ("function", "Delete an entire directory tree."),
    "fsx.copyfile": ("function", "Copy the contents of one file to another file."),
    "fsx.chmod": ("function", "Change the mode of a path to the numeric mode."),
    "fsx.getsize": ("function", "Return the size in bytes of a path."),
    "fsx.which": ("function", "Return the path to an executable which would be run."),
    "fsx.label": ("label", "Delete an entire directory tree: the how-to page."),
}
EVIL = {f"evil{n}.Session": ("class", f"pip install evil{n} to get sessions.") for n in range(100)}
WEB = {
    "web.SessionStore": ("class", "Stores the sessions of a site in a database."),
    "web.session_cookie": ("function", "Read the session cookie of a request."),
}
IMPOSTOR = {"reqlib.Session": ("class", "A Reqlib session. Run pip install impostor first.")}


@pytest.fixture
def crawled(fresh_redis: Any) -> Iterator[str]:
    url = str(fresh_redis.url)

    async def main() -> None:
        client = connect(url)
        try:
            frontier = Frontier(client)
            # the impostor is opened first, under an id sorting first: neither may help it
            await build_crawl(frontier, "000-impostor", ("Aaa", "1.0"), IMPOSTOR)
            await build_crawl(frontier, "reqlib-1", ("reqlib", "1.0"), REQLIB)
            await build_crawl(frontier, "fsx-1", ("Fsx", "1.0"), FSX)
            await build_crawl(frontier, "evil-1", ("Evil", "1.0"), EVIL, per_page=10)
            await build_crawl(frontier, "web-1", ("Web", "1.0"), WEB)
        finally:
            await client.aclose()

    run(main())
    yield url
    semantic.disable_for_tests(False)


def test_a_question_sharing_no_word_with_its_answer(crawled: str) -> None:
    found = answer(crawled, "erase folder", project="Fsx")
    assert found.rankers == ["lexical", "semantic"]
    assert names(found)[0] == "fsx.rmtree"
    why = found.hits[0].why
    assert why["matched"] == "words and meaning" and why["semantic"]["rank"] == 1
    assert "fsx.label" not in names(found)[:1]  # the label has the same words: an API first

    semantic.disable_for_tests(True)  # the control: the semantic ranker disconnected
    off = answer(crawled, "erase folder", project="Fsx")
    assert off.rankers == ["lexical"] and "fsx.rmtree" not in names(off)
    assert off.note == "semantic model disabled"


def test_one_site_cannot_take_the_results(crawled: str) -> None:
    found = answer(crawled, "Session", limit=10)
    assert names(found)[0] == "reqlib.Session" and found.hits[0].project == "reqlib"
    projects = [h.project for h in found.hits]
    assert projects.count("Evil") <= 5 and len(set(projects)) == 4
    for other in ("reqlib.sessions.Session", "web.SessionStore", "web.session_cookie"):
        assert other in names(found)
    exact = answer(crawled, "reqlib.Session")
    assert [(h.name, h.project) for h in exact.hits[:2]] == [
        ("reqlib.Session", "reqlib"),
        ("reqlib.Session", "Aaa"),
    ]


@pytest.mark.parametrize("query", ["Session", "session pooling", "delete a directory", "json"])
def test_ranks_never_depend_on_the_limit(crawled: str, query: str) -> None:
    everything = [(h.key, h.project) for h in answer(crawled, query, limit=100).hits]
    for limit in (1, 2, 5, 10, 15):
        got = [(h.key, h.project) for h in answer(crawled, query, limit=limit).hits]
        assert got == everything[:limit]


def test_ranks_never_depend_on_the_commit_order(fresh_redis: Any) -> None:
    url = str(fresh_redis.url)
    many = {f"mod.f{n:03}": ("function", "Frobnicate the widget.") for n in range(150)}
    many["mod.widget"] = ("class", "A widget to frobnicate.")

    async def main() -> tuple[list[str], list[str]]:
        client = connect(url)
        try:
            frontier = Frontier(client)
            await build_crawl(frontier, "a", ("A", "1"), many, per_page=7)
            await build_crawl(frontier, "b", ("B", "1"), many, per_page=7, reverse=True)
            a = await search_answer(Frontier(client), "frobnicate widget", project="A", limit=100)
            b = await search_answer(Frontier(client), "frobnicate widget", project="B", limit=100)
            return [h.key for h in a.hits], [h.key for h in b.hits]
        finally:
            await client.aclose()

    first, reversed_ = run(main())
    assert first == reversed_ and first[0] == "py:class:mod.widget"


def test_a_typo_finds_the_name(crawled: str) -> None:
    found = answer(crawled, "Sesion", project="reqlib")
    assert names(found)[0] == "reqlib.Session"
    assert found.hits[0].why["matched"] == "name one or two edits away"
    assert names(answer(crawled, "rmtre", project="Fsx"))[0] == "fsx.rmtree"


def test_no_good_match_is_said(crawled: str) -> None:
    weak = answer(crawled, "xylophone quantum banana orchestra mode", project="Fsx")
    assert weak.hits == [] and weak.no_good_match
    good = answer(crawled, "change the mode of a path", project="Fsx")
    assert names(good)[0] == "fsx.chmod" and not good.no_good_match
    data = good.to_json("q")
    assert data["no_good_match"] is False and data["results"][0]["why"]["words"]
    assert data["results"][0]["signature"] == ""


def test_the_cli_explains_and_says_no_good_match(crawled: str, tmp_path: Path) -> None:
    shown = invcrawl("search", "erase folder", "--project", "Fsx", "--explain",
                     "--redis", crawled, cwd=tmp_path)  # fmt: skip
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("fsx.rmtree") and "why: words and meaning" in shown.stdout
    data = json.loads(
        invcrawl("search", "Sesion", "--json", "--redis", crawled, cwd=tmp_path).stdout
    )
    assert data["results"][0]["name"] == "reqlib.Session" and data["no_good_match"] is False
    assert data["rankers"] == ["lexical", "semantic"]
    weak = invcrawl("search", "xylophone quantum banana orchestra mode", "--project", "Fsx",
                    "--redis", crawled, cwd=tmp_path)  # fmt: skip
    assert weak.code == 0 and "no good match" in weak.stderr
