"""Human-readable output, sized for an 80-column terminal. Pure: data in, text out.

Strings a site provides (an inventory's Project and Version, its domain:role names, URLs,
reasons and errors quoting them) reach the terminal through :func:`safe`: a control
character (ESC starting an escape sequence, a carriage return, a bidirectional override)
is shown escaped (``\x1b``), never written raw. Every render function returns text
passed through :func:`terminal_safe` as well.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

WIDTH = 80

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


def _terminal(render: Callable[..., str]) -> Callable[..., str]:
    @wraps(render)
    def wrapped(*args: Any, **kwargs: Any) -> str:
        return terminal_safe(render(*args, **kwargs))

    return wrapped


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
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


@_terminal
def progress_line(s: dict[str, Any]) -> str:
    """One line for the crawl command's live progress."""
    by = s["items_by_status"]
    settled = s["pages_done"] + s["pages_dead"]
    if not s["pages_total"] and s.get("producer") != "done":
        return "producing: reading the inventory and enqueueing its pages..."
    # Dead pages next to the page count: the line is cut at the terminal width, from
    # the end (the rate and ETA matter least).
    dead = f" ({s['pages_dead']} dead)" if s["pages_dead"] else ""
    line = (
        f"{bar(settled, s['pages_total'], 20)} {settled}/{s['pages_total']} pages{dead} "
        f"{s['items']} items ({by['ok']} ok) {s['rate_pages_s']:.1f}/s "
        f"ETA {duration(s['eta_s'])}"
    )
    return line[: WIDTH - 1]


@_terminal
def fleet_progress_line(crawls: list[dict[str, Any]]) -> str:
    """One line for the live progress of a multi-site crawl: every crawl together."""
    total = sum(c["pages_total"] for c in crawls)
    settled = sum(c["pages_done"] + c["pages_dead"] for c in crawls)
    dead = sum(c["pages_dead"] for c in crawls)
    finished = sum(c["state"] in ("finished", "failed") for c in crawls)
    rate = sum(c["rate_pages_s"] for c in crawls if c["state"] in ("producing", "running"))
    dead_text = f" ({dead} dead)" if dead else ""
    line = (
        f"{bar(settled, total, 20)} {settled}/{total} pages{dead_text} "
        f"{finished}/{len(crawls)} crawls done {rate:.1f}/s"
    )
    return line[: WIDTH - 1]


def wrap(label: str, parts: Iterable[str], sep: str = "  ") -> list[str]:
    """``label`` followed by ``parts`` joined with ``sep``, wrapped at WIDTH columns under
    a hanging indent (a part longer than a line is cut)."""
    lines: list[str] = []
    current = ""
    for part in parts:
        if current and len(label) + len(current) + len(sep) + len(part) > WIDTH:
            lines.append(current)
            current = part
        else:
            current = f"{current}{sep}{part}" if current else part
    lines.append(current)
    pad = " " * len(label)
    return [((label if i == 0 else pad) + text)[:WIDTH] for i, text in enumerate(lines)]


