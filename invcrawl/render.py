"""Human-readable output, sized for an 80-column terminal. Pure: data in, text out."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

WIDTH = 80


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


def render_status(s: dict[str, Any]) -> str:
    """The status of one crawl; every line fits in WIDTH columns, whatever the figures."""
    by = s["items_by_status"]
    title = f"crawl {s['crawl_id']}  [{s['state']}]"
    if s.get("project"):
        title += f"  {s['project']} {s.get('version') or ''}".rstrip()
    lines = [title[:WIDTH], f"site     {s.get('site') or '-'}"[:WIDTH]]
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
    if s.get("error"):
        lines.append(f"error    {s['error']}"[:WIDTH])
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


def render_crawl_list(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no crawls in this Redis"
    lines = [f"{'crawl':<32} {'state':<10} {'pages':>13} {'items':>8} {'dead':>5}"]
    for s in rows:
        pages = f"{s['pages_done']}/{s['pages_total']}"
        lines.append(
            f"{s['crawl_id'][:32]:<32} {s['state']:<10} {pages:>13} "
            f"{s['items']:>8} {s['pages_dead']:>5}"
        )
    return "\n".join(lines)


def render_status_view(data: dict[str, Any] | list[dict[str, Any]]) -> str:
    """One crawl in detail, or a list of crawls."""
    return render_crawl_list(data) if isinstance(data, list) else render_status(data)


def render_inventory(summary: dict[str, Any]) -> str:
    lines = [
        f"inventory {summary['url']}",
        f"project   {summary.get('project') or '-'} {summary.get('version') or ''}".rstrip(),
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
        lines.append(f"  {name:<30} {count:>7}")
    for bad in summary.get("malformed_examples", []):
        lines.append(f"malformed line {bad['lineno']}: {bad['reason']}: {bad['text'][:50]!r}")
    return "\n".join(lines)


def render_dlq(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "the dead-letter queue is empty"
    lines = [f"{'task id':<17} {'tries':>5}  {'died':<19}  reason / url"]
    for row in rows:
        died = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["died_at"] / 1000))
        lines.append(f"{row['id']:<17} {row['tries'] or 0:>5}  {died}  {row['reason']}")
        lines.append(f"{'':<45}{row['url']}"[:WIDTH])
    return "\n".join(lines)


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
        lines.append(f"{name[:23]:<23}" + "".join(f"{row.get(c, 0):>7}" for c in cols))
    return "\n".join(lines)
