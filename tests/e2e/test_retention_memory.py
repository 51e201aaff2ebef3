"""``--retain-items exported`` keeps its memory promise on a real site: after a crawl of
the Debian CPython 3.11 docs (15,595 entries) whose output file is written and
acknowledged, Redis holds at most 100 bytes per item (the dedup checksums and the page
validators; every stream entry is gone). Skipped when ``python3.11-doc`` is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.cli import invcrawl

ROOT = Path("/usr/share/doc/python3.11/html")
CRAWL = "cpython"
BYTES_PER_ITEM = 100

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.realdocs,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not (ROOT / "objects.inv").exists(), reason="python3.11-doc not installed"),
]


def used_memory(client: redis.Redis) -> int:
    """``used_memory`` without the Lua script cache (not crawl state)."""
    info = client.info("memory")
    return int(info["used_memory"]) - int(info.get("used_memory_scripts", 0))


def test_an_exported_crawl_of_the_cpython_docs_keeps_under_100_bytes_per_item(
    tmp_path: Path,
) -> None:
    with RedisServer(tmp_path / "redis", fsync="everysec") as server:
        client = redis.Redis.from_url(server.url)
        empty = used_memory(client)
        result = invcrawl(
            "crawl", str(ROOT), "--redis", server.url, "--crawl-id", CRAWL,
            "--retain-items", "exported", "-o", str(tmp_path / "out.jsonl"),
            "--progress", "none", cwd=tmp_path, timeout=540,
        )  # fmt: skip
        assert result.code == 0, result.stderr[-3000:]
        lines = (tmp_path / "out.jsonl").read_text().splitlines()
        keys = {json.loads(line)["key"] for line in lines}
        assert len(keys) == len(lines) > 15_000
        assert client.xlen(CrawlKeys(CRAWL).items) == 0
        per_item = (used_memory(client) - empty) / len(lines)
        client.close()
    assert per_item <= BYTES_PER_ITEM, f"{per_item:.0f} B/item after the export"
