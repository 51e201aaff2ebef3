"""The items of one page, bounded as they are built (docs/items.md, "Size bounds"). Pure:
contents in, items out; no Redis, no Scrapy.

Many inventory entries may point at one anchor of a page, and the extractors give them one
content, its strings and lists shared (computed once per anchor). Building a full item per
entry and serialising each before the bounds cut them cost a copy of that content per entry:
a 2 MB pydoctor page with a 100,000-parameter member and 150 entries at its anchor took a
consumer to 3 GB. Here each entry's item is first a shallow dict over the shared values; the
bounds are applied to those (each shared value measured and cut once: ``bounds.Sizer``), and
only then does an entry get its own copy, of the bounded result. A page's extraction thus
holds the page, one content per anchor and at most the page's output bound
(``bounds.page_budget``); the work is that of the distinct contents plus the output, linear
in the entries.

Nested sections each holding the next (std:doc, a label per section) have contents of
their own, each the text of all it contains: their long texts come as ropes
(``common/rope.py``, ``extract_page(lazy=True)``), joined here only once bounded, unless
they hold less than the page's output bound together (then joined first, as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from invcrawl.common.bounds import PAGE_FIELDS, SizeLimits, Sizer, apply_bounds, page_budget
from invcrawl.common.items import (
    CrawlInfo,
    Item,
    build_sized_item,
    checksum,
    content_view,
    item_fields,
)
from invcrawl.common.rope import Rope, materialise
from invcrawl.common.tasks import Task, TaskEntry

__all__ = ["page_items"]

# The fields that can be large (strings over 256 characters, non-empty lists): those whose
# sharing between entries matters.
_LARGE = (
    "doc_markdown",
    "doc",
    "signature",
    "params",
    "doc_only_params",
    "references",
    "returns",
    "raises",
    "versions",
    "title",
)
# Shared values of at most this many bytes of JSON are serialised with each entry holding
# them (as before: one serialisation gives an item's checksum and size); larger ones once.
SHARED_BYTES = 64 * 1024
# Stands for the checksum while the bounds measure an item (it is 16 hex digits).
_CHECKSUM = "0" * 16


def page_items(
    crawl: CrawlInfo,
    task: Task,
    contents: Sequence[Mapping[str, Any]],
    limits: SizeLimits,
    page_bytes: int,
) -> list[Item]:
    """The items of the page's entries (``task.entries``, one content each, in order),
    every bound applied, each with its checksum. The same items as ``items.build_item``
    then ``bounds.bound_items`` give, without their cost per entry.

    An entry is built as before (one serialisation gives its checksum and its size)
    unless it shares more than ``SHARED_BYTES`` of values with an earlier entry (another
    entry at its anchor): then it is a shallow item measured through the page's ``Sizer``,
    so that a shared value is serialised once whatever the number of entries. An entry
    sharing values copies them once they are bounded.

    The contents' ropes (``extract_page(lazy=True)``) are joined first when they hold
    less than the page's output bound together; else their entries are shallow items,
    a rope measured part by part, and only what the bounds keep of it is joined."""
    lazy = _ropes(contents) > page_budget(limits, page_bytes)
    if not lazy:
        materialise(cast(list[dict[str, Any]], contents))
    sizer = Sizer()
    seen: set[int] = set()  # ids of the large values of the entries built so far
    items: list[dict[str, Any]] = []
    sizes: list[int] = []
    own: list[bool] = []  # built by build_sized_item: its checksum is its content's
    shares: list[bool] = []  # holds values of an earlier entry: copies them once bounded
    extra = 0
    for entry, content in zip(task.entries, contents, strict=True):
        large = [v for k in _LARGE if (v := content.get(k)) and (type(v) is list or len(v) > 256)]
        shared = not seen.isdisjoint(id(v) for v in large)
        rope = lazy and any(isinstance(v, Rope) for v in large)
        own_size = not shared or sum(sizer.value(v) for v in large) <= SHARED_BYTES
        if own_size and not rope:
            built, size = build_sized_item(crawl, task, entry, content)
            if not extra:  # crawl, project, version and checksum: the same on every item
                extra = sizer.item({k: built.get(k) for k in PAGE_FIELDS})
            items.append(cast(dict[str, Any], built))
            sizes.append(size + extra)
            own.append(True)
        else:
            shallow = _shallow(crawl, task, entry, content)
            items.append(shallow)
            if own_size:  # a rope's: measured as build_sized_item measures its string
                if not extra:
                    extra = sizer.item({k: shallow.get(k) for k in PAGE_FIELDS})
                sizes.append(sizer.item(content_view(shallow)) + extra)
            else:
                sizes.append(sizer.item(shallow))
            own.append(False)
        shares.append(shared)
        seen.update(id(v) for v in large)
    changed = apply_bounds(items, limits, page_bytes, sizer, sizes)
    if lazy:  # what the bounds kept of each rope, joined once
        materialise(items)
    for i, fields in enumerate(items):
        if shares[i] or i in changed:
            for name, value in fields.items():
                if value and isinstance(value, list):  # its own lists and dicts, bounded
                    fields[name] = [dict(x) if isinstance(x, dict) else x for x in value]
        if i in changed or not own[i]:
            fields["checksum"] = checksum(fields)
    return cast(list[Item], items)  # every field of Item, in its order


def _ropes(contents: Sequence[Mapping[str, Any]]) -> int:
    """Characters of the contents' distinct ropes."""
    found: dict[int, int] = {}
    for content in contents:
        for value in content.values():
            if isinstance(value, Rope):
                found[id(value)] = len(value)
    return sum(found.values())


def _shallow(
    crawl: CrawlInfo, task: Task, entry: TaskEntry, content: Mapping[str, Any]
) -> dict[str, Any]:
    """``items.build_sized_item``'s item, its values those of ``content`` (shared, not
    copied) and its checksum a stand-in."""
    item = item_fields(crawl, task, entry, content)
    item["checksum"] = _CHECKSUM
    return item
