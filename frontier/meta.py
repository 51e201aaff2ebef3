"""A crawl's meta hash (``invcrawl:{C}:meta``, frontier/keys.py) as one typed record: the
only decoder of that hash, and the one list of its fields for its writers.

Redis holds every field as a string, and a field may be missing: a crawl that failed
before it was opened has no layout, older crawls lack fields added since (``term_logs``,
``refresh_*``). Each field here has one default, the value a missing field means, so
every reader agrees (they used to disagree: a missing ``buckets`` was 1, 0 or
``bucket_count(entries)`` depending on the reader):

* ``buckets`` defaults to 1. ``open.lua`` writes it with ``slots`` in one script, and has
  since the frontier's first version, so a meta without it is a crawl never opened (a
  producer that failed at once): it holds no items. One bucket is the layout of an empty
  crawl (``bucket_count(0)``) and the one value every reader can hash a key into (0 would
  divide by zero; ``bucket_count(entries)`` would invent a layout no script wrote).
* ``term_logs`` missing: a crawl indexed before it was recorded, under
  ``FIRST_TERM_LOGS_PER_BUCKET`` logs a bucket (``stored_term_logs``).
* ``max_slots`` missing: ``slots`` (a crawl never resharded).

Writers name fields through :meth:`CrawlMeta.fields`, which refuses a name that is not
one, and the scripts that write fields given by their caller (``open.lua``,
``produced.lua``, ``produce_failed.lua``) refuse one too: the prelude's ``META_FIELDS``
table is generated from :data:`META_FIELDS` (:func:`lua_field_table`). Pure: no Redis.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from invcrawl.common.search.postings import stored_term_logs
from invcrawl.frontier.states import CrawlState, ProducerState


@dataclass(frozen=True, slots=True)
class CrawlMeta:
    # what the producer names the crawl by (producer/enqueue.py)
    site: str | None = None
    inventory_url: str | None = None
    inventory_sha256: str | None = None
    project: str | None = None  # None: never named; "" named by nothing (no --project,
    version: str | None = None  # nor the inventory's header)
    project_given: str | None = None  # --project / --version, kept by later runs
    version_given: str | None = None
    max_tries: int | None = None  # None: the consumer's own --max-tries
    weight: int = 1
    retain_items: str = "all"
    # its layout (open.lua, reshard.lua)
    slots: int = 0  # 0: never opened
    max_slots: int = 0  # (decoded as ``slots`` when missing)
    slots_epoch: int = 0
    buckets: int = 1  # (see the module's docstring)
    term_logs: int = 0  # (decoded through ``stored_term_logs`` when missing)
    # "1": its vector log (``svec``) is written at commit, set when it is created (and
    # by ``search --reindex``); missing in crawls created before it existed
    vectors: bool = False
    # "1": its link log (``slnk``) is written at commit, set when it is created (and by
    # ``search --reindex``); missing in crawls created before it existed
    links: bool = False
    # the production (produced.lua)
    entries: int = 0
    pages: int = 0
    tasks: int = 0
    fetch_pages: int = 0
    duplicates: int = 0
    malformed: int = 0
    # its life (frontier/states.py), times in ms of the server's clock
    state: CrawlState | None = None  # None: not created yet
    producer: ProducerState | None = None  # the latest production run
    error: str | None = None
    created_at: int = 0
    produced_at: int = 0
    started_at: int = 0
    finished_at: int = 0
    failed_at: int = 0
    last_commit_at: int = 0
    trimmed_before: str | None = None  # stream entry id (frontier/retention.py)
    # refreshes (frontier/refresh.py, refresh.lua) and their schedule (frontier/refresh_schedule.py)
    round: int = 0
    refreshes: int = 0
    inv_etag: str | None = None
    inv_last_modified: str | None = None
    refresh_started_at: int = 0
    refreshed_at: int = 0  # (written by earlier versions only)
    next_refresh_at: int = 0
    refresh_interval: float = 0.0  # s; 0: no schedule
    refresh_adaptive: bool = False
    refresh_changed: bool | None = None  # None: no round judged yet
    refresh_base: int | None = None

    @classmethod
    def decode(cls, meta: Mapping[str, Any]) -> CrawlMeta:
        """The record of a meta hash as HGETALL (or an HMGET zipped with its names) reads
        it; missing fields take their default, and so do empty ones but for the optional
        text fields (``project`` "" is a crawl nothing named, not one never named).
        Unknown fields are ignored."""
        values: dict[str, Any] = {}
        for name, kind in _KINDS.items():
            raw = meta.get(name)
            if raw is None or (raw in ("", b"") and name not in _KEEPS_EMPTY):
                continue
            values[name] = kind(raw)
        slots = values.get("slots", 0)
        values.setdefault("max_slots", slots)
        buckets = values.setdefault("buckets", 1)
        values["term_logs"] = stored_term_logs(meta.get("term_logs"), buckets)
        return cls(**values)

    @staticmethod
    def fields(**values: Any) -> dict[str, Any]:
        """The fields a writer sets, by their names here (a name that is no field of the
        meta is refused: it would be written and never read). Values as given: redis-py
        encodes them."""
        unknown = set(values) - set(META_FIELDS)
        if unknown:
            raise TypeError(f"not fields of a crawl's meta: {sorted(unknown)}")
        return values

    @property
    def opened(self) -> bool:
        """Its layout exists (``open.lua`` ran): it may hold tasks and items."""
        return self.slots > 0


def _flag(raw: Any) -> bool:
    return str(raw) == "1"


def _text(raw: Any) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def _int(raw: Any) -> int:
    return int(raw)


META_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(CrawlMeta))
_DECODERS: dict[str, Any] = {
    "int": _int,
    "int | None": _int,
    "float": float,
    "bool": _flag,
    "bool | None": _flag,
    "str": _text,
    "str | None": _text,
    "CrawlState | None": lambda raw: CrawlState(_text(raw)),
    "ProducerState | None": lambda raw: ProducerState(_text(raw)),
}
_KINDS = {f.name: _DECODERS[str(f.type)] for f in dataclasses.fields(CrawlMeta)}
_KEEPS_EMPTY = frozenset(f.name for f in dataclasses.fields(CrawlMeta) if f.type == "str | None")


def lua_field_table() -> str:
    """The prelude's ``META_FIELDS``: every field name, as a Lua set."""
    names = ", ".join(f"{name} = true" for name in META_FIELDS)
    return f"local META_FIELDS = {{{names}}}\n"
