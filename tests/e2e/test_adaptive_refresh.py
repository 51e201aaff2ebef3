"""`--every auto`: a site that changes every round beside one that never does, each
refreshed on its own interval. The changing crawl's interval falls to --refresh-min and
it gets more rounds; the steady one's rises to --refresh-max; status shows each crawl's
interval and next round. Once by `produce --every auto` beside a running consumer, once
by `crawl --every auto`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.cli import clean_env, invcrawl
from support.crawl import build_site, wait_for
from support.httpserver import StaticServer, serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CHANGING, STEADY = "changing", "steady"


class Editor:
    """Rewrites one page of the changing site over and over: every round finds it new."""

    def __init__(self, page: Path) -> None:
        self.page = page
        self.original = page.read_text()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        n = 0
        while not self.stop.wait(0.1):
            n += 1
            self.page.write_text(
                self.original.replace("returns <em>x</em> plus", f"revision {n}: returns")
            )

    def __enter__(self) -> Editor:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[tuple[StaticServer, Editor]]:
    root = tmp_path / "sites"
    build_site(root / CHANGING, pages=3)
    build_site(root / STEADY, pages=3)
    # ETags from the bytes: a page rewritten within one second is still seen as changed
    with (
        serve(root, validators="etag") as http,
        Editor(root / CHANGING / "api" / "mod0001.html") as editor,
    ):
        yield http, editor


def meta(client: redis.Redis, crawl_id: str) -> dict[str, str]:  # type: ignore[type-arg]
    return dict(client.hgetall(CrawlKeys(crawl_id).meta))


def rounds(client: redis.Redis, crawl_id: str) -> int:  # type: ignore[type-arg]
    return int(meta(client, crawl_id).get("round") or 0)


def test_produce_every_auto_adapts_each_crawl(
    sites: tuple[StaticServer, Editor], tmp_path: Path
) -> None:
    http, _ = sites
    with RedisServer(tmp_path / "redis") as server:
        python = [sys.executable, "-m", "invcrawl"]
        consumer = subprocess.Popen(
            [*python, "consume", "--redis", server.url],
            cwd=tmp_path,
            env=clean_env(),
            stderr=subprocess.DEVNULL,
        )
        argv = [*python, "produce", f"{http.url}{CHANGING}/", f"{http.url}{STEADY}/"]
        argv += ["--redis", server.url, "--every", "auto"]
        argv += ["--refresh-min", "1s", "--refresh-max", "8s"]
        producer = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            # crawl ids from the URLs: <host>-<port>-changing / -steady; alias them
            wait_for(lambda: len(client.smembers("invcrawl:crawls")) == 2, 60, "two crawls")
            ids = {c.rsplit("-", 1)[-1]: c for c in client.smembers("invcrawl:crawls")}

            def state() -> str:
                return json.dumps({k: meta(client, v) for k, v in ids.items()}, indent=1)

            def is_adapted() -> bool:
                changing, steady = meta(client, ids[CHANGING]), meta(client, ids[STEADY])
                return (
                    float(changing.get("refresh_interval") or 0) == 1.0
                    and changing.get("refresh_changed") == "1"
                    and float(steady.get("refresh_interval") or 0) == 8.0
                    and steady.get("refresh_changed") == "0"
                )

            wait_for(is_adapted, 180, "both intervals at their bound", 0.2, diagnose=state)
            # the changing crawl was refreshed more often than the steady one
            assert rounds(client, ids[CHANGING]) > rounds(client, ids[STEADY]) >= 3, state()
            for crawl_id in ids.values():
                assert meta(client, crawl_id)["refresh_adaptive"] == "1"
            # status shows each crawl's interval and next round, in text and JSON
            fleet = invcrawl("status", "--redis", server.url, cwd=tmp_path).stdout
            assert "refresh every 1s (auto)" in fleet and "refresh every 8s (auto)" in fleet
            detail = invcrawl(
                "status", "--redis", server.url, "--crawl-id", ids[STEADY], "--json", cwd=tmp_path
            )
            data = json.loads(detail.stdout)
            assert data["refresh_interval_s"] == 8.0 and data["refresh_adaptive"] is True
            assert data["refresh_changed"] is False
            # the changing crawl's change feed has changed events from several rounds
            changes = invcrawl(
                "changes", "--redis", server.url, "--crawl-id", ids[CHANGING], cwd=tmp_path
            )
            changed = [json.loads(line) for line in changes.stdout.splitlines()]
            assert sum(e["event"] == "changed" for e in changed) >= 2
            steady = invcrawl(
                "changes", "--redis", server.url, "--crawl-id", ids[STEADY], cwd=tmp_path
            )
            assert all(json.loads(line)["event"] == "added" for line in steady.stdout.splitlines())
            producer.send_signal(signal.SIGTERM)
            _, err = producer.communicate(timeout=60)
            assert producer.returncode == 143, err[-2000:]
            assert "(interval 1s; its last round found changes)" in err, err[-3000:]
            assert "(interval 8s; its last round found none)" in err, err[-3000:]
            assert all(meta(client, c).get("next_refresh_at") is None for c in ids.values())
        finally:
            producer.kill()
            consumer.send_signal(signal.SIGTERM)
            consumer.wait(60)
            client.close()


def test_crawl_every_auto(sites: tuple[StaticServer, Editor], tmp_path: Path) -> None:
    http, _ = sites
    with RedisServer(tmp_path / "redis") as server:
        argv = [sys.executable, "-m", "invcrawl", "crawl", f"{http.url}{CHANGING}/"]
        argv += [f"{http.url}{STEADY}/", "--redis", server.url, "--consumers", "1"]
        argv += ["--every", "auto", "--refresh-min", "1s", "--refresh-max", "3s", "--json"]
        argv += ["--out-dir", str(tmp_path / "out"), "-q"]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            wait_for(lambda: len(client.smembers("invcrawl:crawls")) == 2, 60, "two crawls")
            ids = {c.rsplit("-", 1)[-1]: c for c in client.smembers("invcrawl:crawls")}

            def is_adapted() -> bool:
                changing, steady = meta(client, ids[CHANGING]), meta(client, ids[STEADY])
                return (
                    float(changing.get("refresh_interval") or 0) == 1.0
                    and float(steady.get("refresh_interval") or 0) == 3.0
                    and steady.get("refresh_changed") == "0"
                    and changing.get("refresh_changed") == "1"
                )

            wait_for(
                is_adapted, 240, "both intervals at their bound", 0.2,
                diagnose=lambda: str({k: meta(client, v) for k, v in ids.items()}),
            )  # fmt: skip
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
            client.close()
    assert proc.returncode == 143, err[-2000:]
    runs = [json.loads(line) for line in out.splitlines()]  # one summary per run
    assert len(runs) >= 3 and all(r["exit_code"] == 0 for r in runs)
    refreshed = [c for r in runs[1:] for c in r["crawls"]]
    assert any(c["crawl_id"] == ids[CHANGING] and c["refresh"]["changed"] for c in refreshed)
    assert all(c["refresh"]["changed"] == 0 for c in refreshed if c["crawl_id"] == ids[STEADY])
