"""Answers sized for an agent (issue 46.4). Pure. A site writes what it likes: a symbol
with a 4 MB doc gave an 8 MB ``get_symbol`` answer (``doc`` and ``doc_markdown``), 100
search results of 16,000-character names 5 MB. Every answer's JSON holds at most
``max_chars`` characters (:data:`DEFAULT_MAX_CHARS`, or the server's ``--max-chars``):

* ``get_symbol`` cuts the item's long fields (:data:`PAGED`) to one common size, the
  shorter ones kept whole (water-filling); a text is cut at a block boundary (a blank
  line, else a line, else a space) and ends with :func:`marker`, a list keeps its first
  elements; ``cut`` says for each field how much is shown and where the rest begins, and
  ``get_symbol(field=F, offset=N)`` reads the rest (:func:`page`), part by part, which
  joined give the field exactly;
* every other answer keeps the first elements of its list that fit (``cut`` says how
  many of how many), a string too long for the bound cut with the marker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

DEFAULT_MAX_CHARS = 40_000
LEAST_MAX_CHARS = 2_000
MOST_MAX_CHARS = 1_000_000
# Item fields a get_symbol answer cuts, longest first as a rule (text: characters, list:
# elements); identity fields are an inventory line's, bounded (common/inventory.MAX_LINE).
PAGED = (
    "doc_markdown",
    "doc",
    "references",
    "signature",
    "params",
    "returns",
    "raises",
    "versions",
    "labels",
    "title",
    "parent",
)
_SLACK = 400  # characters kept for the markers and the ``cut`` record
_KEEP = 64  # a field this short is never cut


def size(value: Any) -> int:
    """Characters of ``value``'s JSON (bytes of UTF-8 bound them from above)."""
    return len(orjson.dumps(value))


def marker(field: str, shown: int, total: int) -> str:
    """What ends a cut text: how much is shown and how to read the rest."""
    return (
        f"\n\n[… cut by invcrawl: {shown:,} of {total:,} characters shown; "
        f"get_symbol with field={field!r} offset={shown} reads on]"
    )


def block_end(text: str, start: int, most: int) -> int:
    """Where a part of ``text`` from ``start`` of at most ``most`` characters ends: at
    the end of the text, else after the last blank line, line break or space in its
    second half, else at ``most``."""
    end = start + max(1, most)
    if end >= len(text):
        return len(text)
    window = text[start:end]
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at >= most // 2:
            return start + at + len(separator)
    return end


def _list_end(values: list[Any], start: int, most: int) -> int:
    """The end of the elements from ``start`` whose JSON fits ``most`` (one at least)."""
    used, end = 2, start
    while end < len(values):
        used += size(values[end]) + 1
        if used > most and end > start:
            break
        end += 1
    return end


def _cut_value(field: str, value: Any, most: int) -> tuple[Any, dict[str, int] | None]:
    """``value`` within about ``most`` characters of JSON, and what was cut (None:
    kept whole)."""
    if size(value) <= most:
        return value, None
    if isinstance(value, str):
        # JSON escapes make a text longer: cut its characters in that proportion
        chars = max(1, most * len(value) // max(1, size(value)))
        end = block_end(value, 0, chars)
        return value[:end] + marker(field, end, len(value)), {
            "shown": end,
            "total": len(value),
            "next_offset": end,
        }
    if isinstance(value, list):
        end = _list_end(value, 0, most) if most > 2 else 0
        return value[:end], {"shown": end, "total": len(value), "next_offset": end}
    return value, None


def fit_item(answer: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """A get_symbol ``answer`` ({..., "item": item}) within ``max_chars``: the item's
    :data:`PAGED` fields cut to one common size (water-filling), ``cut`` naming them."""
    item = answer["item"]
    if size(answer) <= max_chars:
        return answer
    long = {f: item[f] for f in PAGED if item.get(f) is not None and size(item[f]) > _KEEP}
    bare = {**answer, "item": {**item, **{f: None for f in long}}}
    budget = max_chars - size(bare) - _SLACK * (1 + len(long))
    for _ in range(6):
        allowed = _water_level(sorted(size(v) for v in long.values()), max(0, budget))
        fitted, cut = dict(item), {}
        for field, value in long.items():
            fitted[field], what = _cut_value(field, value, allowed)
            if what is not None:
                cut[field] = what
        out = {**answer, "item": fitted, "cut": cut}
        excess = size(out) - max_chars
        if excess <= 0:
            return out
        budget -= excess + _SLACK
    return {**bare, "cut": {f: {"shown": 0, "total": _length(v), "next_offset": 0}
                            for f, v in long.items()}}  # fmt: skip


def _length(value: Any) -> int:
    return len(value) if isinstance(value, (str, list)) else 0


def _water_level(sizes: list[int], budget: int) -> int:
    """The common size each field is cut to, the smaller ones kept whole, so that all
    together hold ``budget``."""
    left, count = budget, len(sizes)
    for n, field_size in enumerate(sizes):
        share = left // max(1, count - n)
        if field_size > share:
            return share
        left -= field_size
    return max(sizes, default=0)


def page(value: Any, offset: int, most: int) -> tuple[Any, int | None]:
    """The part of an item's field from ``offset`` (characters of a text, elements of a
    list) within about ``most`` characters of JSON, and where the next one begins (None:
    this part ends the field)."""
    part: Any
    if isinstance(value, str):
        chars = most
        while True:
            end = block_end(value, offset, chars)
            part = value[offset:end]
            if size(part) <= most or chars <= 1:
                break
            chars = max(1, chars * most // size(part))
    elif isinstance(value, list):
        end = _list_end(value, offset, most)
        part = value[offset:end]
    else:
        return value, None
    return part, end if end < len(value) else None


def fit_list(data: dict[str, Any], key: str, max_chars: int) -> dict[str, Any]:
    """``data`` within ``max_chars``: the first elements of ``data[key]`` that fit (one at
    least, its strings cut), ``cut`` saying how many of how many."""
    if size(data) <= max_chars:
        return data
    values = data[key]
    rest = size({**data, key: []}) + _SLACK
    end = _list_end(values, 0, max_chars - rest)
    kept = [cut_strings(v, max_chars - rest) for v in values[:end]]
    return {**data, key: kept, "cut": {key: {"shown": end, "total": len(values)}}}


def cut_strings(value: Any, most: int) -> Any:
    """``value`` with each string of it cut to a share of ``most`` (a marker ending it)."""
    if size(value) <= most:
        return value
    strings = _count_strings(value)
    share = max(_KEEP, most // max(1, strings) - 80)

    def cut(text: str) -> str:
        if len(text) <= share:
            return text
        end = block_end(text, 0, share)
        return text[:end] + f"[… cut by invcrawl: {len(text):,} characters in all]"

    return _map_strings(value, cut)


def _count_strings(value: Any) -> int:
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return sum(_count_strings(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_strings(v) for v in value)
    return 0


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value
