"""Items: one record per inventory entry (schema in docs/items.md), their checksum and the
compact digest the Redis dedup state is keyed by.

Dedup state per item is one listpack field in a bucket hash ``isum:<b>``: a 12-hex digest
of the item key (the bucket is chosen from other bits of the same digest, so the
effective key space is 48 bits *within* a bucket of ~64 items) mapped to a 12-hex
checksum of the content plus a one-letter status. That is ~29 bytes of payload per item.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NotRequired, TypedDict, cast

import orjson

from invcrawl.common.codec import stored_item
from invcrawl.common.search.indexing import item_index
from invcrawl.common.search.postings import record_bucket
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.tasks import Task, TaskEntry


class ItemStatus(StrEnum):
    """The ``status`` of an item (docs/items.md). ``commit.lua`` keeps per-status counters
    through the one-letter codes of :data:`STATUS_LETTER` (a test compares its table)."""

    OK = "ok"
    ANCHOR_MISSING = "anchor_missing"
    PAGE_NOT_FOUND = "page_not_found"
    SKIPPED = "skipped"
    OFFSITE = "offsite"
    FAILED = "failed"  # its page was dead-lettered (the dead letter's reason)


STATUSES = tuple(ItemStatus)
STATUS_LETTER: Mapping[str, str] = {
    ItemStatus.OK: "o",
    ItemStatus.ANCHOR_MISSING: "a",
    ItemStatus.PAGE_NOT_FOUND: "n",
    ItemStatus.SKIPPED: "s",
    ItemStatus.OFFSITE: "f",
    ItemStatus.FAILED: "x",
}


class Generator(StrEnum):
    """The ``generator`` of an item (docs/items.md): which program wrote its page
    (``common/extract/generators.py`` tells them apart). Here, beside the statuses, so
    that what counts items by generator (``frontier/summary.py``: the supervisor, the
    readers) need not import the extractors and lxml."""

    SPHINX = "sphinx"
    MKDOCSTRINGS = "mkdocstrings"
    PYDOCTOR = "pydoctor"
    UNKNOWN = "unknown"


GENERATORS = tuple(Generator)

# The letter stored per item in the ``isum`` buckets (after its checksum) says its status
# and, for an item of a page that was read (``ok``, ``anchor_missing``), the page's
# generator too (docs/items.md), so that the frontier keeps exact per-generator counters
# (``generator:<name>`` in stats) across re-commits, refreshes and removals:
# ``commit.lua`` adds an item's letter and takes back the one it replaces. A Sphinx item's
# letter is its status letter, as before generators were told apart, so the stored state
# of a Sphinx site's items is unchanged.
GENERATOR_LETTER: Mapping[tuple[str, str], str] = {
    (ItemStatus.OK, "mkdocstrings"): "m",
    (ItemStatus.ANCHOR_MISSING, "mkdocstrings"): "M",
    (ItemStatus.OK, "pydoctor"): "p",
    (ItemStatus.ANCHOR_MISSING, "pydoctor"): "P",
    (ItemStatus.OK, "unknown"): "u",
    (ItemStatus.ANCHOR_MISSING, "unknown"): "U",
}
# Every stored letter: its status, and its generator (None: no page was read).
LETTERS: Mapping[str, tuple[str, str | None]] = {
    **{
        letter: (str(status), "sphinx" if status in ("ok", "anchor_missing") else None)
        for status, letter in STATUS_LETTER.items()
    },
    **{letter: (str(status), gen) for (status, gen), letter in GENERATOR_LETTER.items()},
}


def item_letter(status: str, generator: str | None) -> str:
    """The letter an item is stored with: its status's, or that of its status and its
    page's generator."""
    return GENERATOR_LETTER.get((status, generator or "sphinx"), STATUS_LETTER[status])


class PageOutcome(StrEnum):
    """How a page task was settled by a commit (``stats`` counts ``pages:<outcome>``)."""

    FETCHED = "fetched"  # downloaded and extracted
    NOT_FOUND = "not_found"  # HTTP 404/410 or a missing file: items ``page_not_found``
    SKIPPED = "skipped"  # a generated page, or robots.txt: items ``skipped``
    OFFSITE = "offsite"  # outside the site: items ``offsite``
    UNCHANGED = "unchanged"  # a refresh found it unchanged (304 or same body): no items


