"""From a parsed inventory to page tasks: resolve every URI, group entries by page, mark
generated and off-site pages. Pure: no Redis, no Scrapy, no network.

* URIs are resolved with ``urljoin`` against the directory of the *final* inventory URL
  (after redirects), as Sphinx's intersphinx does, so absolute URIs and ``../`` work.
* The anchor is what follows the **last** ``#`` (singlehtml's
  ``index.html#document-x#anchor`` and sip's ``page.html##anchor``), as doc2dash does;
  the page is what precedes the first one. dirhtml's ``''`` and ``a/`` URIs are pages
  too (a ``file://`` directory page is fetched as its ``index.html``).
* Entries resolving to another scheme or host, or outside the inventory's directory,
  are ``offsite``: reported, never fetched. "Outside" is judged on the path as a file
  system or a server may read it (``contained``): percent-decoded until it no longer
  changes (``%2e%2e``, ``..%2f``, ``%252e``), backslashes as separators, ``;params``
  dropped, then dot segments resolved. A path that needs any of that to show a ``.`` or
  ``..`` segment is ``offsite`` even if it stays inside: no real inventory has one, and
  the encoded form is never sent to a server.
* Entries are grouped by the page URL **as fetched** (``common/sharding.fetched_url``),
  the task id's input: two spellings of one request are one task, two requests are two.
* Generated pages (``genindex``, ``search``, ``*-modindex``) are ``skipped``: their
  entries (Sphinx's built-in labels) get items without a fetch.
* One item per key ``domain:role:name``: later rows with a key already seen are
  duplicates (Sphinx <= 1.1 wrote some); they are counted, not crawled twice.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlsplit

from invcrawl.common.inventory import Entry, Inventory
from invcrawl.common.sharding import fetched_url, task_id_for
from invcrawl.common.tasks import TaskEntry, TaskStatus

GENERATED_PAGE = re.compile(r"^(genindex(-.*)?|search|([a-z0-9]+-)?modindex)$")


@dataclass(slots=True)
class Page:
    page_url: str
    fetch_url: str
    task_id: str
    status: TaskStatus = TaskStatus.FETCH
    reason: str | None = None
    targets: list[TaskEntry] = field(default_factory=list)  # anchor: after the last '#'


@dataclass(slots=True)
class Plan:
    base_url: str
    pages: list[Page]
    entries: int  # unique keys: the items a finished crawl must account for
    duplicates: list[Entry]

    @property
    def fetch_pages(self) -> int:
        return sum(1 for p in self.pages if p.status == TaskStatus.FETCH)

    def _entries_with(self, status: TaskStatus) -> int:
        return sum(len(p.targets) for p in self.pages if p.status == status)

    @property
    def skipped_entries(self) -> int:
        return self._entries_with(TaskStatus.SKIPPED)

    @property
    def offsite_entries(self) -> int:
        return self._entries_with(TaskStatus.OFFSITE)


def base_of(inventory_url: str) -> str:
    """The directory the inventory's URIs are relative to."""
    return inventory_url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[0] + "/"


def split_uri(uri: str) -> tuple[str, str]:
    """``(page part, anchor)``: the page before the first '#', the anchor after the last."""
    if "#" not in uri:
        return uri, ""
    return uri.split("#", 1)[0], uri.rsplit("#", 1)[1]


def page_name(page_url: str) -> str:
    """Last path segment without its suffix: ``genindex`` for ``.../genindex.html`` or
    dirhtml's ``.../genindex/``."""
    path = urlsplit(page_url).path.rstrip("/")
    last = path.rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[0] if "." in last else last


def offsite_reason(page_url: str, base_url: str) -> str | None:
    page, base = urlsplit(page_url), urlsplit(base_url)
    if (page.scheme, page.netloc) != (base.scheme, base.netloc):
        return f"points to another site ({page.scheme}://{page.netloc})"
    if not page.path.startswith(base.path):
        return f"outside the inventory's directory {base.path}"
    inside = contained(page.path[len(base.path) :])
    if inside is None:
        return f"outside the inventory's directory {base.path} (its path decodes to '..')"
    if not inside:
        return f"its path hides a '.' or '..' segment ({page.path[len(base.path) :][:80]!r})"
    return None


_DECODE_ROUNDS = 4  # %25 nested deeper than this is refused as hiding something
_UNICODE_ESCAPE = re.compile(r"%u([0-9a-fA-F]{4})")  # IIS's %u002e
_OVERLONG = {"\xc0\xae": ".", "\xc0\xaf": "/", "\xc1\x9c": "\\"}  # old IIS decoders


