"""Human-readable output, its primitives and the crawl's own lines (progress, the run's
JSON); the readers' tables are ``invcrawl/render_status.py``. Pure: data in, text out.

Every function takes the ``width`` of the terminal the text goes to (``invcrawl/
terminal.width``) and fits each line in it, or None when the output is piped or
redirected: then nothing is cut (a long URL, crawl id or error stays whole) and only
wrapped lists break near :data:`SOFT_WIDTH` columns, for readability.

Strings a site provides (an inventory's Project and Version, its domain:role names, URLs,
reasons and errors quoting them) reach the terminal through :func:`safe`: a control
character (ESC starting an escape sequence, a carriage return, a bidirectional override)
is shown escaped (``\x1b``), never written raw. Every render function returns text
passed through :func:`terminal_safe` as well."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import wraps
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (types only: search and show print no crawl summary)
    from invcrawl.frontier.summary import CrawlSummary, FleetTotals

SOFT_WIDTH = 80  # where lists wrap when the output is not a terminal


# C0 and C1 controls, DEL, and the invisible format characters that reorder or hide text
# (zero-width, bidirectional embeddings, overrides and isolates, the BOM).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_CONTROL_BUT_NEWLINE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: Any) -> str:
    """A site-provided value as one line of inert text: every control character escaped
    (newlines too: a value never forges a line of its own)."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


def terminal_safe(text: str) -> str:
    """Text for the terminal: control characters escaped, the newlines kept."""
    return _CONTROL_BUT_NEWLINE.sub(_escaped, text) if _CONTROL_BUT_NEWLINE.search(text) else text


def json_safe(text: str) -> str:
    """JSON for the terminal: the control and format characters JSON leaves raw (C1,
    DEL, bidirectional overrides...) written as ``\\uXXXX`` escapes, which JSON reads
    back as the same string (JSON escapes C0 controls itself)."""

    def escaped(match: re.Match[str]) -> str:
        return f"\\u{ord(match[0]):04x}"

    return _CONTROL_BUT_NEWLINE.sub(escaped, text) if _CONTROL_BUT_NEWLINE.search(text) else text


def terminal_text(render: Callable[..., str]) -> Callable[..., str]:
    """A render function whose text goes through :func:`terminal_safe`."""

    @wraps(render)
    def wrapped(*args: Any, **kwargs: Any) -> str:
        return terminal_safe(render(*args, **kwargs))

    return wrapped


def fit(line: str, width: int | None) -> str:
    """``line`` cut to ``width`` columns (None: whole)."""
    return line if width is None else line[:width]


def first_fitting(candidates: Iterable[str], width: int | None) -> str:
    """The first of ``candidates`` (most to least complete) that fits in ``width``; the
    last one cut if none does."""
    line = ""
    for line in candidates:
        if width is None or len(line) <= width:
            return line
    return fit(line, width)


def bar(done: int, total: int, width: int = 30) -> str:
    fraction = min(1.0, done / total) if total else 0.0
    filled = round(fraction * width)
    return "[" + "#" * filled + "." * (width - filled) + f"] {fraction * 100:5.1f}%"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 2 * 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


@terminal_text
def first_line(sites: Sequence[tuple[str, str]], width: int | None) -> str:
    """The run's first line: its crawls and what they read. Piped (``width`` None) it is
    whole; on a terminal the list of crawls is shortened to fit."""
    what = sites[0][0] if len(sites) == 1 else f"{len(sites)} sites"
    ids = [crawl_id for _, crawl_id in sites]
    line = f"crawl {', '.join(ids)}: reading the inventory of {what}"
    while width is not None and len(line) > width and len(ids) > 1:
        ids.pop()
        line = f"crawl {', '.join(ids)}, ...: reading the inventory of {what}"
    return line


def crawl_seconds(s: CrawlSummary, run_seconds: float) -> float:
    """The time of one crawl, from the times Redis recorded for it: its start (its
    creation, or its refresh round's) to its end. A multi-site run's summaries each said
    the whole run's ("finished in 1m07s" for a crawl done in seconds). ``run_seconds``
    when Redis holds no end (or no start) for it."""
    start = (s.last_refresh_at if s.refresh_round else None) or s.created_at or s.started_at
    if not (start and s.finished_at) or s.finished_at < start:
        return run_seconds
    return (s.finished_at - start) / 1000


def interrupted_note(
    crawl_ids: Sequence[str], written: Iterable[str], items: Mapping[str, int]
) -> str:
    """What an interrupted ``crawl`` keeps: the files of the crawls it finished; the
    items of the others stay in Redis (their partial files are removed: a run that
    finishes them writes them whole). ``export`` is hinted for a crawl that holds items
    only (``items``: each crawl's count): Ctrl-C while an inventory was read hinted
    ``export --crawl-id`` of a crawl that did not exist yet."""
    done = set(written)
    left = [crawl_id for crawl_id in crawl_ids if crawl_id not in done]
    note = "interrupted: run the same command again to resume"
    if not left:
        return note
    which = (
        f"crawl {left[0]} is" if len(left) == 1 else f"{len(left)} crawls ({', '.join(left)}) are"
    )
    holding = [crawl_id for crawl_id in left if items.get(crawl_id, 0) > 0]
    if not holding:
        return f"{note}: {which} not finished and no item is stored yet"
    return (
        f"{note}: {which} not finished, the items so far are kept in Redis, not in a "
        f"partial file (`invcrawl export --crawl-id {holding[0]}` writes them)"
    )


