"""The crawl's meta hash has one codec (frontier/meta.py): its defaults, its writers'
names, and the Lua scripts' names agree with it."""

from __future__ import annotations

import re

import pytest

from invcrawl.common.search.postings import FIRST_TERM_LOGS_PER_BUCKET
from invcrawl.frontier.meta import META_FIELDS, CrawlMeta, lua_field_table
from invcrawl.frontier.scripts import LUA_DIR, load, script_names
from invcrawl.frontier.states import CrawlState, ProducerState

# `redis.call('HSET', meta, 'a', x, 'b', y)`, `stale_layout(meta, 'slots', ...)`: the
# literal field names a script gives next to its `meta` key
_CALL = re.compile(
    r"(?:redis\.call\('(?:H\w+)',\s*meta|stale_layout\(meta)((?:[^()]|\([^()]*\))*)\)"
)
_NAME = re.compile(r"'([a-z_]+)'")
# values the scripts write, not names: the states (frontier/states.py)
_VALUES = {s.value for s in CrawlState} | {s.value for s in ProducerState}


def test_a_crawl_written_before_decodes_with_the_one_default_of_each_field() -> None:
    # a crawl of an early version: no term_logs, max_slots, refresh or weight fields
    meta = CrawlMeta.decode({"slots": "4", "buckets": "3", "state": "finished"})
    assert (meta.slots, meta.max_slots, meta.buckets) == (4, 4, 3)
    assert meta.term_logs == 3 * FIRST_TERM_LOGS_PER_BUCKET
    assert (meta.weight, meta.retain_items, meta.max_tries) == (1, "all", None)
    assert meta.refresh_changed is None and meta.state is CrawlState.FINISHED
    # a crawl whose producer failed before opening it: no layout, one bucket
    failed = CrawlMeta.decode({"site": "https://x.test", "state": "failed", "error": "boom"})
    assert not failed.opened and failed.buckets == 1 and failed.slots == 0
    assert failed.term_logs == FIRST_TERM_LOGS_PER_BUCKET


def test_empty_text_is_kept_and_empty_numbers_are_missing() -> None:
    meta = CrawlMeta.decode({"project": "", "version": "", "weight": "", "weight_x": "9"})
    assert (meta.project, meta.version, meta.weight) == ("", "", 1)
    assert CrawlMeta.decode({}).project is None
    assert CrawlMeta.decode({"weight": "0", "refresh_changed": "0"}).weight == 0
    assert CrawlMeta.decode({"refresh_changed": "0"}).refresh_changed is False


def test_bytes_replies_decode_as_text() -> None:
    meta = CrawlMeta.decode({"site": b"https://x.test", "slots": b"2", "producer": b"done"})
    assert (meta.site, meta.slots, meta.producer) == ("https://x.test", 2, ProducerState.DONE)


def test_writers_name_only_fields_of_the_meta() -> None:
    assert CrawlMeta.fields(site="s", entries=3) == {"site": "s", "entries": 3}
    with pytest.raises(TypeError, match="entires"):
        CrawlMeta.fields(entires=3)


def test_the_scripts_see_the_generated_field_table() -> None:
    table = lua_field_table()
    assert set(re.findall(r"(\w+) = true", table)) == set(META_FIELDS)
    for name in script_names():
        assert load(name).source.startswith(table)


def test_every_meta_field_a_script_names_is_a_field_of_the_model() -> None:
    named: dict[str, set[str]] = {}
    for path in sorted(LUA_DIR.glob("*.lua")):
        for call in _CALL.finditer(path.read_text(encoding="utf-8")):
            for field in _NAME.findall(call[1]):
                if field not in _VALUES:
                    named.setdefault(field, set()).add(path.name)
    assert {"slots", "buckets", "term_logs", "state", "round", "retain_items"} <= set(named)
    unknown = {field: files for field, files in named.items() if field not in META_FIELDS}
    assert not unknown, unknown
