"""Messages that were wrong (issue 47.6), each reproduced as a newcomer met it: Ctrl-C
while the inventory is read hinted `export` of a crawl that did not exist; `status` of
an interrupted crawl said "[running] ETA 45s consumers 0"; a crawl's summary gave the
whole run's time; a folder holding html/objects.inv got no "did you mean"; failed crawls
stayed listed with no way to forget them at once."""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time
from pathlib import Path

import redis

from invcrawl.common.site import crawl_id_for
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import RedisServer
from support.cli import clean_env, invcrawl
from support.crawl import Proc, Throttle, build_site, wait_for
from support.httpserver import serve


def start(tmp_path: Path, name: str, *args: str) -> Proc:
    argv = [sys.executable, "-m", "invcrawl", *args]
    return Proc(name, argv, tmp_path / f"{name}.log", clean_env(), tmp_path)


def test_ctrl_c_while_reading_the_inventory_hints_no_export(tmp_path: Path) -> None:
    build_site(tmp_path / "www" / "slowinv", pages=2)
    asked, gate = threading.Event(), threading.Event()

    def hold(path: str) -> bool:  # the inventory answers only once the test lets it
        if path.endswith("objects.inv"):
            asked.set()
            gate.wait(60)
        return False

    with (
        RedisServer(tmp_path / "redis") as server,
        serve(tmp_path / "www", Throttle(only=hold)) as http,
    ):
        url = f"{http.url}slowinv/"
        crawl = start(tmp_path, "crawl", "crawl", url, "--redis", server.url, "--consumers", "1",
                      "--progress", "lines")  # fmt: skip
        try:
            wait_for(asked.is_set, 60, "the inventory to be asked for", diagnose=crawl.output)
            crawl.signal(signal.SIGINT)
            code = crawl.wait(60)
        finally:
            gate.set()
        out = crawl.output()
        assert code == 130, out
        crawl_id = crawl_id_for(url)
        assert f"crawl {crawl_id} is not finished and no item is stored yet" in out, out
        assert "invcrawl export" not in out, out


def test_interrupted_crawl_is_paused_and_summaries_time_their_crawl(tmp_path: Path) -> None:
    """One run of two crawls: `fast` finishes while every page of `held` waits; then the
    run is interrupted (status: paused, ETA -), resumed, and each summary gives its
    crawl's own time (from Redis), not the run's."""
    build_site(tmp_path / "www" / "fast", pages=2)
    build_site(tmp_path / "www" / "held", pages=4)
    gate = threading.Event()

    def hold(path: str) -> bool:
        if path.startswith("/held/") and path.endswith(".html") and "mod0000" not in path:
            gate.wait(120)
        return False

    with (
        RedisServer(tmp_path / "redis") as server,
        serve(tmp_path / "www", Throttle(only=hold)) as http,
    ):
        fast, held = f"{http.url}fast/", f"{http.url}held/"
        ids = crawl_id_for(fast), crawl_id_for(held)
        client = redis.Redis.from_url(server.url, decode_responses=True)

        def state(crawl_id: str) -> str | None:
            value = client.hget(CrawlKeys(crawl_id).meta, "state")
            return str(value) if value is not None else None

        def done(crawl_id: str) -> int:
            return int(client.hget(CrawlKeys(crawl_id).stats, "pages_done") or 0)

        argv = ["crawl", fast, held, "--redis", server.url, "--consumers", "1",
                "--out-dir", str(tmp_path / "out"), "--progress", "lines"]  # fmt: skip
        first = start(tmp_path, "first", *argv)
        try:
            wait_for(lambda: state(ids[0]) == "finished" and done(ids[1]) >= 1, 120,
                     "fast to finish and held to start", diagnose=first.output)  # fmt: skip
            first.signal(signal.SIGINT)
            gate.set()  # (the pages in flight are released once it stopped)
            assert first.wait(60) == 130, first.output()
        finally:
            gate.set()
        status = invcrawl("status", "--crawl-id", ids[1], "--redis", server.url, cwd=tmp_path)
        assert status.code == 0, status.stderr
        assert status.stdout.startswith(f"crawl {ids[1]}  [paused]"), status.stdout
        assert "ETA -" in status.stdout and "consumers 0" in status.stdout, status.stdout
        fleet = invcrawl("status", "--redis", server.url, cwd=tmp_path).stdout
        row = next(line.split() for line in fleet.splitlines() if line.startswith(ids[1]))
        assert row[1] == "paused" and row[-1] == "-", fleet
        as_json = json.loads(invcrawl("status", "--crawl-id", ids[1], "--json", "--redis",
                                      server.url, cwd=tmp_path).stdout)  # fmt: skip
        assert as_json["state"] == "running" and as_json["consumers_alive"] == []  # as stored

        gate.clear()  # the resumed run: held waits again until fast's summary is out
        second_started_ms = time.time() * 1000
        second = start(tmp_path, "second", *argv)
        try:
            wait_for(lambda: done(ids[1]) >= 2 or state(ids[1]) == "finished", 120,
                     "the resumed run to serve held", diagnose=second.output)  # fmt: skip
            gate.set()
            assert second.wait(120) == 0, second.output()
        finally:
            gate.set()
        out = second.output()
        run = re.search(r"2 of 2 crawls finished in \S+ \((\d+\.\d)s\)", out)
        assert run, out
        for crawl_id in ids:
            meta = client.hgetall(CrawlKeys(crawl_id).meta)
            own = (int(meta["finished_at"]) - int(meta["created_at"])) / 1000
            said = re.search(rf"crawl {re.escape(crawl_id)} finished in \S+ \((\d+\.\d)s\)", out)
            assert said and float(said[1]) == round(own, 1), (crawl_id, own, out)
        # fast was finished by the first run, before this one started: the time this run
        # prints for it (checked above against Redis) cannot be this run's own
        assert int(client.hget(CrawlKeys(ids[0]).meta, "finished_at")) < second_started_ms
        client.close()


