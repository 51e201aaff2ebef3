"""The script runner and the shared vocabulary, fast, on fakeredis (its Lua runs the real
scripts of frontier/lua): key bindings read from the scripts, one stale-layout answer,
the crawl state machine as the scripts implement it, and the item statuses and crawl
states that Python and Lua must agree on. The same scripts run against a real
redis-server in tests/integration."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import fakeredis
import pytest
from conftest import run

from invcrawl.common.extract.generators import GENERATORS
from invcrawl.common.items import LETTERS, STATUS_LETTER, ItemStatus
from invcrawl.common.tasks import Task, TaskEntry
from invcrawl.frontier import admin
from invcrawl.frontier.keys import CrawlKeys, HostKeys
from invcrawl.frontier.refresh import Refresh
from invcrawl.frontier.scripts import LUA_DIR, Scripts, StaleLayout, key_names, load, script_names
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.states import TRANSITIONS, CrawlState

TASK = Task(
    "0123456789abcdef", "http://x.test/p.html", (TaskEntry("f", "py", "function", 1, "f", "-"),)
)


def on_fakeredis(job: Callable[[CrawlSession, Any], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        client = fakeredis.FakeAsyncRedis(decode_responses=True)
        try:
            return await job(Frontier(client).crawl("c"), client)
        finally:
            await client.aclose()

    return run(main())


@pytest.mark.parametrize("name", script_names())
def test_every_script_binds_its_keys_to_named_locals(name: str) -> None:
    body = (LUA_DIR / f"{name}.lua").read_text()
    names = load(name).key_names
    assert names and len(set(names)) == len(names)
    # No script reads a fixed key positionally after binding it.
    for index in range(1, len(names) + 1):
        uses = re.findall(rf"KEYS\[{index}\]", body)
        assert len(uses) == 1, f"{name}.lua reads KEYS[{index}] outside its binding"
    # Its header documents the keys it binds, in order ("dlq:why" binds dlq_why).
    doc = body.split("-- KEYS", 1)[1].split("-- ARGV", 1)[0].replace("--", " ")
    documented = []
    for word in re.split(r"[\s,]+", doc.strip()):
        if word == "then":
            break
        documented.append(re.sub(r":<.*$", "", word).replace(":", "_"))
    assert documented[: len(names)] == list(names)


def test_key_names_need_contiguous_bindings() -> None:
    assert key_names("local a, b = KEYS[1], KEYS[2]\nlocal c =\n  KEYS[3]\n") == ("a", "b", "c")
    with pytest.raises(ValueError, match="not KEYS"):
        key_names("local a, b = KEYS[1], KEYS[3]\n")
    with pytest.raises(ValueError, match="uneven"):
        key_names("local a, b = KEYS[1]\n")


def test_every_fixed_key_is_bound_by_the_name_of_its_key() -> None:
    """A script's KEYS locals are the names of CrawlKeys / HostKeys, so callers bind them
    by name (``keys.bind("meta", ...)``); only per-slot keys are given by value, and the
    registry's ``active`` and change journal (``changed``, ``seq``), no crawl's or host's."""
    per_slot = {"inflight", "queue", "delayed"}
    for name in script_names():
        fixed = set(load(name).key_names)
        keys: Any = HostKeys("h") if name.startswith("host_") else CrawlKeys("c")
        named = fixed - per_slot - {"active", "changed", "seq"}
        assert keys.bind(*named).keys() == named, name
        assert per_slot & fixed <= {m for m in per_slot if callable(getattr(keys, m, None))}


def test_binding_an_unknown_or_repeated_key_is_refused() -> None:
    k = CrawlKeys("c")
    assert k.bind("meta", inflight=k.inflight(2)) == {
        "meta": "invcrawl:{c}:meta",
        "inflight": "invcrawl:{c}:inflight:2",
    }
    with pytest.raises(AttributeError, match="no key 'inflight'"):
        k.bind("inflight")  # per slot: given by value
    with pytest.raises(AttributeError, match="no key 'crawl_id'"):
        k.bind("crawl_id")
    with pytest.raises(TypeError, match="given twice: meta"):
        k.bind("meta", meta="x")


def test_runner_refuses_wrong_key_names_before_calling_redis() -> None:
    async def job(session: CrawlSession, client: Any) -> None:
        with pytest.raises(TypeError, match="takes KEYS meta"):
            await Scripts(client).run("complete", {"meta": "m", "extra": "x"}, [1])

    on_fakeredis(job)


