"""Two ``export --follow`` on one consumer group (issue 36): Redis gives each entry to one
of them, so each output would hold a share. That is warned about, in one line, by the
follower that starts second; a follower started right after another was SIGKILLed is
not (the dead one is not taken for a live one: frontier/follow.py looks twice), and it
adopts what the dead one had received and not written."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.frontier.follow import LOOK_AGAIN_S
from invcrawl.frontier.keys import CRAWLS, CrawlKeys
from invcrawl.frontier.retry import reconnect
from support.cli import clean_env
from support.crawl import Proc, wait_for

WARNING = "already has an active follower"
KEYS = CrawlKeys("shared")


def add(client: redis.Redis, start: int, count: int) -> list[str]:
    keys = []
    for n in range(start, start + count):
        item = {"key": f"py:function:f{n}", "checksum": f"{n:012d}"}
        fields = {"key": item["key"], "sum": item["checksum"], "kind": "new", "task": "t"}
        client.xadd(KEYS.items, {**fields, "data": json.dumps(item)})
        keys.append(item["key"])
    return keys


def written(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["key"] for line in path.read_text().splitlines() if line]


def test_a_second_follower_on_a_group_is_warned(redis_url: str, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_url)
    client.hset(KEYS.meta, mapping={"slots": 1, "state": "finished"})
    client.sadd(CRAWLS, "shared")
    procs: list[Proc] = []

    def follower(name: str) -> Proc:
        argv = [sys.executable, "-m", "invcrawl", "export", "--follow", "--crawl-id", "shared",
                "-o", f"{name}.jsonl", "--redis", redis_url]  # fmt: skip
        proc = Proc(name, argv, tmp_path / f"{name}.log", clean_env(), tmp_path)
        procs.append(proc)
        return proc

    def looked_twice(proc: Proc, out: Path, start: int) -> list[str]:
        """Wait until ``proc`` wrote an item added after its second look at the group
        was due: it has looked (the look comes before each read)."""
        wait_for(lambda: written(out), 60, f"{proc.name} to write", diagnose=proc.tail)
        time.sleep(LOOK_AGAIN_S + 0.5)
        keys = add(client, start, 5)
        wait_for(lambda: set(keys) <= set(written(out)) or not proc.alive, 60, "the new items")
        assert proc.alive, proc.tail()
        return keys

    try:
        add(client, 0, 20)
        first = follower("first")
        looked_twice(first, tmp_path / "first.jsonl", 100)
        second = follower("second")
        wait_for(lambda: WARNING in second.output(), 60, "the warning", diagnose=second.tail)
        (line,) = [ln for ln in second.output().splitlines() if WARNING in ln]
        assert line.startswith("invcrawl: warning: group export of crawl shared")
        assert "give each follower its own --group" in line
        assert WARNING not in first.output()  # the first one was alone when it started

        # The second stops; the first is SIGKILLed, and a third starts at once: it does
        # not take the dead one for a live follower, and writes what it left.
        second.signal(signal.SIGINT)
        assert second.wait(30) == 130, second.tail()
        first.kill()
        first.wait(10)
        add(client, 200, 10)
        # a dead follower's received, unwritten entries: these are adopted by the third
        client.xreadgroup("export", "gone-host-1-abcd-export", {KEYS.items: ">"}, count=4)
        third = follower("third")
        looked_twice(third, tmp_path / "third.jsonl", 300)
        assert WARNING not in third.output(), third.output()
        every = {f"py:function:f{n}" for r in ((0, 20), (100, 5), (200, 10), (300, 5))
                 for n in range(r[0], r[0] + r[1])}  # fmt: skip
        outputs = {name: written(tmp_path / f"{name}.jsonl") for name in ("first", "second")}
        got = outputs["first"] + outputs["second"] + written(tmp_path / "third.jsonl")
        assert set(got) == every
        third.signal(signal.SIGINT)
        assert third.wait(30) == 130, third.tail()
        (group,) = client.xinfo_groups(KEYS.items)
        assert group["pending"] == 0
    finally:
        for proc in procs:
            if proc.alive:
                proc.close()
        client.close()


def test_a_follower_stopped_after_writing_acknowledges_the_batch(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (SIGTERM cancels the job, again every second: invcrawl/scope.py) after a
    batch is fsynced and acknowledged but before what every group holds is trimmed,
    ``export --follow`` finishes on the way out: nothing is left pending for the next
    run to write twice, and ``--retain-items exported`` trims the batch."""
    from conftest import run

    from invcrawl.frontier import follow
    from invcrawl.frontier.connection import connect
    from invcrawl.frontier.session import Frontier
    from invcrawl.output.export import Follower
    from invcrawl.output.files import appending

    client = redis.Redis.from_url(redis_url)
    keys = CrawlKeys("stopped")
    client.hset(keys.meta, mapping={"slots": 1, "state": "finished", "retain_items": "exported"})
    client.sadd(CRAWLS, "stopped")
    for n in range(5):
        item = {"key": f"py:function:g{n}", "checksum": f"{n:012d}"}
        fields = {"key": item["key"], "sum": item["checksum"], "kind": "new", "task": "t"}
        client.xadd(keys.items, {**fields, "data": json.dumps(item)})

    trim = follow.trim_exported
    stops: list[int] = []

    async def stopped_before_trimming(session: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        if not stops:  # the signal lands here, once, and its cancellation is repeated

            def cancel() -> None:
                if not task.done():
                    task.cancel()
                    asyncio.get_running_loop().call_later(0.05, cancel)

            stops.append(1)
            cancel()
            await asyncio.sleep(0)
        return await trim(session)

    monkeypatch.setattr(follow, "trim_exported", stopped_before_trimming)

    async def job() -> int:
        connection = connect(redis_url)
        follower = Follower(reconnect("export --follow"), lambda _: None)
        try:
            with appending(tmp_path / "out.jsonl") as out:
                return await follower.follow(Frontier(connection).crawl("stopped"), out, "export")
        finally:
            await connection.aclose()

    assert run(job()) == 5
    assert stops == [1]
    assert len(written(tmp_path / "out.jsonl")) == 5
    assert client.xpending(keys.items, "export")["pending"] == 0
    assert client.xlen(keys.items) == 0  # acknowledged by every group: trimmed
    assert int(client.hget(keys.stats, "items_trimmed") or 0) == 5
