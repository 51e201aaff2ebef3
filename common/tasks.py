"""Page tasks: what the producer enqueues and a consumer claims, as JSON on the wire.

A task is one page of the site with every inventory entry that points at it::

    {"v": 1, "id": "3f2a...", "url": "https://host/docs/library/json.html",
     "status": "fetch", "entries": [[name, domain, role, priority, anchor, dispname], ...]}

``status`` is ``fetch`` for pages to download, or ``skipped`` / ``offsite`` for pages
that are never fetched (their entries still become items, so every inventory entry is
accounted for). ``fetch_url`` is present only when it differs from ``url`` (a
``file://`` directory page). ``val`` (refresh tasks only) holds the page's validators
from its last fetch (``common/validators.py``). The slot is deliberately *not* stored:
it is derived from the id and the crawl's current slot count, so resharding never
rewrites payloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson

from invcrawl.common.inventory import Entry
from invcrawl.common.validators import Validators, decode_validators, entries_digest

TASK_VERSION = 1


class TaskStatus(StrEnum):
    """What a consumer does with a task's page: download it, or only account for its
    entries (a generated page, or one off the inventory's site). The value is the wire's."""

    FETCH = "fetch"
    SKIPPED = "skipped"
    OFFSITE = "offsite"


class TaskFormatError(ValueError):
    """A payload in Redis that is not a valid task (never silently dropped)."""


@dataclass(frozen=True, slots=True)
class TaskEntry:
    """One inventory entry on its page: the one shape an entry has from the plan
    (``common/plan.Page.targets``) through the task in Redis to extraction."""

    name: str
    domain: str
    role: str
    priority: int
    anchor: str
    dispname: str

    @classmethod
    def on_page(cls, entry: Entry, anchor: str) -> TaskEntry:
        """``entry`` of the inventory, found on its page at ``anchor`` ("" for the page)."""
        return cls(entry.name, entry.domain, entry.role, entry.priority, anchor, entry.dispname)

    @property
    def key(self) -> str:
        return f"{self.domain}:{self.role}:{self.name}"


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    url: str
    entries: tuple[TaskEntry, ...]
    status: TaskStatus = TaskStatus.FETCH
    reason: str | None = None
    fetch_url: str | None = None
    validators: Validators | None = None  # a refresh's conditional GET

    @property
    def download_url(self) -> str:
        return self.fetch_url or self.url

    def entry_url(self, entry: TaskEntry) -> str:
        return f"{self.url}#{entry.anchor}" if entry.anchor else self.url

    @property
    def entries_digest(self) -> str:
        return entries_digest((e.key, e.anchor) for e in self.entries)


def encode_task(task: Task) -> str:
    doc: dict[str, Any] = {
        "v": TASK_VERSION,
        "id": task.id,
        "url": task.url,
        "status": str(task.status),
        "entries": [
            [e.name, e.domain, e.role, e.priority, e.anchor, e.dispname] for e in task.entries
        ],
    }
    if task.reason:
        doc["reason"] = task.reason
    if task.fetch_url and task.fetch_url != task.url:
        doc["fetch_url"] = task.fetch_url
    if task.validators:
        doc["val"] = task.validators.encode()
    return orjson.dumps(doc).decode("utf-8")  # (compact, UTF-8: as json.dumps(ensure_ascii=False))


def decode_task(payload: str | bytes) -> Task:
    try:
        doc = orjson.loads(payload)
        if not isinstance(doc, dict):
            raise TaskFormatError(f"a task is a JSON object, got {type(doc).__name__}")
        if doc.get("v") != TASK_VERSION:
            raise TaskFormatError(f"unsupported task version {doc.get('v')!r}")
        entries = tuple(
            TaskEntry(str(n), str(d), str(r), int(p), str(a), str(dn))
            for n, d, r, p, a, dn in doc["entries"]
        )
        return Task(
            id=str(doc["id"]),
            url=str(doc["url"]),
            entries=entries,
            status=TaskStatus(doc.get("status", TaskStatus.FETCH)),
            reason=doc.get("reason"),
            fetch_url=doc.get("fetch_url"),
            validators=decode_validators(doc.get("val")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise TaskFormatError(f"malformed task payload: {exc}") from None
