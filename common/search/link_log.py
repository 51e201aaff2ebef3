"""The link log of a crawl (``invcrawl:{C}:slnk``, docs/search.md): which symbols the
docs of each page link to, read as the number of other pages linking to a symbol, the
search's inbound-link prior (``fusion.py``). Pure (no Redis).

The pages of a site link to what matters on it: CPython's docs link to ``open`` from
hundreds of pages and to ``mailbox.MH.get_folder`` from none, and a question worded like
either's first sentence is far more often about the first. The count is of distinct
pages, so one page's many links to a symbol count once and a symbol's own page never.

A record is a page's: its digest (PAGE_BYTES, from its task id: 12 hex, the first of
the id), the number of its distinct targets (COUNT_BYTES, big-endian, at most
MAX_TARGETS) and their digests (:func:`url_digest` of each link's URL, sorted). Records
are read in order and a page's last one wins: a page whose items changed appends its
record again (``commit.lua``), a page gone from the inventory a record of no target
(``tombstone.lua``), so a count is always that of the pages as last committed.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Iterator

PAGE_BYTES = 6  # of a page's digest: the first 12 hex of its task id
TARGET_BYTES = 6  # of a link target's digest
COUNT_BYTES = 2
MAX_TARGETS = 4096  # distinct targets kept of one page (the first by digest)
HEAD_BYTES = PAGE_BYTES + COUNT_BYTES
WEIGHT = 0.05  # of ln(1 + pages linking), in the re-ranker's blend (fusion._rerank)


def url_digest(url: str) -> bytes:
    """The digest of a link target: its absolute URL, anchor included, as the item's
    ``url`` spells it and the converter made the doc's links (``extract/links.py``)."""
    return hashlib.blake2b(url.encode("utf-8", "replace"), digest_size=TARGET_BYTES).digest()


def page_digest(task_id: str) -> bytes:
    """A page's digest: the first PAGE_BYTES of its task id (hex)."""
    return bytes.fromhex(task_id[: 2 * PAGE_BYTES])


def page_of(url: str) -> str:
    """The page of a URL: what is before its anchor."""
    return url.split("#", 1)[0]


def page_record(task_id: str, page_url: str, urls: Iterable[str]) -> bytes:
    """The record of the page ``task_id`` (at ``page_url``) whose items' docs link to
    ``urls``: their distinct targets on other pages, at most MAX_TARGETS."""
    own = page_of(page_url)
    targets = sorted({url_digest(u) for u in urls if page_of(u) != own})[:MAX_TARGETS]
    head = page_digest(task_id) + len(targets).to_bytes(COUNT_BYTES, "big")
    return head + b"".join(targets)


def each_record(data: bytes) -> Iterator[tuple[bytes, tuple[bytes, ...], int]]:
    """Each whole record of ``data``, in order: (its page's digest, its targets, the
    offset after it); a torn record at the end is left out."""
    at, end = 0, len(data)
    while at + HEAD_BYTES <= end:
        n = int.from_bytes(data[at + PAGE_BYTES : at + HEAD_BYTES], "big")
        stop = at + HEAD_BYTES + n * TARGET_BYTES
        if stop > end:
            return
        body = data[at + HEAD_BYTES : stop]
        targets = tuple(body[i : i + TARGET_BYTES] for i in range(0, len(body), TARGET_BYTES))
        yield data[at : at + PAGE_BYTES], targets, stop
        at = stop


class InboundLinks:
    """The pages of one crawl linking to each target, as its log holds them read to
    ``offset``: fold more of the log in with :meth:`merge`, ask with :meth:`count`."""

    def __init__(self) -> None:
        self.offset = 0
        self._pages: dict[bytes, tuple[bytes, ...]] = {}
        self._counts: Counter[bytes] = Counter()

    def merge(self, data: bytes) -> None:
        """Fold the log's bytes from ``offset`` on in (a page's last record wins); a torn
        record is left for the next read."""
        used = 0
        for page, targets, stop in each_record(data):
            old = self._pages.get(page, ())
            if old != targets:
                self._counts.subtract(old)
                self._counts.update(targets)
                self._pages[page] = targets
            used = stop
        self.offset += used

    def count(self, url: str) -> int:
        """How many pages link to ``url`` (another page's item: never its own page)."""
        return max(0, self._counts.get(url_digest(url), 0)) if url else 0

    def records(self) -> dict[bytes, tuple[bytes, ...]]:
        """Each page's targets as last recorded (a copy)."""
        return dict(self._pages)


def prior(links: int, weight: float | None = None) -> float:
    """The inbound-link prior of a symbol ``links`` pages link to: 1 for none, rising
    by ``weight`` (WEIGHT when None: the re-ranker's, ``fusion._rerank`` multiplies its
    blend by it) a factor e of pages."""
    return 1.0 + (WEIGHT if weight is None else weight) * math.log1p(max(links, 0))
