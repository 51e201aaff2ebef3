"""The accounting invariant of docs/delivery.md, checked from Redis alone: the one checker
of the e2e tests, the fault suite and ``support/fault_cli.py``.

:func:`check_accounting` reads the whole item stream back and accounts for every
inventory entry: live item keys (latest entry not a tombstone) + entries of dead pages
without their ``failed`` item = unique inventory entries (a finished crawl has a
``failed`` item for every entry of a dead page), no (key, checksum) pair twice in the
stream between removals, at most one tombstone per removal, and (given the keys the test
expects, from a source independent of the producer) no key missing, none unexpected,
none both a content item and on a dead page.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.client import NEVER_DECODE

from invcrawl.common.codec import item_json
from invcrawl.frontier.keys import CrawlKeys


@dataclass(frozen=True)
class StreamItem:
    id: str
    key: str
    sum: str
    kind: str
    task: str
    data: dict[str, Any]


def stream_range(
    client: redis.Redis, key: str, start: str = "-", count: int = 1000
) -> list[tuple[str, dict[str, Any]]]:
    """XRANGE of an item stream from ``start`` (with any client: the reply is read
    undecoded, as ``frontier/stream.py`` reads it): entry id and fields, every field as
    text but ``data`` (bytes: a zstd frame, ``common/codec.py``)."""
    batch = client.execute_command(  # type: ignore[no-untyped-call]
        "XRANGE", key, start, "+", "COUNT", count, **{NEVER_DECODE: True}
    )
    return [
        (_text(entry_id), {_text(k): v if k == b"data" else _text(v) for k, v in f.items()})
        for entry_id, f in batch
    ]


def read_items(client: redis.Redis, crawl_id: str) -> list[StreamItem]:
    """Every entry of the crawl's item stream, in order."""
    key = CrawlKeys(crawl_id).items
    out: list[StreamItem] = []
    start = "-"
    while batch := stream_range(client, key, start):
        for entry_id, fields in batch:
            out.append(
                StreamItem(
                    entry_id,
                    fields["key"],
                    fields["sum"],
                    fields["kind"],
                    fields["task"],
                    json.loads(item_json(fields["data"])),
                )
            )
        start = "(" + batch[-1][0]
    return out


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class Accounting:
    entries_total: int  # unique inventory entries (meta ``entries``)
    unique_keys: int  # distinct item keys in the stream
    dead_pages: int
    dead_entries: int
    stream_entries: int
    duplicates: list[tuple[str, str]]  # (key, checksum) present more than once
    duplicate_entries: int  # stream entries that repeat an earlier (key, checksum)
    missing: set[str] = field(default_factory=set)  # expected keys with no item, not dead
    unexpected: set[str] = field(default_factory=set)  # item keys not in the inventory
    both: set[str] = field(default_factory=set)  # keys with an item AND on a dead page
    by_status: dict[str, int] = field(default_factory=dict)  # latest item per key
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> latest item
    dead_with_item: int = 0  # entries of dead pages that have their `failed` item

    dead_without_item: set[str] = field(default_factory=set)  # finished crawl, no failed item

    @property
    def ok(self) -> bool:
        return (
            self.unique_keys + self.dead_entries - self.dead_with_item == self.entries_total
            and not self.dead_without_item
            and not self.duplicates
            and not self.missing
            and not self.unexpected
            and not self.both
        )

    def summary(self) -> str:
        return (
            f"{self.unique_keys} unique item keys + {self.dead_entries} entries on "
            f"{self.dead_pages} dead pages vs {self.entries_total} inventory entries; "
            f"{self.stream_entries} stream entries, {len(self.duplicates)} duplicates, "
            f"{len(self.missing)} missing, {len(self.unexpected)} unexpected, "
            f"{len(self.both)} both item and dead; by status {self.by_status}"
        )

    def assert_ok(self) -> Accounting:
        assert self.ok, (
            "accounting invariant broken: "
            + self.summary()
            + f"\n  duplicates {self.duplicates[:5]}\n  missing {sorted(self.missing)[:5]}"
            f"\n  unexpected {sorted(self.unexpected)[:5]}\n  both {sorted(self.both)[:5]}"
        )
        return self


def dead_entry_keys(client: redis.Redis, crawl_id: str) -> tuple[int, list[str]]:
    """(dead pages, keys of their entries): dead payloads stay in ``task``."""
    k = CrawlKeys(crawl_id)
    dead = [_text(t) for t in client.zrange(k.dlq, 0, -1)]
    keys: list[str] = []
    for task_id in dead:
        payload = client.hget(k.task, task_id)
        assert payload is not None, f"dead task {task_id} lost its payload"
        for name, domain, role, *_ in json.loads(payload)["entries"]:
            keys.append(f"{domain}:{role}:{name}")
    return len(dead), keys


def check_accounting(
    client: redis.Redis, crawl_id: str, expected_keys: frozenset[str] | set[str] | None = None
) -> Accounting:
    """Read the stream back and account for every inventory entry. ``expected_keys``
    (e.g. ``Site.keys``) adds a check independent of the producer's own count."""
    items = read_items(client, crawl_id)
    meta = client.hgetall(CrawlKeys(crawl_id).meta)
    total = int(_text(meta.get("entries") or meta.get(b"entries") or 0))
    # A (key, checksum) pair may come back after the key was removed; a tombstone resets it.
    seen: Counter[tuple[str, str]] = Counter()
    latest: dict[str, dict[str, Any]] = {}
    for item in items:
        if item.kind == "removed":
            if item.key not in latest:  # a second tombstone, or one for a key never seen
                seen[(item.key, "<tombstone>")] += 2
            latest.pop(item.key, None)
            for pair in [p for p in seen if p[0] == item.key]:
                del seen[pair]
            continue
        seen[(item.key, item.sum)] += 1
        latest[item.key] = item.data
    dead_pages, dead_keys = dead_entry_keys(client, crawl_id)
    acc = Accounting(
        entries_total=total,
        unique_keys=len(latest),
        dead_pages=dead_pages,
        dead_entries=len(dead_keys),
        stream_entries=len(items),
        duplicates=[pair for pair, n in seen.items() if n > 1],
        duplicate_entries=sum(n - 1 for n in seen.values()),
        both={k for k in set(latest) & set(dead_keys) if latest[k].get("status") != "failed"},
        by_status=dict(Counter(d.get("status", "?") for d in latest.values())),
        latest=latest,
    )
    acc.dead_with_item = sum(1 for k in dead_keys if k in latest)
    state = meta.get("state") or meta.get(b"state")
    if _text(state) == "finished":  # dead pages get their failed items before completion
        acc.dead_without_item = {k for k in dead_keys if k not in latest}
    if expected_keys is not None:
        accounted = set(latest) | set(dead_keys)
        acc.missing = set(expected_keys) - accounted
        acc.unexpected = accounted - set(expected_keys)
        if total != len(expected_keys):
            acc.missing.add(f"<meta entries {total} != {len(expected_keys)} inventory keys>")
    return acc


def dedupe_jsonl(path: Path) -> tuple[int, dict[tuple[str, str], dict[str, Any]]]:
    """(lines, {(key, checksum): item}) of a JSON Lines export, for at-least-once
    consumers that dedupe by key + checksum."""
    lines = 0
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.exists():
        return 0, out
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        lines += 1
        out[(item["key"], item["checksum"])] = item
    return lines, out