@terminal_text
def progress_line(s: CrawlSummary, width: int | None = None) -> str:
    """One line for the crawl command's live progress. On a narrow terminal the item
    count goes first, then the rate, then the bar shrinks: the ETA always shows."""
    settled = s.pages_settled
    if s.producer != "done" and not (s.pages_total and settled):
        # (a refresh round keeps the last round's page count: 0/N would look stuck)
        what = f"refresh round {s.refresh_round}" if s.refresh_round else "producing"
        return fit(f"{what}: reading the inventory and enqueueing its pages...", width)
    dead = f" ({s.pages_dead} dead)" if s.pages_dead else ""
    items = f" {s.items} items ({s.items_by_status.get('ok', 0)} ok)"
    rate = f" {s.rate_pages_s:.1f}/s"
    eta = f" ETA {duration(s.eta_s)}"

    def line(bar_width: int, *parts: str) -> str:
        pages = f"{settled}/{s.pages_total} pages{dead}"
        return f"{bar(settled, s.pages_total, bar_width)} {pages}" + "".join(parts)

    return first_fitting(
        (
            line(20, items, rate, eta),
            line(20, rate, eta),
            line(20, eta),
            line(10, eta),
            f"{settled}/{s.pages_total} pages{dead}{eta}",
        ),
        width,
    )


@terminal_text
def fleet_progress_line(fleet: FleetTotals, width: int | None = None) -> str:
    """One line for the live progress of a multi-site crawl: every crawl together."""
    total, settled, dead = fleet.pages_total, fleet.pages_settled, fleet.pages_dead
    dead_text = f" ({dead} dead)" if dead else ""
    done = f" {fleet.settled_crawls}/{fleet.crawls} crawls done"
    rate_text = f" {fleet.rate_pages_s:.1f}/s"

    def line(bar_width: int, *parts: str) -> str:
        return f"{bar(settled, total, bar_width)} {settled}/{total} pages{dead_text}" + "".join(
            parts
        )

    return first_fitting(
        (
            line(20, done, rate_text),
            line(20, done),
            line(10, done),
            f"{settled}/{total} pages{dead_text}{done}",
        ),
        width,
    )


def wrap(label: str, parts: Iterable[str], sep: str = "  ", width: int | None = None) -> list[str]:
    """``label`` followed by ``parts`` joined with ``sep``, wrapped under a hanging indent
    at ``width`` columns (None: at :data:`SOFT_WIDTH`, and a part longer than a line is
    kept whole; with a width it is cut)."""
    limit = SOFT_WIDTH if width is None else width
    lines: list[str] = []
    current = ""
    for part in parts:
        if current and len(label) + len(current) + len(sep) + len(part) > limit:
            lines.append(current)
            current = part
        else:
            current = f"{current}{sep}{part}" if current else part
    lines.append(current)
    pad = " " * len(label)
    return [fit((label if i == 0 else pad) + text, width) for i, text in enumerate(lines)]


def generators_line(s: CrawlSummary) -> str:
    """The crawl summary's line of items per page generator (none when no page was read):
    a site of an unknown generator shows here (docs/items.md, ``generator``)."""
    if not s.items_by_generator:
        return ""
    return "  generator " + ", ".join(f"{k} {v}" for k, v in s.items_by_generator.items()) + "\n"


def crawl_json(  # noqa: PLR0917 - the run's figures, each named
    summaries: dict[str, CrawlSummary],
    written: dict[str, int],
    outputs: dict[str, str],
    before: dict[str, dict[str, int]],
    seconds: float,
    code: int,
) -> dict[str, Any]:
    """``crawl --json``: the run's summary as one JSON document: per crawl its state,
    entries, pages, items by status, output file and items written (and, for a refresh,
    what changed); the time and the exit code."""
    crawls = []
    for crawl_id, s in summaries.items():
        row: dict[str, Any] = {
            "crawl_id": crawl_id,
            "site": s.site,
            "state": s.state,
            "entries": s.entries_total,
            "pages": {"total": s.pages_total, "done": s.pages_done, "dead": s.pages_dead},
            "items": {
                "total": s.items,
                "by_status": s.items_by_status,
                "by_generator": s.items_by_generator,
            },
            "output": outputs.get(crawl_id),
            "written": written.get(crawl_id),
            "error": s.error,
        }
        if crawl_id in before:
            was, now = before[crawl_id], s.counters
            row["refresh"] = {
                "round": s.refresh_round,
                **{
                    event: now.get(counter, 0) - was.get(counter, 0)
                    for event, counter in (
                        ("added", "items_new"),
                        ("changed", "items_updated"),
                        ("removed", "items_removed"),
                    )
                },
                "pages_unchanged": now.get("pages:unchanged", 0),
                "pages_fetched": now.get("pages:fetched", 0),
            }
        crawls.append(row)
    return {"crawls": crawls, "seconds": round(seconds, 3), "exit_code": code}
