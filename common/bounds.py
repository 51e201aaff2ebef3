"""Size bounds of items (docs/items.md, "Size bounds"). Pure: dicts in, dicts out.

An inventory line is small, but the page it points at is not, and every entry of a page
gets an item of its own: 300 entries pointing at missing anchors of one 1.5 MB page wrote
1.19 GB. So, for the items of one page:

* ``doc`` and ``doc_markdown`` hold at most ``SizeLimits.doc_chars`` characters each;
* an item's JSON holds at most ``SizeLimits.item_bytes``: beyond, its long content
  fields are cut to one common size, shorter ones kept whole (identity fields are an
  inventory line's, bounded by ``common/inventory.MAX_LINE``);
* the page's items together hold at most :func:`page_budget` bytes of JSON:
  ``PAGE_FACTOR`` times the page, at least one item's worth and at most ``PAGE_ITEMS``
  items' worth (real pages give up to 6 times their size, nested sections each carrying
  their text, and 7 MB at most: the CPython changelog). Over it, the largest items are
  cut to one common size, so that small items stay whole (water-filling).

Text a site writes once and every item of its crawl carries (the inventory header's
``# Project:`` and ``# Version:``) is cut where it is read (``common/inventory.py``) to
:data:`HEADER_FIELD_CHARS` characters by :func:`clip`: the same bound then holds for
the metric labels, status lines, rows of ``versions`` and events that show it.

A cut string ends with :func:`marker` (a visible ``[… truncated by invcrawl: N
characters in all]``); a cut list keeps its first elements; either way ``reason`` names
what was cut. Everything is deterministic, so a page that did not change gives the same
items and checksums on every crawl.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast, overload

import orjson

from invcrawl.common.rope import Rope, Text, head

PAGE_FACTOR = 16
PAGE_ITEMS = 4  # a page's items hold at most this many items' bound (real: under 1)
# Content fields an item may have cut to fit: all but its status and reason.
SHRINKABLE = (
    "doc_markdown",
    "doc",
    "signature",
    "params",
    "doc_only_params",
    "references",
    "versions",
    "raises",
    "returns",
    "title",
    "parent",
)
_NOTHING_LEFT = 256  # bytes of a field not worth cutting further
# Fields the same on every item of a page (items.build_sized_item does not measure them).
PAGE_FIELDS = ("crawl", "project", "version", "checksum")


# Characters of an inventory header's Project or Version (real ones: 31 at most in 90
# inventories of the corpus and /usr/share/doc); a longer one is cut, ending with CLIPPED.
HEADER_FIELD_CHARS = 200
CLIPPED = "…"
# Characters of a Prometheus label value (consumer/metrics.py, dashboard/metrics.py):
# hosts (a DNS name has 253 at most), crawl ids, projects and versions.
METRIC_LABEL_CHARS = 256


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one :data:`CLIPPED` when
    it was cut (short names, identifiers: no room for :func:`marker`)."""
    return text if len(text) <= limit else text[: max(0, limit - len(CLIPPED))] + CLIPPED


@dataclass(frozen=True, slots=True)
class SizeLimits:
    doc_chars: int = 4_000_000
    item_bytes: int = 16 * 1024 * 1024


def page_budget(limits: SizeLimits, page_bytes: int) -> int:
    """Bytes of JSON the items of a page of ``page_bytes`` may hold together."""
    return max(limits.item_bytes, min(PAGE_FACTOR * page_bytes, PAGE_ITEMS * limits.item_bytes))


def marker(total: int, markdown: bool = False) -> str:
    return ("\n\n" if markdown else " ") + f"[… truncated by invcrawl: {total} characters in all]"


@overload
def truncate(text: str, limit: int, markdown: bool = False) -> str: ...
@overload
def truncate(text: Text, limit: int, markdown: bool = False) -> Text: ...
def truncate(text: Text, limit: int, markdown: bool = False) -> Text:
    """``text`` cut to at most ``limit`` characters, the marker included (of a rope, only
    what is kept is joined: ``common/rope.py``)."""
    if len(text) <= limit:
        return text
    mark = marker(len(text), markdown)
    return head(text, max(0, limit - len(mark))).rstrip() + mark


# An item (common/items.Item, which imports this module through common/inventory.py).
ItemT = TypeVar("ItemT", bound=Mapping[str, Any])


def bound_items(
    page_items: list[ItemT],
    limits: SizeLimits,
    page_bytes: int,
    checksum: Callable[[ItemT], str],
    sizes: list[int] | None = None,
) -> list[ItemT]:
    """Apply every bound to the items of one page, in place; a changed item gets its
    ``checksum`` again. ``sizes``: their JSON sizes as ``items.build_sized_item``
    measured them (its content fields), else measured here. Returns ``page_items``.
    (The consumer builds its items bounded from the start: ``common/pageitems.py``.)"""
    items = cast(list[dict[str, Any]], page_items)  # their fields are cut by name
    sizer = Sizer()
    if sizes is not None:  # the crawl, project, version and checksum fields, on every item
        extra = sizer.item({k: items[0].get(k) for k in PAGE_FIELDS}) if items else 0
        sizes = [size + extra for size in sizes]
    changed = apply_bounds(items, limits, page_bytes, sizer, sizes)
    for i in changed:
        items[i]["checksum"] = checksum(page_items[i])
    return page_items


