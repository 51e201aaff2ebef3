"""``get_symbol``'s references through the official SDK's client on a real Redis (issue
48, 4): a doc's link to another crawled project's symbol (Sphinx's intersphinx link to
``str``) is that symbol's key with its project and crawl, which ``get_symbol`` then
answers; a link within the crawl is a key alone; a link to a site no crawl here
holds, or to a symbol its crawl lacks, keeps its URL; a link to another copy of a crawled
site names the symbol its crawl has at that page and anchor. The item's references are those
extraction read from a Sphinx page (``common/extract/references.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from invcrawl.common.extract import extract_page
from invcrawl.common.tasks import TaskEntry
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.server import RedisServer
from invcrawl.mcpserver.server import Connection, build_server
from support.symbols import build_crawl

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PYTHON = {
    "str": ("class", "Return a str version of object."),
    "os.path.exists": ("function", "Return True if path refers to an existing path."),
}
MYLIB = {
    "mylib.Thing": ("class", "A thing."),  # p0.html (one symbol a page, in name order)
    "mylib.f": ("function", "F."),  # p1.html
    "mylib.g": ("function", "G."),  # p2.html
}
PY_PAGE = "http://docs.test/pylib-3.11/p0.html"  # build_crawl's page of both PYTHON names
MIRROR = "https://docs.python.test/3"  # another copy of that site, not crawled


def xref(href: str, role: str, text: str) -> str:
    domain, _, name = role.partition(":")
    return (
        f'<a class="reference external" href="{href}"><code class="xref {domain} '
        f'{domain}-{name} docutils literal"><span class="pre">{text}</span></code></a>'
    )


DOC = ", ".join(
    (
        "Make a " + xref(f"{PY_PAGE}#str", "py:class", "str"),
        # another copy of Python's site, and a role that misnames the function
        xref(f"{MIRROR}/p0.html#os.path.exists", "py:meth", "exists()"),
        xref("p2.html#mylib.g", "py:func", "g()"),
        '<a class="reference internal" href="p0.html#mylib.Thing">a Thing</a>',
        xref("https://elsewhere.test/api.html#other.Thing", "py:class", "other.Thing"),
        xref(f"{PY_PAGE}#nothing.here", "py:class", "nothing.here"),
        xref(f"{MIRROR}/other.html#str", "py:class", "str") + ".",  # not str's page
    )
)
PAGE = (
    '<html><body><div class="body" role="main"><section id="api"><h1>API</h1>'
    '<dl class="py function"><dt class="sig sig-object py" id="mylib.f">'
    '<span class="sig-name descname">f</span>()</dt>'
    f"<dd><p>{DOC}</p></dd></dl></section></div></body></html>"
).encode()


def f_content() -> dict[str, Any]:
    entry = TaskEntry("mylib.f", "py", "function", 1, "mylib.f", "-")
    [content] = extract_page(PAGE, "http://docs.test/mylib-1.0/p1.html", [entry])
    assert len(content["references"]) == 7
    return content


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with RedisServer(tmp_path_factory.mktemp("references") / "redis") as server:

        async def build() -> None:
            frontier = Frontier(connect(server.url))
            try:
                await build_crawl(frontier, "pylib-3.11", ("Python", "3.11"), PYTHON, 3)
                await build_crawl(frontier, "mylib-1.0", ("Mylib", "1.0"), MYLIB, 1,
                                  contents={"mylib.f": f_content()})  # fmt: skip
            finally:
                await frontier.aclose()

        asyncio.run(build())
        yield server.url


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_a_link_to_another_crawled_project_s_symbol_is_its_key(redis_url: str) -> None:
    async def main() -> None:
        async with Client(build_server(Connection(redis_url)), mode="legacy") as client:
            got = data(await client.call_tool("get_symbol", {"name": "mylib.f"}))
            result = await client.call_tool("get_symbol", {"name": "mylib.f"})
            block = result.content[0]
            assert block.type == "text" and block.text.endswith("; 7 references, 4 by symbol key")
            python = {"project": "Python", "crawl_id": "pylib-3.11"}
            assert got["item"]["references"] == [
                {"key": "py:class:str", "name": "str", **python},
                {"key": "py:function:os.path.exists", "name": "os.path.exists", **python},
                {"key": "py:function:mylib.g", "name": "mylib.g"},
                {"key": "py:class:mylib.Thing", "name": "mylib.Thing"},
                {"name": "other.Thing", "url": "https://elsewhere.test/api.html#other.Thing"},
                {"name": "nothing.here", "url": f"{PY_PAGE}#nothing.here"},
                {"name": "str", "url": f"{MIRROR}/other.html#str"},
            ]
            # a long list of them is read on by field and offset, as the other long fields
            asked = {"name": "mylib.f", "field": "references", "offset": 4}
            part = data(await client.call_tool("get_symbol", asked))
            assert part["part"] == got["item"]["references"][4:] and part["total"] == 7
            # the agent follows one: its key, project and crawl (as the version) answer it
            asked = {"name": "py:class:str", "project": "Python", "version": "pylib-3.11"}
            followed = data(await client.call_tool("get_symbol", asked))
            assert followed["item"]["key"] == "py:class:str"
            assert followed["item"]["doc"] == PYTHON["str"][1]
            # a symbol without links answers no references, as before
            plain = data(await client.call_tool("get_symbol", {"name": "mylib.g"}))
            assert "references" not in plain["item"]

    asyncio.run(main())