def contained(relative: str) -> bool | None:
    """Whether a path relative to the site's folder stays in it however a file system or
    a server reads it: True (plain), False (inside, but only after decoding shows a dot
    segment), None (it escapes)."""
    plain = True
    variant = relative
    for _ in range(_DECODE_ROUNDS + 1):
        depth = _depth(variant)
        if depth is None:
            return None
        if depth < 0:
            plain = False
        decoded = _decode_once(variant)
        if decoded == variant:
            return plain
        variant = decoded
    return None  # still changing after every round: nothing legitimate nests %25 so deep


def _decode_once(path: str) -> str:
    path = _UNICODE_ESCAPE.sub(lambda m: chr(int(m[1], 16)), path)
    decoded = unquote(path, encoding="latin-1")  # bytes as they are: overlong forms stay
    for overlong, char in _OVERLONG.items():
        decoded = decoded.replace(overlong, char)
    return decoded


def _depth(path: str) -> int | None:
    """Levels below the folder the path ends at; None if some ``..`` leaves it; -1 if it
    stays inside but has a ``.``/``..`` segment (backslashes separate, ``;params``
    dropped, as some servers read them)."""
    depth, dotted = 0, False
    for raw in path.replace("\\", "/").split("/"):
        segment = raw.split(";", 1)[0]
        if segment == "..":
            dotted = True
            depth -= 1
            if depth < 0:
                return None
        elif segment == ".":
            dotted = True
        elif segment:
            depth += 1
    return -1 if dotted else depth


def plan_crawl(inventory: Inventory, inventory_url: str) -> Plan:
    base = base_of(inventory_url)
    pages: dict[str, Page] = {}
    seen: set[str] = set()
    duplicates: list[Entry] = []
    # path -> (page URL, the URL as fetched): ~30 entries share each page
    page_urls: dict[str, tuple[str, str]] = {}
    for entry in inventory.entries:
        if entry.key in seen:
            duplicates.append(entry)
            continue
        seen.add(entry.key)
        path, anchor = split_uri(entry.uri)
        urls = page_urls.get(path)
        if urls is None:
            page_url = urljoin(base, path) if path else base
            urls = page_urls[path] = (page_url, fetched_url(page_url))
        page = pages.get(urls[1])  # one task per request: the first spelling names it
        if page is None:
            page = pages[urls[1]] = _new_page(urls[0], base)
        page.targets.append(TaskEntry.on_page(entry, anchor))
    return Plan(base_url=base, pages=list(pages.values()), entries=len(seen), duplicates=duplicates)


def _new_page(page_url: str, base: str) -> Page:
    fetch_url = page_url
    if page_url.startswith("file:") and page_url.endswith("/"):
        fetch_url = page_url + "index.html"
    page = Page(page_url=page_url, fetch_url=fetch_url, task_id=task_id_for(page_url))
    reason = offsite_reason(page_url, base)
    if reason:
        page.status, page.reason = TaskStatus.OFFSITE, reason
    elif GENERATED_PAGE.match(page_name(page_url)):
        page.status, page.reason = TaskStatus.SKIPPED, f"generated page ({page_name(page_url)})"
    return page


class PlanCache:
    """The last plan of each inventory URL, for a process that reads the same inventories
    again and again (``produce --every``): an inventory whose bytes did not change (a 304,
    or the same body) is not parsed and planned again. Bounded by the entries it holds
    (about 500 B each, inventory and plan), least recently used first out."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self.max_entries = max_entries
        self._plans: OrderedDict[str, tuple[str, Inventory, Plan]] = OrderedDict()
        self._held = 0

    def get(self, url: str, sha256: str) -> tuple[Inventory, Plan] | None:
        cached = self._plans.get(url)
        if cached is None or cached[0] != sha256:
            return None
        self._plans.move_to_end(url)
        return cached[1], cached[2]

    def put(self, url: str, sha256: str, inventory: Inventory, plan: Plan) -> None:
        self._drop(url)
        size = len(inventory.entries)
        if size > self.max_entries:
            return
        while self._held + size > self.max_entries:
            self._drop(next(iter(self._plans)))
        self._plans[url] = (sha256, inventory, plan)
        self._held += size

    def _drop(self, url: str) -> None:
        cached = self._plans.pop(url, None)
        if cached is not None:
            self._held -= len(cached[1].entries)

    def __len__(self) -> int:
        return len(self._plans)