# An item's fields (docs/items.md), in the order of its JSON:
# * its identity, from the inventory entry and the page task;
IDENTITY_FIELDS = (
    "key",
    "crawl",
    "project",
    "version",
    "name",
    "domain",
    "role",
    "priority",
    "dispname",
    "url",
    "page_url",
    "anchor",
)
# * its content, from extraction: each field's value when there is none. The one
#   defaults table: extraction starts from it (common/extract), and an item of a page
#   with no content (skipped, offsite, not found, failed, empty) is made of it. ``doc``
#   and ``doc_markdown`` are always strings (docs/items.md): "" for none.
CONTENT_DEFAULTS: Mapping[str, Any] = {
    "reason": None,
    "signature": None,
    # Facts the documentation states about the symbol beside its signature (``property``,
    # ``classmethod``, ``async``...: docs/items.md), in the order the page gives them.
    "labels": (),
    "title": None,
    "parent": None,
    "doc": "",
    "doc_markdown": "",
    "params": (),
    "returns": (),
    "raises": (),
    "versions": (),
    # Which program generated the page (common/extract/generators.py); None when no page
    # was read (skipped, offsite, not found, failed).
    "generator": None,
}
# * optional content, in an item's JSON only where extraction found it (after the field
#   named beside it), so that an item without them is byte for byte what it was before
#   they existed (docs/items.md): the class that defines an inherited member and the
#   target of an alias (re-export) after ``parent``, the names a docstring documents that
#   the signature lacks after ``params``.
OPTIONAL_FIELDS: Mapping[str, str] = {
    "inherited_from": "parent",
    "alias_of": "parent",
    "doc_only_params": "params",
    # the symbols the doc links to (common/extract/references.py), after ``doc_markdown``
    "references": "doc_markdown",
}
_CONTENT_ORDER = tuple(
    f
    for name in CONTENT_DEFAULTS
    for f in (name, *(o for o, after in OPTIONAL_FIELDS.items() if after == name))
)
# * then ``status`` and ``checksum`` (of the CONTENT_FIELDS). An item has every field
#   of ITEM_FIELDS but the OPTIONAL_FIELDS it lacks, in this order.
ITEM_FIELDS = (*IDENTITY_FIELDS, *_CONTENT_ORDER, "status", "checksum")


class Item(TypedDict):
    """One item as it is built and stored (docs/items.md), its fields in the order of
    its JSON (:data:`ITEM_FIELDS`: a test compares them). Items stored before a field
    existed lack it: ``labels`` and ``generator`` (``.get`` them); the
    :data:`OPTIONAL_FIELDS` are there only when extraction found them."""

    key: str
    crawl: str
    project: str | None
    version: str | None
    name: str
    domain: str
    role: str
    priority: int
    dispname: str
    url: str
    page_url: str
    anchor: str
    reason: str | None
    signature: str | None
    labels: NotRequired[list[str]]
    title: str | None
    parent: str | None
    inherited_from: NotRequired[str]
    alias_of: NotRequired[str]
    doc: str
    doc_markdown: str
    references: NotRequired[list[dict[str, Any]]]
    params: list[dict[str, Any]]
    doc_only_params: NotRequired[list[dict[str, Any]]]
    returns: list[dict[str, Any]]
    raises: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    generator: NotRequired[str | None]
    status: str
    checksum: str


# Fields whose change makes an item "updated". Crawl-level fields (crawl, project,
# version) are excluded so that renaming a crawl does not rewrite every item; so is the
# page's ``generator`` (a fact about the page, not the symbol: a site moving to another
# generator changes its items' contents anyway). ``labels`` count only when there are
# some (OPTIONAL_CONTENT), so the checksum of an item without labels is the one it had
# before the field existed and a refresh after an upgrade reports no change; so do the
# OPTIONAL_FIELDS (absent when there is none).
OPTIONAL_CONTENT = ("labels", *OPTIONAL_FIELDS)
CONTENT_FIELDS = (
    *(f for f in IDENTITY_FIELDS if f not in ("crawl", "project", "version")),
    "status",
    *(f for f in CONTENT_DEFAULTS if f not in ("generator", *OPTIONAL_CONTENT)),
)


def empty_content(status: str, reason: str | None = None) -> dict[str, Any]:
    """The content of an item with nothing extracted: ``status`` and ``reason``, every
    other field its default (lists of its own)."""
    content = {k: list(v) if isinstance(v, tuple) else v for k, v in CONTENT_DEFAULTS.items()}
    content.update(status=status, reason=reason)
    return content


ITEMS_PER_BUCKET = 64  # mean; keeps nearly every bucket under hash-max-listpack-entries=128


@dataclass(frozen=True, slots=True)
class CrawlInfo:
    crawl_id: str
    project: str | None
    version: str | None


@dataclass(frozen=True, slots=True)
class ItemLayout:
    """Where a crawl keeps its items by key, fixed when the crawl is created: its dedup
    buckets (``isum``, and the search index's ``srec``) and its search index's term logs
    (``slog``: common/search/postings.py)."""

    buckets: int
    term_logs: int