def test_a_folder_holding_html_is_asked_about(tmp_path: Path) -> None:
    package = tmp_path / "usr" / "share" / "doc" / "pkg"
    build_site(package / "html", pages=1)
    for command in ("crawl", "inventory"):
        result = invcrawl(command, str(package), cwd=tmp_path)
        assert result.code == 2, (command, result)
        assert result.error_lines == [
            f"invcrawl: error: no objects.inv in {package}; did you mean {package}/html ?"
        ], (command, result.stderr)
    # the control: the folder meant is read
    shown = invcrawl("inventory", str(package / "html"), cwd=tmp_path)
    assert shown.code == 0 and "objects.inv" in shown.stdout, shown.stderr


def test_forget_failed_forgets_every_failed_crawl(tmp_path: Path) -> None:
    build_site(tmp_path / "www" / "good", pages=1)
    with RedisServer(tmp_path / "redis") as server, serve(tmp_path / "www") as http:
        typos = [f"{http.url}gdoo/", f"{http.url}godo/"]
        crawled = invcrawl("crawl", f"{http.url}good/", *typos, "--redis", server.url,
                           "--out-dir", "out", "--progress", "none", "--consumers", "1",
                           cwd=tmp_path)  # fmt: skip
        assert crawled.code == 1, crawled.stderr  # two of three failed
        failed = sorted(crawl_id_for(url) for url in typos)
        status = invcrawl("status", "--redis", server.url, cwd=tmp_path)
        assert "`invcrawl forget --failed --yes` every failed crawl" in status.stdout, status
        forgot = invcrawl("forget", "--failed", "--yes", "--redis", server.url, cwd=tmp_path)
        assert forgot.code == 0, forgot.stderr
        for crawl_id in failed:
            assert f"crawl {crawl_id} forgotten" in forgot.stderr + forgot.stdout, forgot
        after = invcrawl("status", "--redis", server.url, cwd=tmp_path).stdout
        assert crawl_id_for(f"{http.url}good/") in after and "failed" not in after, after
        again = invcrawl("forget", "--failed", "--yes", "--redis", server.url, cwd=tmp_path)
        assert again.code == 0 and "no failed crawl to forget" in again.stderr, again
        # without an id or --failed: one line, as before
        bare = invcrawl("forget", "--yes", "--redis", server.url, cwd=tmp_path)
        assert bare.code == 2 and "(or --failed)" in bare.stderr, bare