@_terminal
def render_status(s: dict[str, Any]) -> str:
    """The status of one crawl; every line fits in WIDTH columns, whatever the figures."""
    by = s["items_by_status"]
    title = f"crawl {s['crawl_id']}  [{s['state']}]"
    if s.get("project"):
        title += f"  {safe(s['project'])} {safe(s.get('version'))}".rstrip()
    lines = [title[:WIDTH], f"site     {safe(s.get('site')) or '-'}"[:WIDTH]]
    settled = s["pages_done"] + s["pages_dead"]
    figures = f"  {s['pages_done']} done, {s['pages_dead']} dead / {s['pages_total']}"
    # "pages    " + bar (its width + 9 columns) + figures
    width = max(10, min(30, WIDTH - 9 - 9 - len(figures)))
    lines.append(f"pages    {bar(settled, s['pages_total'], width)}{figures}"[:WIDTH])
    lines += wrap(
        "entries  ",
        [f"{s['entries_total']}", f" items {s['items']}", f" stream {s['stream_entries']}"],
    )
    lines += wrap("status   ", [f"{k} {v}" for k, v in by.items()])
    lines += wrap(
        "rate     ",
        [
            f"{s['rate_pages_s']:.1f} pages/s",
            f" elapsed {duration(s['elapsed_s'])}",
            f" ETA {duration(s['eta_s'])}",
            f" consumers {len(s['consumers_alive'])}",
        ],
    )
    c = s["counters"]
    lines += wrap(
        "counters ",
        [
            f"{name} {c.get(name, 0)}"
            for name in ("claims", "retries", "reaped", "fenced", "redriven")
        ],
    )
    if s.get("redis_memory"):
        mem = s["redis_memory"]
        lines += wrap(
            "memory   ",
            [f"{mib(mem['total'])} in Redis"]
            + [f" {k.replace('_', ' ')} {mib(v)}" for k, v in mem.items() if k != "total"],
        )
    lines += wrap(
        "stream   ",
        [
            f"{s.get('stream_entries', 0)} entries",
            f" retain {s.get('retain_items', 'all')}",
            f" trimmed {s.get('items_trimmed', 0)}",
        ],
    )
    if s.get("refresh_round") or s.get("next_refresh_at"):
        lines += wrap("refresh  ", refresh_parts(s, s.get("server_time")))
    if s.get("error"):
        lines.append(f"error    {safe(s['error'])}"[:WIDTH])
    lines.append("")
    lines.append(f"{'slot':>4} {'queued':>7} {'inflight':>8} {'delayed':>7} {'dead':>5}  owner")
    for row in s["per_slot"]:
        owner = row["owner"] or "-"
        lines.append(
            f"{row['slot']:>4} {row['queued']:>7} {row['inflight']:>8} "
            f"{row['delayed']:>7} {row.get('dead', 0):>5}  {owner}"[:WIDTH]
        )
    if s["consumers_alive"]:
        lines.append("")
        lines += wrap("consumers ", s["consumers_alive"], ", ")
    return "\n".join(lines)


@_terminal
def render_fleet(fleet: dict[str, Any]) -> str:
    """Every crawl on one line, then every busy host; each line fits in WIDTH columns."""
    crawls, hosts, t = fleet["crawls"], fleet["hosts"], fleet["totals"]
    if not crawls:
        return "no crawls in this Redis"
    dead = f" ({t['pages_dead']} dead)" if t["pages_dead"] else ""
    lines = [
        f"{t['crawls']} crawls ({t['open']} open)  pages {t['pages_done']}/"
        f"{t['pages_total']}{dead}  items {t['items']}  {t['rate_pages_s']:.1f} pages/s"[:WIDTH],
        "",
        f"{'crawl':<30} {'state':<9} {'pages':>13} {'items':>8} {'dead':>5} {'rate/s':>8}",
    ]
    for c in crawls:
        pages = f"{c['pages_done']}/{c['pages_total']}"
        rate = f"{c['rate_pages_s']:.1f}" if c["state"] in ("producing", "running") else "-"
        lines.append(
            f"{c['crawl_id'][:30]:<30} {c['state'][:9]:<9} {pages:>13} {c['items']:>8} "
            f"{c['pages_dead']:>5} {rate:>8}"[:WIDTH]
        )
        if c.get("error"):
            lines.append(f"  error: {safe(c['error'])}"[:WIDTH])
    if hosts:
        lines += ["", f"{'host':<38} {'in flight':>9} {'delay':>7}  blocked until"]
        for h in hosts:
            limit = f"{h['in_flight']}/{h['limit']}" if h["limit"] else str(h["in_flight"])
            blocked = "-"
            if h["blocked_until"]:
                blocked = time.strftime("%H:%M:%S", time.localtime(h["blocked_until"] / 1000))
                blocked += f" ({safe(h['block_reason'])})" if h.get("block_reason") else ""
            lines.append(
                f"{safe(h['host'])[:38]:<38} {limit:>9} {h['delay_s']:>6.2f}s  {blocked}"[:WIDTH]
            )
            if h.get("robots_delay_capped_from"):
                lines.append(
                    f"  robots.txt Crawl-delay {h['robots_delay_capped_from']:g}s capped to "
                    f"{h['robots_delay_s']:g}s (--max-crawl-delay)"[:WIDTH]
                )
    return "\n".join(lines)


