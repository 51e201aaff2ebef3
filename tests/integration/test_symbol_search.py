"""Symbol search against a real redis-server (issue 38): two versions of a fixture
project and one more project, written through commit.lua; ranking tiers, the version
chosen (never substituted), kinds, phrases, tombstones, get_symbol's answers, bad input,
``forget`` removing the index, and the same search on a Redis Cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from conftest import run
from redis.asyncio import Redis

from invcrawl.common.search import semantic
from invcrawl.common.search.ranking import SearchInputError
from invcrawl.common.search.selection import UnknownProject, UnknownVersion
from invcrawl.frontier.connection import connect
from invcrawl.frontier.forget import forget
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.search import SymbolHit, get_symbol, search_symbols
from invcrawl.frontier.search_index import reindex
from invcrawl.frontier.search_vectors import nearest
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import crawl_versions
from support.cli import invcrawl
from support.symbols import V1, V2, build_crawl

pytestmark = pytest.mark.integration

OTHER = {
    "jsonish.loads": ("function", "Parse a JSON string into a Python object."),
    "jsonish.evil": ("function", "Writes \x1b]0;owned\x07 to a terminal.\x1b[2J Cleared."),
}


async def _build(client: Redis) -> None:
    frontier = Frontier(client)
    await build_crawl(frontier, "reqs-1.0", ("Reqs", "1.0"), V1)
    await build_crawl(frontier, "reqs-2.0", ("Reqs", "2.0"), V2)
    await build_crawl(frontier, "jsonish-0.1", ("Jsonish", "0.1"), OTHER)


@pytest.fixture
def crawled(fresh_redis: Any) -> str:
    url = str(fresh_redis.url)

    async def main() -> None:
        client = connect(url)
        try:
            await _build(client)
        finally:
            await client.aclose()

    run(main())
    return url


def searching(url: str, query: str, **options: Any) -> list[SymbolHit]:
    async def main() -> list[SymbolHit]:
        client = connect(url)
        try:
            return await search_symbols(Frontier(client), query, **options)
        finally:
            await client.aclose()

    return run(main())


def names(hits: list[SymbolHit]) -> list[str]:
    return [h.name for h in hits]


def test_tiers_versions_kinds_and_phrases(crawled: str) -> None:
    hits = searching(crawled, "Session")
    assert names(hits)[:3] == [
        "reqs.Session",
        "reqs.sessions.Session",
        "reqs.sessions.SessionRedirectMixin",
    ]
    assert {h.version for h in hits} == {"2.0"}  # the latest finished version
    top = hits[0].to_json()
    assert top["key"] == "py:class:reqs.Session" and top["role"] == "class"
    assert top["summary"] == "A Reqs session." and top["project"] == "Reqs"
    assert top["url"].startswith("http://docs.test/reqs-2.0/")

    get2 = searching(crawled, "reqs.get")[0]
    assert get2.name == "reqs.get"
    assert get2.summary == "Sends a GET request and waits for the answer."
    get1 = searching(crawled, "REQS.GET", project="reqs", version="1.0")[0]
    assert (get1.version, get1.summary) == ("1.0", "Sends a GET request.")
    assert searching(crawled, "reqs.get", version="1.x")[0].version == "1.0"
    assert names(searching(crawled, "old_helper", version="1.0"))[:1] == ["reqs.old_helper"]
    assert "reqs.old_helper" not in names(searching(crawled, "old_helper"))

    assert names(searching(crawled, "timed", kind="exception")) == ["reqs.Timeout"]
    assert names(searching(crawled, "Sess", kind="py:class", limit=1)) == ["reqs.Session"]
    phrase = searching(crawled, "deserialize a JSON document")
    assert phrase[0].name == "reqs.compat.loads"
    assert names(searching(crawled, "parse a json string", project="jsonish")) == ["jsonish.loads"]
    assert "jsonish.loads" in names(searching(crawled, "loads"))  # every project


@pytest.mark.parametrize(
    ("query", "options", "error", "message"),
    [
        ("", {}, SearchInputError, "empty query"),
        ("x" * 10_240, {}, SearchInputError, "at most 1000"),
        ("Session", {"limit": 0}, SearchInputError, "limit must be"),
        ("Session", {"limit": 1000}, SearchInputError, "limit must be"),
        ("Session", {"project": "nope"}, UnknownProject, "'Jsonish', 'Reqs'"),
        ("Session", {"project": "Reqs", "version": "3.0"}, UnknownVersion, "'1.0', '2.0'"),
        ("Session", {"project": "Reqs", "version": "3.x"}, UnknownVersion, "'1.0', '2.0'"),
        ("Session", {"version": "9.9"}, UnknownVersion, "Reqs@2.0"),
    ],
)
def test_bad_input(crawled: str, query: str, options: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message) as raised:
        searching(crawled, query, **options)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("query", ["*", "?", "%", "[a-z]*", ".*", "%a+$", "{}:*", "\x00"])
def test_pattern_characters_find_nothing_by_pattern(crawled: str, query: str) -> None:
    assert searching(crawled, query) == []


def test_get_symbol(crawled: str) -> None:
    async def main() -> list[Any]:
        client = connect(crawled)
        try:
            return [
                await get_symbol(Frontier(client), "reqs.get"),
                await get_symbol(
                    Frontier(client), "py:function:reqs.get", version="1.0", project="Reqs"
                ),
                await get_symbol(Frontier(client), "SessionRedirectMixin"),
                await get_symbol(Frontier(client), "Session"),
                await get_symbol(Frontier(client), "no_such_thing_here"),
            ]
        finally:
            await client.aclose()

    exact, by_key, last, ambiguous, missing = run(main())
    assert exact.item["doc"] == V2["reqs.get"][1] and exact.version == "2.0"
    assert by_key.item["doc"] == V1["reqs.get"][1] and by_key.version == "1.0"
    assert by_key.item["params"] == [] and "signature" in by_key.item
    assert last.item["name"] == "reqs.sessions.SessionRedirectMixin"
    assert ambiguous.item is None
    assert names(ambiguous.candidates) == ["reqs.Session", "reqs.sessions.Session"]
    assert missing.item is None


def test_tombstones_and_forget_remove_it(crawled: str) -> None:
    async def main() -> tuple[list[str], list[str], int]:
        client = connect(crawled)
        try:
            session = Frontier(client).crawl("reqs-2.0")
            layout = await session.refresh_layout()
            await Refresh(session).tombstone(["py:function:reqs.post"], [], layout.buckets)
            after = names(await search_symbols(Frontier(client), "reqs.post"))
            gone = await forget(Frontier(client).crawl("reqs-2.0"))
            assert gone.deleted
            latest = [h.version for h in await search_symbols(Frontier(client), "reqs.get")]
            left = 0
            async for _ in client.scan_iter(match="invcrawl:{reqs-2.0}:*"):
                left += 1
            return after, latest, left
        finally:
            await client.aclose()

    after, latest, left = run(main())
    assert "reqs.post" not in after
    assert latest[:1] == ["1.0"]  # 2.0 forgotten: 1.0 is the latest left
    assert left == 0  # nothing of the index (srec, slog, svec) is left behind


@pytest.mark.timeout(120)
def test_search_on_a_cluster(tmp_path: Path) -> None:
    from support.cluster import running_cluster

    with running_cluster(tmp_path / "cluster") as cluster:

        async def main() -> tuple[list[str], list[str], set[str]]:
            client = connect(cluster.url, cluster=True)
            try:
                await _build(client)
                first = names(await search_symbols(Frontier(client), "Session", limit=2))
                loads = names(await search_symbols(Frontier(client), "loads"))
                # the vector logs of crawls on several shards, read in one pipeline
                crawls = await crawl_versions(Frontier(client))
                near = await nearest(
                    Frontier(client), semantic.load(), ["json"], [1.0], crawls, most=50
                )
                return first, loads, {crawl.crawl_id for crawl, _ in near}
            finally:
                await client.aclose()

        first, loads, near = run(main())
        assert first == ["reqs.Session", "reqs.sessions.Session"]
        assert {"reqs.compat.loads", "jsonish.loads"} <= set(loads)
        assert near == {"reqs-1.0", "reqs-2.0", "jsonish-0.1"}
        plain = redis.RedisCluster.from_url(cluster.url)
        assert plain.exists("invcrawl:{reqs-2.0}:srec:0")
        assert plain.exists("invcrawl:{reqs-2.0}:svec")
        plain.close()


def test_cli_search_and_show(crawled: str, tmp_path: Path) -> None:
    def cli(*args: str) -> Any:
        return invcrawl(*args, "--redis", crawled, cwd=tmp_path)

    found = cli("search", "Session", "--limit", "2")
    assert found.code == 0, found.stderr
    assert found.stdout.splitlines()[0].startswith("reqs.Session  class  Reqs 2.0")
    as_json = json.loads(cli("search", "reqs.get", "--version", "1.x", "--json").stdout)
    assert as_json["results"][0]["summary"] == "Sends a GET request."
    evil = cli("search", "evil")
    assert "\x1b" not in evil.stdout and "\\x1b]0;owned\\x07" in evil.stdout
    shown = cli("show", "jsonish.evil", "--markdown")
    assert shown.code == 0 and "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    reindexed = cli("search", "--reindex")
    assert reindexed.code == 0 and "indexed 22 items of 3 crawl(s)" in reindexed.stderr
    ambiguous = cli("show", "Session")
    assert ambiguous.code == 2 and len(ambiguous.error_lines) == 1
    assert "Session is ambiguous: 2 symbols have that name" in ambiguous.stderr
    assert ambiguous.stdout.count("Session  class") == 2
    # a misspelt name is no symbol, and says which one is spelt close (not the words' hits)
    typo = cli("show", "jsonish.lods")
    assert (typo.code, typo.stdout) == (1, ""), typo
    assert typo.error_lines == [
        "invcrawl: error: jsonish.lods names no symbol; did you mean "
        "py:function:jsonish.loads? (try `invcrawl search`)"
    ], typo.stderr
    as_json = json.loads(cli("show", "jsonish.lods", "--json").stdout)
    assert as_json["candidates"] == []
    assert [hit["key"] for hit in as_json["did_you_mean"]] == ["py:function:jsonish.loads"]
    for args, code, message in [
        (("search", ""), 2, "empty query"),
        (("show", "reqs.get", "--version", "7.x"), 2, "a version '7.x'"),
        (("show", "nothing_like_it"), 1, "names no symbol"),
    ]:
        result = cli(*args)
        assert (result.code, len(result.error_lines)) == (code, 1), result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr


def test_reindex_a_crawl_committed_before_the_index(crawled: str) -> None:
    async def main() -> tuple[list[str], list[str], int, int, dict[str, bytes]]:
        client = connect(crawled)
        try:
            plain = redis.Redis.from_url(crawled)
            index_keys = [
                k
                for pattern in ("invcrawl:{reqs-2.0}:srec:*", "invcrawl:{reqs-2.0}:slog:*")
                for k in plain.scan_iter(match=pattern)
            ]
            plain.delete(*index_keys)  # as a crawl made before the index was
            before = names(await search_symbols(Frontier(client), "Session", project="Reqs"))
            session = Frontier(client).crawl("reqs-2.0")
            first = await reindex(session)
            dump = {k.decode(): plain.dump(k) for k in sorted(plain.scan_iter("*:slog:*"))}
            second = await reindex(session)
            again = {k.decode(): plain.dump(k) for k in sorted(plain.scan_iter("*:slog:*"))}
            assert again == dump  # idempotent: no posting twice
            after = names(await search_symbols(Frontier(client), "Session", project="Reqs"))
            plain.close()
            return before, after, first, second, dump
        finally:
            await client.aclose()

    before, after, first, second, _ = run(main())
    assert before == []
    assert after[:2] == ["reqs.Session", "reqs.sessions.Session"]
    assert first == second == len(V2)


def test_without_scripts_the_same_answers(crawled: str) -> None:
    """A Redis user that may not run scripts (deploy's reader) looks terms up with
    plain HGETs: the same results."""
    import invcrawl.frontier.search_pool as engine

    async def main() -> tuple[list[SymbolHit], list[SymbolHit]]:
        client = connect(crawled)
        try:
            scripted = await search_symbols(Frontier(client), "parse a json string")
            engine._no_scripts[client] = True
            plain = await search_symbols(Frontier(client), "parse a json string")
            return scripted, plain
        finally:
            await client.aclose()

    scripted, plain = run(main())
    assert scripted == plain and scripted


def test_the_reader_user_searches(tmp_path: Path) -> None:
    """deploy's `reader` (no scripts, no writes) searches and shows: plain HGETs."""
    from invcrawl.localredis.server import free_port
    from support.acl import render_acl, role_url
    from support.redisproc import LoggedRedisServer, system_redis_server

    acl = tmp_path / "users.acl"
    render_acl(acl, inspector=True)
    server = LoggedRedisServer(
        tmp_path / "redis",
        port=free_port(),
        binary=system_redis_server(),
        extra=["--aclfile", str(acl)],
    )
    server.start()
    try:

        async def main() -> tuple[list[str], Any]:
            admin = connect(role_url(server.port, "inspector"))
            reader = connect(role_url(server.port, "reader"))
            try:
                await _build(admin)
                found = names(await search_symbols(Frontier(reader), "Session", limit=2))
                shown = await get_symbol(Frontier(reader), "reqs.get", version="1.0")
                return found, shown
            finally:
                await admin.aclose()
                await reader.aclose()

        found, shown = run(main())
    finally:
        server.stop()
    assert found == ["reqs.Session", "reqs.sessions.Session"]
    assert shown.item["doc"] == V1["reqs.get"][1]
