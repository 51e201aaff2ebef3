"""Long-running readers under Redis faults (issue 36): ``export --follow`` (of one crawl
and of every crawl), ``changes --follow`` (the same two), ``status --watch`` and the
dashboard run as processes beside a writer that appends items to two crawls, while
Redis is SIGKILLed and restarted from its AOF, every client connection is dropped
(``CLIENT KILL``), or a crawl is forgotten. Every reader must stay alive and go on
reading, say what happened in one line (once per outage, not once per retry), and lose
and repeat nothing: each output holds exactly the entries of the streams it follows,
once each, in stream order (``frontier/retry.py``, ``frontier/follow.py``).

Bounded by progress: each wait fails only when its reader stops moving for ``STALL``
seconds; nothing here is timed."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.frontier.keys import CRAWLS, CrawlKeys
from invcrawl.localredis.server import RedisServer, free_port
from support.cli import clean_env, invcrawl
from support.crawl import Proc, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.timeout(600)]

STALL = 60.0
NOTE = "Redis unavailable ("
FORGOTTEN = "was forgotten"


class Writer:
    """Appends one item to each of its crawls every few milliseconds, from a thread, as
    committing consumers would; through an outage it waits and writes on. What the
    streams hold in the end is the truth the readers are checked against (a write whose
    reply was lost may or may not be there: either way it is in the stream or not)."""

    def __init__(self, url: str, crawls: tuple[str, ...]) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=5)
        self.crawls = list(crawls)
        self.written = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        for crawl in crawls:
            self.create(crawl)

    def create(self, crawl: str) -> None:
        keys = CrawlKeys(crawl)
        # "running": status --watch never ends on its own
        self.client.hset(keys.meta, mapping={"slots": 1, "state": "running"})
        self.client.sadd(CRAWLS, crawl)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            for crawl in list(self.crawls):
                item = {"key": f"py:function:{crawl}.f{n}", "checksum": f"{n:012d}", "crawl": crawl}
                fields = {"key": item["key"], "sum": item["checksum"], "kind": "new", "task": "t"}
                try:
                    self.client.xadd(CrawlKeys(crawl).items, {**fields, "data": json.dumps(item)})
                    self.written += 1
                except redis.RedisError:
                    time.sleep(0.05)  # Redis down: the next one will tell
            n += 1
            time.sleep(0.01)

    def start(self) -> Writer:
        self._thread.start()
        return self

    def more(self, count: int) -> None:
        """Wait until ``count`` more items were written (Redis is up and taking them)."""
        target = self.written + count
        wait_for(lambda: self.written >= target, STALL, f"{count} more items written")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def entries(self, crawl: str) -> list[tuple[str, str]]:
        """(entry id, item key) of every entry of ``crawl``'s stream, in order."""
        rows = self.client.xrange(CrawlKeys(crawl).items)
        return [(i.decode(), f[b"key"].decode()) for i, f in rows]


@dataclass
class Readers:
    """The reader processes, their outputs in ``work``."""

    url: str
    work: Path
    procs: dict[str, Proc] = field(default_factory=dict)
    port: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # the dashboard's SSE

    def start(self, name: str, *args: str) -> Proc:
        argv = [sys.executable, "-m", "invcrawl", *args, "--redis", self.url]
        proc = Proc(name, argv, self.work / f"{name}.log", clean_env(), self.work)
        self.procs[name] = proc
        return proc

    def output(self, name: str) -> list[dict[str, Any]]:
        path = self.work / f"{name}.jsonl"
        if not path.exists():
            return []
        # (a line being written may be cut: only whole lines count)
        text = path.read_text()
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            lines.pop()
        return [json.loads(line) for line in lines]

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.alive:
                proc.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    redis_server = RedisServer(tmp_path / "redis", fsync="always")
    redis_server.start()
    yield redis_server
    redis_server.stop()


@pytest.fixture
def readers(server: RedisServer, tmp_path: Path) -> Iterator[Readers]:
    work = tmp_path / "work"
    work.mkdir()
    running = Readers(server.url, work)
    try:
        yield running
    finally:
        running.close()


def follow(readers: Readers, name: str, crawl: str) -> Proc:
    return readers.start(
        name, "export", "--crawl-id", crawl, "--follow", "-o", f"{name}.jsonl", "--group", name
    )