def test_a_stale_layout_is_one_typed_answer_and_recovered_in_one_place() -> None:
    async def job(session: CrawlSession, client: Any) -> Any:
        await session.open({}, 4, 1)
        stale_keys = {"meta": session.keys.meta, "stats": session.keys.stats}
        stale_keys |= {"task": session.keys.task, "seen": session.keys.seen}
        with pytest.raises(StaleLayout):
            await Scripts(client).run("enqueue", stale_keys, [3, 0])  # 3 != the crawl's 4
        other = Frontier(client).crawl("c")
        await other.refresh_layout()
        await admin.reshard(session, 7)
        added = await other.enqueue([TASK])  # stale (4 slots): refreshed and retried
        return added, other.layout

    added, layout = on_fakeredis(job)
    assert added == 1 and layout is not None and layout.slots == 7


def test_commit_status_table_matches_the_item_statuses() -> None:
    body = (LUA_DIR / "_prelude.lua").read_text()
    statuses = body.split("local STATUS_COUNTER = {")[1].split("}")[0]
    table = dict(re.findall(r"(\w) = 'status:(\w+)'", statuses))
    assert table == {letter: status for letter, (status, _) in LETTERS.items()}
    assert {
        letter: str(status) for status, letter in STATUS_LETTER.items()
    }.items() <= table.items()
    assert set(STATUS_LETTER) == set(ItemStatus)
    gens = body.split("local GENERATOR_COUNTER = {")[1].split("}")[0]
    assert dict(re.findall(r"(\w) = 'generator:(\w+)'", gens)) == {
        letter: gen for letter, (_, gen) in LETTERS.items() if gen is not None
    }
    assert {gen for _, gen in LETTERS.values() if gen} == set(GENERATORS)


def test_every_state_the_scripts_write_is_a_crawl_state() -> None:
    written = set()
    for name in script_names():
        body = (LUA_DIR / f"{name}.lua").read_text()
        written |= set(re.findall(r"'state', '(\w+)'", body))
        written |= set(re.findall(r"state = '(\w+)'", body))
    assert written and written <= {s.value for s in CrawlState}


async def _to(session: CrawlSession, client: Any, state: CrawlState | None) -> None:
    """Put the crawl in ``state`` (None: no such crawl) by the scripts' own path."""
    if state is None:
        return
    if state is CrawlState.FAILED:
        await session.produce_failed("HTTP 404", {"site": "x"})
        return
    await session.open({"site": "x"}, 2, 1)
    if state is CrawlState.PRODUCING:
        return
    await session.enqueue([TASK])
    await session.produced({}, 1)
    if state is CrawlState.RUNNING:
        return
    (claim,) = await session.claim("c1", [0, 1], 1, False, 10_000)
    await session.fail(claim, {"reason": "HTTP 403"}, 0, 1, dead_now=True)
    assert await session.is_complete()


async def _by(script: str, session: CrawlSession, client: Any) -> None:
    if script == "open":
        await session.open({"site": "x"}, 2, 1)
    elif script == "produce_failed":
        await session.produce_failed("HTTP 404", {})
    elif script == "produced":
        await client.srem(session.keys.seen, "fedcba9876543210")
        added = await session.enqueue([Task("fedcba9876543210", "http://x.test/q.html", ())])
        await session.produced({}, added)
    elif script == "complete":
        await session.produced({}, 0)
        (claim,) = await session.claim("c1", [0, 1], 1, False, 10_000)
        await session.fail(claim, {"reason": "HTTP 403"}, 0, 1, dead_now=True)
        assert await session.is_complete()
    elif script == "redrive":
        assert await admin.redrive(session, None) == 1
    elif script == "refresh":
        assert (await Refresh(session).start_round()).started
    else:
        raise AssertionError(script)


@pytest.mark.parametrize(
    ("before", "after", "script"),
    [(b, a, s) for (b, a), scripts in TRANSITIONS.items() for s in scripts],
)
def test_each_transition_is_the_one_its_script_makes(
    before: CrawlState | None, after: CrawlState, script: str
) -> None:
    async def job(session: CrawlSession, client: Any) -> tuple[str | None, bool]:
        await _to(session, client, before)
        await _by(script, session, client)
        state = await client.hget(session.keys.meta, "state")
        listed = await session.registry.active()
        return state, "c" in listed

    state, listed = on_fakeredis(job)
    assert state == after.value
    if after.open:  # an open crawl is always listed for consumers
        assert listed
