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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from invcrawl.common.bounds import SizeLimits, Sizer, apply_bounds
from invcrawl.common.items import CrawlInfo, Item, checksum, item_fields
from invcrawl.common.tasks import Task, TaskEntry

__all__ = ["page_items"]

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
    then ``bounds.bound_items`` give, without their cost per entry."""
    items = [_shallow(crawl, task, e, c) for e, c in zip(task.entries, contents, strict=True)]
    apply_bounds(items, limits, page_bytes, Sizer())
    out = []
    for item in items:
        for name, value in item.items():
            if isinstance(value, list):  # an entry's own lists and dicts, now bounded
                item[name] = [dict(x) if isinstance(x, dict) else x for x in value]
        item["checksum"] = checksum(item)
        out.append(cast(Item, item))  # every field of Item, in its order
    return out


def _shallow(
    crawl: CrawlInfo, task: Task, entry: TaskEntry, content: Mapping[str, Any]
) -> dict[str, Any]:
    """``items.build_sized_item``'s item, its fields in the same order, its values those
    of ``content`` (shared, not copied) and its checksum a stand-in."""
    item = item_fields(crawl, task, entry, content)
    item["checksum"] = _CHECKSUM
    return item