@dataclass(frozen=True, slots=True)
class PreparedItem:
    """An item ready for the commit script."""

    key: str
    bucket: int
    field: str  # key digest within the bucket
    value: str  # checksum[:12] + status letter
    status: str
    data: bytes  # item JSON as stored in the stream (common/codec.py: a zstd frame)
    # the search index (common/search/postings.py): (slog, tag) of each of its terms;
    # empty for an item the index leaves out
    terms: tuple[tuple[int, bytes], ...] = ()
    record: int = 0  # its srec hash
    # the words of its vector (``semantic.item_words``: the vector log, embedded per page)
    words: tuple[str, ...] = ()
    # the URLs its doc links to (its ``references``' ``url``: the link log's record of its
    # page, ``common/search/link_log.py``)
    links: tuple[str, ...] = ()


def bucket_count(entries: int) -> int:
    return max(1, -(-entries // ITEMS_PER_BUCKET))


def key_digest(key: str, buckets: int) -> tuple[int, str]:
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % buckets, digest[8:20]


def checksum(item: Mapping[str, Any]) -> str:
    return hashlib.sha1(_content_json(item)).hexdigest()[:16]


def content_view(item: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an item its checksum covers (and ``build_sized_item`` measures)."""
    content = {k: item.get(k) for k in CONTENT_FIELDS}
    for k in OPTIONAL_CONTENT:
        value = item.get(k)
        if value:
            content[k] = value
    return content


def _content_json(item: Mapping[str, Any]) -> bytes:
    # orjson's compact UTF-8 output is byte-identical to json.dumps(sort_keys=True,
    # ensure_ascii=False, separators=(",", ":")) for item values (str, int, None, lists,
    # str-keyed dicts), so checksums are unchanged; it is faster (docs/performance.md).
    return orjson.dumps(content_view(item), option=orjson.OPT_SORT_KEYS)


def build_item(crawl: CrawlInfo, task: Task, entry: TaskEntry, content: Mapping[str, Any]) -> Item:
    """Assemble the full item: identity from the task entry, content from extraction."""
    return build_sized_item(crawl, task, entry, content)[0]


def build_sized_item(
    crawl: CrawlInfo, task: Task, entry: TaskEntry, content: Mapping[str, Any]
) -> tuple[Item, int]:
    """``build_item`` and the size of the item's JSON, but for its crawl, project,
    version and checksum (the same on every item of a page): the checksum's own
    serialisation measures it, for the size bounds (``common/bounds.py``)."""
    item = item_fields(crawl, task, entry, content)
    data = _content_json(item)
    item["checksum"] = hashlib.sha1(data).hexdigest()[:16]
    return cast(Item, item), len(data)  # every field of Item, in its order


def status_items(crawl: CrawlInfo, task: Task, status: str, reason: str | None) -> list[Item]:
    """Items for a page that yields no content (skipped, offsite, not found)."""
    return [build_item(crawl, task, e, empty_content(status, reason)) for e in task.entries]


def prepare(item: Item, layout: ItemLayout) -> PreparedItem:
    """An item as its crawl's commit writes it: dedup bucket and digest, stored value
    and data, the log (postings.term_log) and tag of each of its search terms and the
    words of its vector (both from ``indexing.item_index``, in one pass)."""
    bucket, field = key_digest(item["key"], layout.buckets)
    name = str(item.get("name") or item["key"].split(":", 2)[-1])
    terms, words = item_index(name, first_sentence(item.get("doc")), layout.term_logs)
    return PreparedItem(
        key=item["key"],
        bucket=bucket,
        field=field,
        value=item["checksum"][:12] + item_letter(item["status"], item.get("generator")),
        status=item["status"],
        data=stored_item(orjson.dumps(item)),
        terms=terms,
        record=record_bucket(field, layout.buckets),
        words=words,
        links=reference_urls(item),
    )


def reference_urls(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The URLs of an item's ``references`` (a link to an entry of its own page is a
    ``key``, without one)."""
    refs = item.get("references") or ()
    return tuple(url for ref in refs if isinstance(url := ref.get("url"), str) and url)


def item_fields(
    crawl: CrawlInfo, task: Task, entry: TaskEntry, content: Mapping[str, Any]
) -> dict[str, Any]:
    """An item's fields in the order of its JSON (:data:`ITEM_FIELDS`, the optional ones
    only where ``content`` has them), but for its checksum: the values are ``content``'s
    own, shared, not copied (``common/pageitems.py`` copies them once they are bounded)."""
    item: dict[str, Any] = {
        "key": entry.key,
        "crawl": crawl.crawl_id,
        "project": crawl.project,
        "version": crawl.version,
        "name": entry.name,
        "domain": entry.domain,
        "role": entry.role,
        "priority": entry.priority,
        "dispname": entry.dispname,
        "url": task.entry_url(entry),
        "page_url": task.url,
        "anchor": entry.anchor,
    }
    for name in _CONTENT_ORDER:
        if name in OPTIONAL_FIELDS:
            value = content.get(name)
            if value:
                item[name] = list(value) if isinstance(value, tuple) else value
            continue
        value = content.get(name, CONTENT_DEFAULTS[name])
        item[name] = list(value) if isinstance(value, tuple) else value
    item["status"] = content["status"]
    return item
