"""Small versioned crawls for the symbol search tests, written in-process through the
real path (open, enqueue, claim, ``commit.lua``, completion): no HTTP, no Scrapy."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from invcrawl.common.items import CrawlInfo, PageOutcome, bucket_count, build_item, prepare
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier.connection import connect
from invcrawl.frontier.search import SearchAnswer, search_answer
from invcrawl.frontier.session import Frontier

# name -> (role, doc) of each version of the fixture project "Reqs"
V1: dict[str, tuple[str, str]] = {
    "reqs": ("module", "Reqs is an HTTP library. It is simple."),
    "reqs.Session": ("class", "A Reqs session. Provides cookie persistence."),
    "reqs.sessions.Session": ("class", "A Reqs session, the implementation."),
    "reqs.sessions.SessionRedirectMixin": ("class", "Redirect handling for sessions."),
    "reqs.get": ("function", "Sends a GET request. Returns a Response object."),
    "reqs.post": ("function", "Sends a POST request."),
    "reqs.utils.parse_header_links": ("function", "Return a list of parsed link headers."),
    "reqs.Response.json": ("method", "Decode the body of a response as JSON data."),
    "reqs.compat.loads": ("function", "Deserialize a JSON document to a Python object."),
    "reqs.old_helper": ("function", "A helper removed in version 2."),
}
V2: dict[str, tuple[str, str]] = {
    **{k: v for k, v in V1.items() if k != "reqs.old_helper"},
    "reqs.get": ("function", "Sends a GET request and waits for the answer."),
    "reqs.Timeout": ("exception", "The request timed out."),
}


def page_task(project: str, n: int, names: Sequence[str], roles: Mapping[str, str]) -> Task:
    digest = hashlib.sha1(f"{project}-page-{n}".encode()).hexdigest()
    return Task(
        id=digest[:16],
        url=f"http://docs.test/{project}/p{n}.html",
        entries=tuple(TaskEntry(name, "py", roles[name], 1, name, "-") for name in names),
    )


async def build_crawl(
    frontier: Frontier,
    crawl_id: str,
    project_version: tuple[str, str],
    symbols: Mapping[str, tuple[str, str]],
    per_page: int = 3,
    *,
    first_term_logs: bool = False,
    reverse: bool = False,
    contents: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Task]:
    """A finished crawl of ``symbols`` (name -> (role, doc)), ``per_page`` to a page;
    ``first_term_logs``: created as before its meta recorded ``term_logs`` (open.lua
    did not write it), so indexed under the first layout's logs; ``reverse``: the pages
    committed in the reverse order; ``contents``: more content fields of some names
    (``doc_markdown``, ``params``...)."""
    project, version = project_version
    session = frontier.crawl(crawl_id)
    names = sorted(symbols)
    roles = {name: role for name, (role, _) in symbols.items()}
    tasks = [
        page_task(crawl_id, n, names[i : i + per_page], roles)
        for n, i in enumerate(range(0, len(names), per_page))
    ]
    buckets = bucket_count(len(names))
    fields = {"site": f"http://docs.test/{crawl_id}/", "project": project, "version": version}
    layout = (await session.open({**fields, "max_tries": 3}, 1, buckets)).items
    if first_term_logs:
        await frontier._redis.hdel(session.keys.meta, "term_logs")
        layout = (await session.open(fields, 1, buckets)).items  # a reopen keeps it so
    await session.enqueue(tasks)
    await session.produced({"entries": len(names), "pages": len(tasks)}, len(tasks))
    crawl = CrawlInfo(crawl_id, project, version)
    claims = await session.claim("c1", [0], len(tasks), False, 60_000)
    for claim in reversed(claims) if reverse else claims:
        items = [
            prepare(
                build_item(
                    crawl,
                    claim.task,
                    e,
                    {"status": "ok", "doc": symbols[e.name][1], **(contents or {}).get(e.name, {})},
                ),
                layout,
            )
            for e in claim.task.entries
        ]
        result = await session.commit(claim, items, PageOutcome.FETCHED)
        assert result.committed
    await session.completion(True)
    return tasks


def answer(url: str, query: str, **options: Any) -> SearchAnswer:
    """``search_answer`` of ``query`` against the Redis at ``url``, on a client of its own."""

    async def main() -> SearchAnswer:
        client = connect(url)
        try:
            return await search_answer(Frontier(client), query, **options)
        finally:
            await client.aclose()

    return asyncio.run(main())


def names(found: SearchAnswer) -> list[str]:
    """The names of an answer's hits, best first."""
    return [h.name for h in found.hits]


def built(
    url: str, crawl_id: str, project_version: tuple[str, str], symbols: Any, **kw: Any
) -> None:
    """:func:`build_crawl` against the Redis at ``url``, on a client of its own."""

    async def main() -> None:
        client = connect(url)
        try:
            await build_crawl(Frontier(client), crawl_id, project_version, symbols, **kw)
        finally:
            await client.aclose()

    asyncio.run(main())


def key_bytes(url: str, key: str) -> bytes:
    """The string at ``key`` in the Redis at ``url`` (b"" when there is none)."""
    plain = redis.Redis.from_url(url)
    try:
        return bytes(plain.get(key) or b"")
    finally:
        plain.close()
