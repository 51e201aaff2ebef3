"""Refresh and the change feed, end to end: a Sphinx site built here from sources written
here (so every symbol is known), served over loopback HTTP by a server that honours
conditional requests and logs every response's status; crawled, edited, rebuilt and
refreshed with `invcrawl crawl --refresh` against a real redis-server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.accounting import check_accounting, read_items
from support.cli import clean_env, invcrawl
from support.crawl import wait_for
from support.httpserver import StaticServer, serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CRAWL = "refreshed"
FUNCS = {  # page -> function name -> docstring
    "alpha": {"parse": "Parse a config text.", "dump": "Write a config text."},
    "beta": {"connect": "Open a connection.", "close": "Close a connection."},
    "gamma": {"scale": "Scale a number.", "clamp": "Clamp a number."},
}


def write_sources(src: Path, funcs: dict[str, dict[str, str]]) -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text('project = "refreshed"\nversion = release = "1.0"\n')
    pages = "\n".join(f"   {page}" for page in funcs)
    (src / "index.rst").write_text(f"Refreshed\n=========\n\n.. toctree::\n\n{pages}\n")
    for page, functions in funcs.items():
        body = [f"{page.title()}\n{'=' * len(page)}\n", f".. py:module:: {page}\n"]
        body.append(f"The {page} module.\n")
        for name, doc in functions.items():
            body.append(f".. py:function:: {name}(value)\n\n   {doc}\n")
        (src / f"{page}.rst").write_text("\n".join(body))


def build(src: Path, out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out)],
        check=True,
        capture_output=True,
    )


def crawl(server: RedisServer, http: StaticServer, tmp: Path, *extra: str) -> Any:
    args = ["crawl", http.url, "--redis", server.url, "--crawl-id", CRAWL, "--consumers", "2"]
    result = invcrawl(*args, "-o", str(tmp / "out.jsonl"), "--progress", "none", *extra, cwd=tmp)
    assert result.code == 0, result.stderr[-3000:]
    return result


def changes(server: RedisServer, tmp: Path, since: str = "0") -> tuple[list[dict[str, Any]], str]:
    result = invcrawl(
        "changes", "--redis", server.url, "--crawl-id", CRAWL, "--since", since, cwd=tmp
    )
    assert result.code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line]
    return events, result.stderr.rsplit("--since ", 1)[1].strip()


def page_statuses(http: StaticServer, since: int) -> Counter[int]:
    return Counter(r.status for r in http.log[since:] if r.path.endswith(".html"))


def stream_length(server: RedisServer) -> int:
    client = redis.Redis.from_url(server.url)
    try:
        return int(client.xlen(CrawlKeys(CRAWL).items))
    finally:
        client.close()


def live_keys(tmp: Path) -> set[str]:
    lines = (tmp / "out.jsonl").read_text().splitlines()
    return {json.loads(line)["key"] for line in lines if line}


def build_site(tmp_path: Path) -> tuple[Path, Path]:
    """The site of FUNCS: its sources and its HTML, built by Sphinx."""
    src, html = tmp_path / "src", tmp_path / "html"
    write_sources(src, FUNCS)
    build(src, html)
    return src, html


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    return build_site(tmp_path)


def test_unchanged_then_edited_removed_added(site: tuple[Path, Path], tmp_path: Path) -> None:
    src, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html, validators="etag") as http:
        crawl(server, http, tmp_path)
        first = live_keys(tmp_path)
        assert {"py:function:alpha.parse", "py:function:gamma.clamp"} <= first
        events, cursor = changes(server, tmp_path)
        assert {e["event"] for e in events} == {"added"} and len(events) == len(first)

        # 1. Nothing changed: every page answers 304, no stream entry, no event.
        mark, length = len(http.log), stream_length(server)
        result = crawl(server, http, tmp_path, "--refresh")
        assert page_statuses(http, mark) == Counter({304: len(FUNCS) + 1}), http.log[mark:]
        assert stream_length(server) == length
        assert changes(server, tmp_path, cursor)[0] == []
        assert live_keys(tmp_path) == first
        assert "added 0, changed 0, removed 0" in result.stderr

        # 2. One docstring edited: only that function (and texts of its page) change.
        edited = {**FUNCS, "beta": {**FUNCS["beta"], "close": "Close a connection for good."}}
        write_sources(src, edited)
        build(src, html)
        crawl(server, http, tmp_path, "--refresh")
        events, cursor = changes(server, tmp_path, cursor)
        changed = {e["key"] for e in events}
        assert "py:function:beta.close" in changed
        assert {e["event"] for e in events} == {"changed"}
        assert all(e["item"]["url"].split("#")[0].endswith("beta.html") for e in events), changed
        assert not any(
            k.startswith("py:function:") and k != "py:function:beta.close" for k in changed
        )
        close = next(e for e in events if e["key"] == "py:function:beta.close")
        assert close["item"]["doc"] == "Close a connection for good."

        # 3. A function removed: exactly one tombstone; export leaves it out.
        removed = {**edited, "gamma": {"scale": FUNCS["gamma"]["scale"]}}
        write_sources(src, removed)
        build(src, html)
        crawl(server, http, tmp_path, "--refresh")
        events, cursor = changes(server, tmp_path, cursor)
        gone = [e for e in events if e["event"] == "removed"]
        assert [e["key"] for e in gone] == ["py:function:gamma.clamp"]
        assert gone[0]["item"] == {"key": "py:function:gamma.clamp", "status": "removed"}
        assert "py:function:gamma.clamp" not in live_keys(tmp_path)

        # 4. A function added: one `added` event for it.
        added = {**removed, "alpha": {**FUNCS["alpha"], "merge": "Merge two configs."}}
        write_sources(src, added)
        build(src, html)
        crawl(server, http, tmp_path, "--refresh")
        events, _ = changes(server, tmp_path, cursor)
        assert [e["key"] for e in events if e["event"] == "added"] == ["py:function:alpha.merge"]
        assert not [e for e in events if e["event"] == "removed"]

        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            acc = check_accounting(client, CRAWL)
            assert acc.ok, acc
            items = read_items(client, CRAWL)
            assert sum(1 for i in items if i.kind == "removed") == 1
        finally:
            client.close()
        assert live_keys(tmp_path) == (first - {"py:function:gamma.clamp"}) | {
            "py:function:alpha.merge"
        }


def test_server_without_validators_body_hash_keeps_a_touched_site_silent(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    src, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html, validators="none") as http:
        crawl(server, http, tmp_path)
        _, cursor = changes(server, tmp_path)
        length = stream_length(server)
        time.sleep(1.1)
        build(src, html)  # every file rewritten, same bytes
        mark = len(http.log)
        result = crawl(server, http, tmp_path, "--refresh")
        assert page_statuses(http, mark) == Counter({200: len(FUNCS) + 1})
        assert stream_length(server) == length
        assert changes(server, tmp_path, cursor)[0] == []
        assert f"pages unchanged {len(FUNCS) + 1}, fetched 0" in result.stderr

        forced = crawl(server, http, tmp_path, "--refresh", "--force")
        assert f"pages unchanged 0, fetched {len(FUNCS) + 1}" in forced.stderr
        assert stream_length(server) == length  # fetched again, items unchanged


def test_consumer_sigkilled_during_a_refresh_loses_and_duplicates_nothing(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    src, html = site
    slow: list[bool] = []

    def fault(path: str) -> str | None:
        return "delay:700" if slow and path.endswith(".html") else None

    with RedisServer(tmp_path / "redis") as server, serve(html, fault, validators="etag") as http:
        crawl(server, http, tmp_path)
        _, cursor = changes(server, tmp_path)
        write_sources(src, {**FUNCS, "beta": {"connect": "Open a new connection."}})
        build(src, html)
        slow.append(True)
        argv = [sys.executable, "-m", "invcrawl", "crawl", http.url, "--redis", server.url]
        argv += ["--crawl-id", CRAWL, "--consumers", "2", "--refresh", "--progress", "lines"]
        argv += ["-o", str(tmp_path / "out.jsonl"), "--lease", "2"]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            # The victim is a consumer holding a lease (its pid is part of its fencing
            # tokens), i.e. one with a page in flight: the first consumer to start may
            # have found nothing to claim and ended before the kill.
            killed = wait_for(lambda: _kill_a_lease_holder(client, proc.pid), 60, "a lease")
            _, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
            client.close()
        assert killed
        assert proc.returncode == 0, err[-3000:]
        events, _ = changes(server, tmp_path, cursor)
        kinds = Counter((e["event"], e["key"]) for e in events)
        assert kinds[("removed", "py:function:beta.close")] == 1
        assert kinds[("changed", "py:function:beta.connect")] == 1
        assert all(n == 1 for n in kinds.values()), kinds
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            acc = check_accounting(client, CRAWL)
            assert acc.ok, acc
        finally:
            client.close()


def _kill_a_lease_holder(client: redis.Redis, parent: int) -> int | None:
    """SIGKILL a child `consume` process that holds a lease; its pid, or None if none
    does (yet, or any longer: it may end between the read and the kill)."""
    tokens = client.hvals(CrawlKeys(CRAWL).lease)
    for pid in _children(parent):
        if b"consume" in _cmdline(pid) and any(f"-{pid}-" in t for t in tokens):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            return pid
    return None


def _children(pid: int) -> list[int]:
    pgrep = ["pgrep", "-P", str(pid)]
    out = subprocess.run(pgrep, check=False, capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_changes_cli_errors_are_one_line(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "redis") as server:
        bad = invcrawl("changes", "--redis", server.url, "--since", "yesterday", cwd=tmp_path)
        assert bad.code == 2 and "cursor" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_every_refreshes_on_its_period_and_status_shows_it(
    site: tuple[Path, Path], tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    """`crawl --every 3s`: a first crawl, then refresh rounds on the period, the next one
    announced in the crawl's meta and in `status`; SIGINT ends it with 130, SIGTERM with
    143 and SIGHUP with 129 between two rounds (after a round's event loop has closed,
    which once left SIGTERM to kill the process outright)."""
    _, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html, validators="etag") as http:
        argv = [sys.executable, "-m", "invcrawl", "crawl", http.url, "--redis", server.url]
        argv += ["--crawl-id", CRAWL, "--consumers", "1", "--every", "3s", "--progress", "none"]
        argv += ["-o", str(tmp_path / "out.jsonl")]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            meta = CrawlKeys(CRAWL).meta
            wait_for(lambda: int(client.hget(meta, "round") or 0) >= 2, 60, "two refresh rounds")

            def between_rounds() -> bool:
                return bool(
                    client.hget(meta, "next_refresh_at")
                    and client.hget(meta, "state") == "finished"
                )

            def status_between_rounds() -> str | None:
                # On a loaded machine `status` may start after the next round began (a round
                # every 3 s), and a round under way announces no next one: asked again.
                wait_for(between_rounds, 30, "the next refresh")
                out = invcrawl("status", "--redis", server.url, "--crawl-id", CRAWL, cwd=tmp_path)
                return out.stdout if " next in " in out.stdout else None

            status = wait_for(status_between_rounds, 90, "status between two rounds")
            assert "refresh  round" in status, status
            wait_for(between_rounds, 30, "the next refresh")
            proc.send_signal(stop)
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
            client.close()
    assert proc.returncode == code, err[-2000:]
    assert err.count("next refresh in") >= 2
    assert live_keys(tmp_path) >= {"py:function:alpha.parse"}


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_every_auto_waiting_for_its_next_round_stops_on_a_signal(
    site: tuple[Path, Path], tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    """`crawl --every auto` between two rounds ends on SIGTERM and SIGHUP as `--every 3s`
    does (exit 128 + the signal, no refresh announced any more); SIGHUP once killed it."""
    _, html = site
    with RedisServer(tmp_path / "redis") as server, serve(html, validators="etag") as http:
        argv = [sys.executable, "-m", "invcrawl", "crawl", http.url, "--redis", server.url]
        argv += ["--crawl-id", CRAWL, "--consumers", "1", "--every", "auto", "--progress", "none"]
        argv += ["--refresh-min", "1h", "--refresh-max", "2h", "-o", str(tmp_path / "out.jsonl")]
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        meta = CrawlKeys(CRAWL).meta
        try:
            wait_for(lambda: client.hget(meta, "next_refresh_at"), 60, "the next round's time")
            proc.send_signal(stop)
            _, err = proc.communicate(timeout=60)
            assert not client.hget(meta, "next_refresh_at")
        finally:
            proc.kill()
            client.close()
    assert proc.returncode == code, err[-2000:]
    assert "Traceback" not in err


def test_produce_every_refreshes_inside_one_long_running_producer(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    """Compose's scheduled refresh: `produce --every 2s` stays up beside a running
    consumer. Its first round produces the crawl; each later round, in the same process,
    re-checks it (every page answers 304, no event); an edit published between two rounds
    comes out as `changed` events for that page only. SIGTERM ends it with 143 and no
    refresh announced any more."""
    src, html = site
    edited_html = tmp_path / "edited"
    write_sources(src, {**FUNCS, "beta": {**FUNCS["beta"], "close": "Close it for good."}})
    build(src, edited_html)
    with RedisServer(tmp_path / "redis") as server, serve(html, validators="etag") as http:
        python = [sys.executable, "-m", "invcrawl"]
        consumer = subprocess.Popen(
            [*python, "consume", "--redis", server.url],
            cwd=tmp_path,
            env=clean_env(),
            stderr=subprocess.DEVNULL,
        )
        argv = [*python, "produce", http.url, "--redis", server.url, "--crawl-id", CRAWL]
        producer = subprocess.Popen(
            [*argv, "--every", "2s"],
            cwd=tmp_path,
            env=clean_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        client = redis.Redis.from_url(server.url, decode_responses=True)
        meta = CrawlKeys(CRAWL).meta

        def finished_round(number: int) -> bool:
            state, done = client.hmget(meta, ["state", "round"])
            return state == "finished" and int(done or 0) >= number

        try:
            wait_for(lambda: finished_round(0), 60, "the first crawl")
            assert client.hget(meta, "round") in (None, "0")  # not refreshed yet
            mark = len(http.log)
            _, cursor = changes(server, tmp_path)
            wait_for(lambda: finished_round(1), 30, "the first refresh round")
            # Every page revalidated (304) once per round. On a loaded machine more than one
            # round may pass before the log is read (a round every 2 s, `changes` above takes
            # its time), and the last may be under way: each page asked k or k + 1 times.
            pages = [r for r in http.log[mark:] if r.path.endswith(".html")]
            assert {r.status for r in pages} == {304}, http.log[mark:]
            per_page = Counter(r.path for r in pages)
            assert len(per_page) == len(FUNCS) + 1, per_page
            assert max(per_page.values()) - min(per_page.values()) <= 1, per_page
            assert changes(server, tmp_path, cursor)[0] == []
            wait_for(lambda: client.hget(meta, "next_refresh_at"), 10, "the next refresh time")
            # Publish the rebuilt site at once (a rebuild in place could straddle a round).
            html.rename(tmp_path / "previous")
            edited_html.rename(html)
            wait_for(lambda: finished_round(2), 30, "the second refresh round")
            events, _ = changes(server, tmp_path, cursor)
            assert {e["event"] for e in events} == {"changed"}, events
            assert "py:function:beta.close" in {e["key"] for e in events}
            assert all(e["item"]["url"].split("#")[0].endswith("beta.html") for e in events)
            assert producer.poll() is None  # one process all along
            producer.send_signal(signal.SIGTERM)
            _, err = producer.communicate(timeout=60)
            assert producer.returncode == 143, err[-2000:]
            assert err.count("next refresh in") >= 2, err[-2000:]
            assert client.hget(meta, "next_refresh_at") is None
            acc = check_accounting(client, CRAWL)
            assert acc.ok, acc
        finally:
            producer.kill()
            consumer.terminate()
            consumer.wait(30)
            client.close()
