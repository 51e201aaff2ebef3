"""Hostile pages: a 64 MB page, 100,000 nested elements, invalid UTF-8, and a page that
takes the extractor longer than its budget. The consumer stays alive; pages whose
extraction can succeed end as items ``ok``; the slow one is retried and dead-lettered
with its reason after ``--max-tries`` deliveries, and is extracted once redriven with a
larger budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from support.cli import invcrawl
from support.crawl import build_site
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

BIG = 64_000_000


def _hostile_site(root: Path) -> None:
    build_site(root, pages=5, extras=False)
    api = root / "api"
    # 64 MB: the real page, its main section padded with paragraphs.
    page = (api / "mod0001.html").read_text()
    filler = "<p>" + "lorem ipsum dolor sit amet " * 40 + "</p>\n"
    padding = filler * ((BIG - len(page)) // len(filler) + 1)
    (api / "mod0001.html").write_text(page.replace("</section>", padding + "</section>"))
    assert (api / "mod0001.html").stat().st_size >= BIG
    # 100,000 nested elements inside the main content.
    page = (api / "mod0002.html").read_text()
    nested = "<div>" * 100_000 + "deep" + "</div>" * 100_000
    (api / "mod0002.html").write_text(page.replace("</section>", nested + "</section>"))
    # Invalid UTF-8 in a page that declares UTF-8.
    page_bytes = (api / "mod0003.html").read_bytes()
    page_bytes = page_bytes.replace(b"returns", b"ret\xff\xfe\xc3urns").replace(
        b"</section>", b"\x80\x81\xc0\xaf broken \xed\xa0\x80</section>"
    )
    (api / "mod0003.html").write_bytes(page_bytes)


def test_hostile_pages(tmp_path: Path, redis_url: str, sync_redis: redis.Redis) -> None:
    root = tmp_path / "site"
    _hostile_site(root)
    out = tmp_path / "items.jsonl"
    with serve(root) as http:
        args = ["crawl", http.url, "--redis", redis_url, "-o", str(out), "--consumers", "1"]
        args += ["--max-tries", "2", "--backoff-base", "0.2", "--backoff-max", "0.5"]
        first = invcrawl(*args, "--extract-budget", "0.3", cwd=tmp_path, timeout=240)
        assert first.code == 3, first.stderr  # finished with a dead page
        assert "Traceback" not in first.stderr
        (crawl,) = sync_redis.smembers("invcrawl:crawls")
        keys = f"invcrawl:{{{crawl}}}"
        assert sync_redis.hget(f"{keys}:meta", "state") == "finished"
        (dead_id,) = sync_redis.zrange(f"{keys}:dlq", 0, -1)
        why = json.loads(sync_redis.hget(f"{keys}:dlq:why", dead_id) or "{}")
        assert "longer than its 0.3s budget" in why["reason"], why
        assert why["tries"] == 2
        items = [json.loads(line) for line in out.read_text().splitlines()]
        by_module = {i["name"] for i in items if i["status"] == "ok"}
        for module in ("mod0000", "mod0002", "mod0003", "mod0004"):
            assert f"demo.{module}.func0" in by_module, module
        dead = [i for i in items if "mod0001" in i["name"]]  # the dead page: `failed` items
        assert dead and all(i["status"] == "failed" and "budget" in i["reason"] for i in dead)
        broken = next(i for i in items if i["name"] == "demo.mod0003.func0")
        assert broken["status"] == "ok" and broken["signature"]
        # Redriven, with the default budget, the 64 MB page is extracted.
        redrive = invcrawl("dlq", "redrive", "--all", "--redis", redis_url, cwd=tmp_path)
        assert redrive.code == 0, redrive.stderr
        second = invcrawl(*args, cwd=tmp_path, timeout=240)
        assert second.code == 0, second.stderr
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert {i["status"] for i in items} == {"ok"}
    assert any(i["name"] == "demo.mod0001.func0" for i in items)
    assert sync_redis.zcard(f"{keys}:dlq") == 0
