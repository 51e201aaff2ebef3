"""The scripts that write the meta fields their caller names refuse a field that
``frontier/meta.py`` does not list, before writing anything (a typo would be written and
never read); the fields the producer writes decode back as written."""

from __future__ import annotations

import pytest
from conftest import run
from redis.exceptions import ResponseError

from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import Frontier

pytestmark = pytest.mark.integration


def test_an_unknown_meta_field_is_refused_and_nothing_written(redis_url: str) -> None:
    async def main() -> tuple[str, dict[str, str], int, int]:
        client = connect(redis_url)
        try:
            session = Frontier(client).crawl("meta-1")
            with pytest.raises(ResponseError) as refused:
                await session.open({"site": "https://x.test", "entires": 3}, 2, 1)
            written = await client.hgetall(session.keys.meta)
            layout = await session.open({"site": "https://x.test", "project": ""}, 2, 1)
            await session.produced({"entries": 3, "tasks": 2}, 2)
            meta = await session.meta()
            assert (meta.site, meta.project, meta.entries, meta.tasks) == (
                "https://x.test",
                "",
                3,
                2,
            )
            return str(refused.value), written, layout.slots, meta.buckets
        finally:
            await client.aclose()

    error, written, slots, buckets = run(main())
    assert "entires is no field" in error and written == {}
    assert (slots, buckets) == (2, 1)