def apply_bounds(
    items: list[dict[str, Any]],
    limits: SizeLimits,
    page_bytes: int,
    sizer: Sizer,
    sizes: list[int] | None = None,
) -> set[int]:
    """Cut the fields of the items of one page to fit every bound, in place (each item
    its own dict; the values in them may be shared between items, and are never
    changed). Returns the indexes of the items changed.

    Each shared value is measured and cut once, whatever the number of items holding it
    (``sizer``, ``_Cuts``): the work is that of the distinct values plus the output."""
    cuts = _Cuts()
    changed: set[int] = set()
    for i, item in enumerate(items):
        for name in ("doc", "doc_markdown"):
            value = item.get(name)
            if isinstance(value, str | Rope) and len(value) > limits.doc_chars:
                item[name] = cuts.string(value, limits.doc_chars, name == "doc_markdown")
                _note(item, f"{name} cut to {limits.doc_chars} characters")
                changed.add(i)
    if sizes is None or changed:
        sizes = [sizer.item(item) for item in items]
    budget = page_budget(limits, page_bytes)
    if max(sizes, default=0) > limits.item_bytes or sum(sizes) > budget:
        cap = min(limits.item_bytes, _water_level(sizes, budget))
        for i, item in enumerate(items):
            if sizes[i] > cap:
                _fit(item, sizes[i], cap, cuts, sizer)
                changed.add(i)
    return changed


def _water_level(sizes: list[int], budget: int) -> int:
    """The largest ``cap`` with ``sum(min(s, cap)) <= budget``."""
    if sum(sizes) <= budget:
        return max(sizes, default=0)
    ordered = sorted(sizes)
    below = 0
    for n, size in enumerate(ordered):
        rest = len(ordered) - n
        if below + size * rest > budget:
            return max(0, (budget - below) // rest)
        below += size
    return ordered[-1]


def _fit(item: dict[str, Any], size: int, target: int, cuts: _Cuts, sizer: Sizer) -> None:
    """Cut the item's content fields to one common size (water-filling: fields under it
    stay whole) so that its JSON holds ``target`` bytes."""
    fields = {name: sizer.value(item.get(name)) for name in SHRINKABLE if item.get(name)}
    cut: list[str] = []
    for _ in range(4):  # a few rounds: characters of a field are not all one byte wide
        if size <= target or not fields:
            break
        fixed = size - sum(fields.values())
        level = max(_NOTHING_LEFT, _water_level(list(fields.values()), target - fixed))
        for name, before in list(fields.items()):
            if before <= level:
                continue
            keep = max(0.0, (level - len(marker(0)) - 16) / before)
            value = item[name]
            if isinstance(value, str | Rope):
                item[name] = cuts.string(value, int(len(value) * keep), name == "doc_markdown")
            else:
                item[name] = cuts.items(value, int(len(value) * keep))
            fields[name] = sizer.value(item[name])
            size += fields[name] - before
            if name not in cut:
                cut.append(name)
    if cut:
        _note(item, f"{', '.join(cut)} cut to fit {target} bytes")


def _note(item: dict[str, Any], what: str) -> None:
    reason = item.get("reason")
    item["reason"] = f"{reason}; {what}" if reason else what


class Sizer:
    """Sizes of JSON values, each distinct value (by identity) measured once: the items
    of a page share their contents' strings and lists, and an item's size is the sum of
    its fields' (orjson writes a dict as ``{"k":v,...}``, without blanks). A rope
    (``common/rope.py``) is measured part by part, never joined: its JSON is its parts'
    (orjson escapes each character on its own), each distinct part measured once."""

    def __init__(self) -> None:
        # id -> (the value, kept alive so that its id is not reused; its size)
        self._known: dict[int, tuple[Any, int]] = {}

    def value(self, value: Any) -> int:
        if value is None:
            return 4
        if not isinstance(value, str | list | dict | Rope):
            return len(orjson.dumps(value))
        found = self._known.get(id(value))
        if found is None or found[0] is not value:
            found = self._known[id(value)] = (value, self._measure(value))
        return found[1]

    def _measure(self, value: Any) -> int:
        if not isinstance(value, Rope):
            return len(orjson.dumps(value))
        # Inner ropes first, each measured once and kept (a section's rope is a part of
        # every section around it); no recursion: a rope may be as deep as the page.
        known = self._known
        stack: list[tuple[Rope, bool]] = [(value, False)]
        while stack:
            rope, ready = stack.pop()
            if not ready:
                stack.append((rope, True))
                for part in rope.parts:
                    if isinstance(part, Rope):
                        found = known.get(id(part))
                        if found is None or found[0] is not part:
                            stack.append((part, False))
                continue
            size = 2  # its quotes; each part's own are not written
            for part in rope.parts:
                if isinstance(part, str):
                    size += len(orjson.dumps(part)) - 2
                else:
                    size += known[id(part)][1] - 2
            known[id(rope)] = (rope, size)
        return known[id(value)][1]

    def item(self, item: Mapping[str, Any]) -> int:
        """The size of ``orjson.dumps(item)`` (its keys plain ASCII, as an item's)."""
        if not item:
            return 2
        return 1 + sum(len(key) + 4 + self.value(value) for key, value in item.items())


class _Cuts:
    """Truncations shared between items: the entries of a page often share one body
    (one string or list object), and so share one cut copy of it instead of one each."""

    def __init__(self) -> None:
        self._done: dict[tuple[int, int, bool], tuple[Any, Any]] = {}

    def string(self, value: Text, limit: int, markdown: bool) -> Text:
        key = (id(value), limit, markdown)
        found = self._done.get(key)
        if found is None or found[0] is not value:
            found = self._done[key] = (value, truncate(value, limit, markdown))
        cut: Text = found[1]
        return cut

    def items(self, value: list[Any], keep: int) -> list[Any]:
        """The first ``keep`` elements of a list (shared, as the list they come from)."""
        key = (id(value), keep, False)
        found = self._done.get(key)
        if found is None or found[0] is not value:
            found = self._done[key] = (value, value[:keep])
        cut: list[Any] = found[1]
        return cut