def start_all(readers: Readers) -> None:
    """Every long-running reader, each writing to its own file (or log)."""
    # (each its own group: followers of one group share the items)
    readers.start("export-all", "export", "--follow", "-o", "export-all.jsonl", "--group", "all")
    follow(readers, "export-a", "a")
    readers.start("changes-all", "changes", "--follow", "-o", "changes-all.jsonl")
    readers.start("changes-a", "changes", "--crawl-id", "a", "--follow", "-o", "changes-a.jsonl")
    readers.start("watch", "status", "--watch", "--json")
    readers.port = free_port()
    readers.start("dashboard", "dashboard", "--port", str(readers.port))
    wait_for(
        lambda: "invcrawl dashboard: http" in readers.procs["dashboard"].output(),
        STALL,
        "the dashboard",
        diagnose=readers.procs["dashboard"].tail,
    )
    threading.Thread(target=listen, args=(readers,), daemon=True).start()


def listen(readers: Readers) -> None:
    """The dashboard's server-sent events, as a page receives them (one connection,
    kept open through the faults)."""
    url = f"http://127.0.0.1:{readers.port}/api/events"
    with urllib.request.urlopen(url, timeout=60) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                readers.events.append(json.loads(line[6:]))


def caught_up(
    readers: Readers, writer: Writer, crawls: tuple[str, ...] = ("a", "b"), exact: bool = True
) -> None:
    """Wait until every follower's output holds every entry the streams hold now, once
    each, changes in stream order; ``exact``: and nothing else (the writer stopped).
    Bounded by progress: each wait fails after STALL seconds."""
    streams = {crawl: writer.entries(crawl) for crawl in crawls}
    ids = {crawl: [i for i, _ in entries] for crawl, entries in streams.items()}
    keys = {crawl: sorted(k for _, k in entries) for crawl, entries in streams.items()}

    def exported(rows: list[dict[str, Any]], crawl: str) -> bool:
        got = sorted(r["key"] for r in rows if r["crawl"] == crawl)
        assert len(got) == len(set(got)), f"an item of {crawl} written twice"
        return got == keys[crawl] if exact else set(keys[crawl]) <= set(got)

    def changed(rows: list[dict[str, Any]], crawl: str) -> bool:
        got = [r["cursor"] for r in rows if r.get("crawl", crawl) == crawl]
        return got == ids[crawl] if exact else got[: len(ids[crawl])] == ids[crawl]

    checks = {
        "export-all": lambda rows: all(exported(rows, c) for c in crawls),
        "export-a": lambda rows: exported(rows, "a"),
        "changes-all": lambda rows: all(changed(rows, c) for c in crawls),
        "changes-a": lambda rows: changed(rows, "a"),
    }
    for name, check in checks.items():
        proc = readers.procs[name]

        def matches(name: str = name, check: Any = check, proc: Proc = proc) -> bool:
            assert proc.alive, f"{name} exited:\n{proc.tail()}"
            return bool(check(readers.output(name)))

        wait_for(matches, STALL, f"{name} to catch up", interval=0.2, diagnose=proc.tail)


def notes(proc: Proc, text: str = NOTE) -> list[str]:
    return [line for line in proc.output().splitlines() if text in line]


def watch_lines(readers: Readers) -> int:
    return sum(1 for line in readers.procs["watch"].output().splitlines() if line.startswith("{"))


def check_alive(readers: Readers) -> None:
    for name, proc in readers.procs.items():
        assert proc.alive, f"{name} exited:\n{proc.tail()}"
        assert "Traceback" not in proc.output(), f"{name}:\n{proc.output()[-3000:]}"


def still_reading(readers: Readers, writer: Writer) -> None:
    """After the fault: more items reach every follower; status --watch and the
    dashboard go on refreshing, with no error in the dashboard's snapshots."""
    shown, sent = watch_lines(readers), len(readers.events)
    writer.more(40)
    caught_up(readers, writer, exact=False)
    wait_for(lambda: watch_lines(readers) > shown + 1, STALL, "status --watch to refresh")
    wait_for(
        lambda: len(readers.events) > sent + 1 and not readers.events[-1].get("error"),
        STALL,
        "the dashboard's events to go on",
        diagnose=lambda: json.dumps(readers.events[-1:])[:2000],
    )
    check_alive(readers)


def stop_all(readers: Readers) -> None:
    """SIGINT: each ends as a stopped reader does (130), the cursor said by changes."""
    for proc in readers.procs.values():
        proc.signal(signal.SIGINT)
    for name, proc in readers.procs.items():
        assert proc.wait(30) == 130, f"{name}:\n{proc.tail()}"
    assert "resume with --since a=" in readers.procs["changes-all"].output()