@_terminal
def render_status_view(data: dict[str, Any]) -> str:
    """One crawl in detail, or the fleet."""
    return render_fleet(data) if "crawls" in data else render_status(data)


@_terminal
def render_inventory(summary: dict[str, Any]) -> str:
    lines = [
        f"inventory {safe(summary['url'])}",
        f"project   {safe(summary.get('project')) or '-'} {safe(summary.get('version'))}".rstrip(),
        f"format    {summary['format']}, {summary['compressed_size']} bytes, inflated "
        f"{summary['inflated_size']} bytes",
        f"lines     {summary['body_lines']} = {summary['parsed']} parsed + "
        f"{summary['malformed']} malformed  ({summary['blank_lines']} blank)",
        f"entries   {summary['unique_entries']} unique keys ({summary['duplicate_keys']} "
        f"duplicate rows), {summary['skipped_entries']} on skipped pages, "
        f"{summary['offsite_entries']} offsite",
        f"pages     {summary['pages']} ({summary['fetch_pages']} to fetch)",
        "",
        "types:",
    ]
    for name, count in sorted(summary.get("types", {}).items(), key=lambda kv: -kv[1]):
        lines.append(f"  {safe(name):<30} {count:>7}")
    for bad in summary.get("malformed_examples", []):
        lines.append(f"malformed line {bad['lineno']}: {bad['reason']}: {bad['text'][:50]!r}")
    return "\n".join(lines)


@_terminal
def render_dlq(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "the dead-letter queue is empty"
    lines = [f"{'task id':<17} {'tries':>5}  {'died':<19}  reason / url"]
    for row in rows:
        died = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["died_at"] / 1000))
        lines.append(f"{row['id']:<17} {row['tries'] or 0:>5}  {died}  {safe(row['reason'])}")
        lines.append(f"{'':<45}{safe(row['url'])}"[:WIDTH])
    return "\n".join(lines)


@_terminal
def render_report(report: dict[str, Any]) -> str:
    cols = [
        "total",
        "ok",
        "anchor_missing",
        "page_not_found",
        "skipped",
        "offsite",
        "empty_signature",
        "empty_doc",
    ]
    short = ["total", "ok", "anchor", "404", "skip", "off", "no sig", "no doc"]
    lines = [
        f"coverage of crawl {report['crawl_id']}",
        f"{'domain:role':<23}" + "".join(f"{h:>7}" for h in short),
    ]
    for name, row in [*report["roles"].items(), ("TOTAL", report["totals"])]:
        lines.append(f"{safe(name)[:23]:<23}" + "".join(f"{row.get(c, 0):>7}" for c in cols))
    return "\n".join(lines)


def refresh_parts(s: dict[str, Any], now_ms: int | None) -> list[str]:
    """Refresh round, when the last one started and when the next is due (``--every``)."""
    parts = [f"round {s.get('refresh_round') or 0}"]
    for label, key in ((" last", "last_refresh_at"), (" next", "next_refresh_at")):
        at = s.get(key)
        if not at:
            continue
        if now_ms:
            delta = (at - now_ms) / 1000
            when = f"in {duration(delta)}" if delta >= 0 else f"{duration(-delta)} ago"
        else:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at / 1000))
        parts.append(f"{label} {when}")
    parts.append(f" removed {s.get('items_removed', 0)}")
    return parts


def mib(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB"
