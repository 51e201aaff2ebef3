"""What ``crawl`` and ``export`` write of each item: the filters of ``--domain``,
``--role``, ``--status``, ``--fields`` and ``--omit-page-text`` (docs/items.md), in the
manner of Scrapy's feed exports (``FEED_EXPORT_FIELDS``, item filters).

Pure: items in, items (or nothing) out; no Redis, no files. An empty filter hands every
line back as it came, byte for byte, so that an unfiltered export stays the one it was.
A tombstone (``{"key": ..., "status": "removed"}``, of ``export --follow``) is judged by
its key's domain and role only: a follower must learn that a kept item went away."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from invcrawl.common.items import ITEM_FIELDS, STATUSES

# Page items: a whole page (std:doc) or a whole section (std:label) in their doc, the
# bulk of a large site's output (41 of Django's 46 MB) while symbols are what most
# readers want. --omit-page-text empties their text fields; the items stay.
PAGE_ROLES = frozenset({("std", "doc"), ("std", "label")})
PAGE_TEXT_FIELDS = ("doc", "doc_markdown")
REMOVED = "removed"  # a tombstone's status (frontier/stream.py)


class FilterError(ValueError):
    """A filter value that names nothing an item has (one line, for the user)."""


def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split(",") if w.strip())


def domains(text: str) -> tuple[str, ...]:
    """``--domain py,std``."""
    found = _words(text)
    if not found:
        raise ValueError(f"expected domains separated by commas (py,std), got {text!r}")
    return found


def roles(text: str) -> tuple[str, ...]:
    """``--role function,py:method``: a role of any domain, or one of ``domain:role``."""
    found = _words(text)
    if not found or any(r.count(":") > 1 or r.startswith(":") or r.endswith(":") for r in found):
        raise ValueError(f"expected roles or domain:role separated by commas, got {text!r}")
    return found


def statuses(text: str) -> tuple[str, ...]:
    """``--status ok,anchor_missing``: statuses of docs/items.md."""
    found = _words(text)
    unknown = [s for s in found if s not in STATUSES]
    if not found or unknown:
        raise ValueError(
            f"unknown status {(unknown or [text])[0]!r} (statuses: {', '.join(STATUSES)})"
        )
    return found


def field_names(text: str) -> tuple[str, ...]:
    """``--fields key,signature,url``: fields of docs/items.md, in the order written."""
    found = tuple(dict.fromkeys(_words(text)))
    unknown = [f for f in found if f not in ITEM_FIELDS]
    if not found or unknown:
        raise ValueError(
            f"unknown field {(unknown or [text])[0]!r} (fields: {', '.join(ITEM_FIELDS)})"
        )
    return found


@dataclass(frozen=True, slots=True)
class ItemFilter:
    """Which items are written (every given test passes) and what of each.

    ``domains``/``statuses``: any of them; ``roles``: a bare role matches it in every
    domain, ``domain:role`` that one; ``fields``: only these, in this order (() every
    field, in the item's order); ``omit_page_text``: std:doc and std:label items with an
    empty ``doc`` and ``doc_markdown``."""

    domains: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    omit_page_text: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.domains or self.roles or self.statuses or self.fields or self.omit_page_text
        )

    def keeps(self, item: Mapping[str, Any]) -> bool:
        domain, role = _domain_role(item)
        if self.domains and domain not in self.domains:
            return False
        if self.roles and role not in self.roles and f"{domain}:{role}" not in self.roles:
            return False
        status = item.get("status")
        return not self.statuses or status == REMOVED or status in self.statuses

    def shape(self, item: dict[str, Any]) -> dict[str, Any]:
        """The item as written (a new dict when anything is left out)."""
        if self.omit_page_text and _domain_role(item) in PAGE_ROLES:
            item = {k: ("" if k in PAGE_TEXT_FIELDS else v) for k, v in item.items()}
        if self.fields:
            if item.get("status") == REMOVED and len(item) <= 2:  # a tombstone stays whole
                return item
            item = {name: item[name] for name in self.fields if name in item}
        return item

    def apply(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """The item as written, or None when it is filtered out."""
        return self.shape(item) if self.keeps(item) else None

    def data(self, line: bytes) -> bytes | None:
        """One item's JSON line (UTF-8, no newline) as written, or None; the same bytes
        when the filter is empty, or only selects items and keeps this one."""
        if self.empty:
            return line
        item = orjson.loads(line)
        kept = self.apply(item)
        if kept is None:
            return None
        if kept is item:
            return line
        return orjson.dumps(kept)  # compact UTF-8, as items are stored (common/items.py)

    def text(self, line: str) -> str | None:
        """:meth:`data` of a line of text."""
        if self.empty:
            return line
        kept = self.data(line.encode())
        return None if kept is None else kept.decode()

    def lines(self, lines: Iterable[bytes]) -> list[bytes]:
        """The lines kept, as written."""
        if self.empty:
            return list(lines)
        return [kept for line in lines if (kept := self.data(line)) is not None]

    def texts(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            kept = self.text(line)
            if kept is not None:
                yield kept

    async def texts_async(self, lines: AsyncIterable[str]) -> AsyncIterator[str]:
        async for line in lines:
            kept = self.text(line)
            if kept is not None:
                yield kept


NO_FILTER = ItemFilter()


def _domain_role(item: Mapping[str, Any]) -> tuple[str, str]:
    """An item's domain and role; a tombstone's from its key (``domain:role:name``)."""
    domain, role = item.get("domain"), item.get("role")
    if isinstance(domain, str) and isinstance(role, str):
        return domain, role
    parts = str(item.get("key") or "").split(":", 2)
    return (parts[0], parts[1]) if len(parts) == 3 else ("", "")