def test_readers_ride_out_a_redis_sigkill_and_restart(
    server: RedisServer, readers: Readers
) -> None:
    writer = Writer(server.url, ("a", "b")).start()
    try:
        start_all(readers)
        writer.more(60)
        caught_up(readers, writer, exact=False)
        writer.more(20)  # the readers busy when Redis dies
        server.kill()
        time.sleep(2.0)  # down long enough for every reader to notice
        server.start()
        still_reading(readers, writer)
    finally:
        writer.stop()
    caught_up(readers, writer)
    for name, proc in readers.procs.items():  # one line for the outage, whatever the retries
        assert len(notes(proc)) == 1, f"{name}:\n{proc.output()[-3000:]}"
    stop_all(readers)


def test_readers_ride_out_a_dropped_connection(server: RedisServer, readers: Readers) -> None:
    writer = Writer(server.url, ("a", "b")).start()
    killer = redis.Redis.from_url(server.url)
    try:
        start_all(readers)
        writer.more(60)
        caught_up(readers, writer, exact=False)
        writer.more(20)
        # every connection but this one: the followers' blocked reads among them
        dropped = killer.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert int(dropped) >= len(readers.procs)
        still_reading(readers, writer)
    finally:
        writer.stop()
        killer.close()
    caught_up(readers, writer)
    for name in ("export-all", "export-a", "changes-all", "changes-a"):
        proc = readers.procs[name]  # they were waiting on a blocked read: cut
        assert len(notes(proc)) == 1, f"{name}:\n{proc.output()[-3000:]}"
    for name in ("watch", "dashboard"):  # idle between two reads: reconnected unseen, or said
        assert len(notes(readers.procs[name])) <= 1, readers.procs[name].output()[-3000:]
    stop_all(readers)


def test_followers_ride_out_a_forgotten_crawl(server: RedisServer, readers: Readers) -> None:
    """`forget` of a crawl under followers of every crawl and of that crawl: each says so
    in one line and follows on (the others' items, all of them, once); the crawl crawled
    again under its id is followed again from its start."""
    writer = Writer(server.url, ("a", "b")).start()
    try:
        start_all(readers)
        readers.start("export-b", "export", "--crawl-id", "b", "--follow", "-o", "export-b.jsonl")
        readers.start(
            "changes-b", "changes", "--crawl-id", "b", "--follow", "-o", "changes-b.jsonl"
        )
        writer.more(60)
        caught_up(readers, writer, exact=False)
        writer.crawls.remove("b")
        time.sleep(0.2)  # the writer's last item of b is in
        before = writer.entries("b")
        wait_for(
            lambda: len(readers.output("export-b")) == len(before), STALL, "export-b to catch up"
        )
        forgot = invcrawl("forget", "b", "--yes", "--redis", server.url, cwd=readers.work)
        assert forgot.code == 0, forgot.stderr
        writer.more(40)
        caught_up(readers, writer, ("a",), exact=False)
        every = ("export-all", "changes-all", "export-b", "changes-b")
        for name in every:
            proc = readers.procs[name]
            wait_for(lambda proc=proc: notes(proc, FORGOTTEN), STALL, f"{name}'s note")
        # b's items up to the forget, once each, and a's, all of them, once each
        b_keys = sorted(k for _, k in before)
        assert sorted(r["key"] for r in readers.output("export-b")) == b_keys
        got_all = [r["key"] for r in readers.output("export-all")]
        assert len(got_all) == len(set(got_all))
        assert {k for k in got_all if ".f" in k and k.startswith("py:function:b.")} == set(b_keys)
        # b crawled again: its followers follow it from its start
        writer.create("b")
        writer.crawls.append("b")
        writer.more(40)
        writer.crawls.remove("b")
        time.sleep(0.2)
        again = sorted(b_keys + [k for _, k in writer.entries("b")])
        for name in ("export-b", "export-all"):
            wait_for(
                lambda name=name: (
                    sorted(r["key"] for r in readers.output(name) if r["crawl"] == "b") == again
                ),
                STALL,
                f"{name} to follow the crawl again",
                diagnose=readers.procs[name].tail,
            )
    finally:
        writer.stop()
    caught_up(readers, writer, ("a",))
    for name in every:
        assert len(notes(readers.procs[name], FORGOTTEN)) == 1, readers.procs[name].output()
    check_alive(readers)
    stop_all(readers)
