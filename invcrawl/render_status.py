"""The tables of the readers: ``status`` (one crawl, or the fleet), ``inventory``,
``dlq list`` and ``report``. Pure: data in, text out, every line fitted to the terminal's
width and every site-provided string made safe as ``invcrawl/render.py`` says."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from invcrawl.frontier.summary import CrawlStatus, CrawlSummary, FleetStatus
from invcrawl.frontier.versions import same_as
from invcrawl.render import SOFT_WIDTH, bar, duration, fit, safe, terminal_text, wrap


@terminal_text
def render_status(status: CrawlStatus, width: int | None = None) -> str:
    """The status of one crawl; on a terminal every line fits in ``width`` columns,
    whatever the figures."""
    s = status.summary
    paused = is_paused(s, len(status.consumers_alive))
    title = f"crawl {s.crawl_id}  [{shown_state(s, len(status.consumers_alive))}]"
    if s.project:
        title += f"  {safe(s.project)} {safe(s.version)}".rstrip()
    lines = [fit(title, width), fit(f"site     {safe(s.site) or '-'}", width)]
    figures = f"  {s.pages_done} done, {s.pages_dead} dead / {s.pages_total}"
    # "pages    " + bar (its width + 9 columns) + figures
    room = SOFT_WIDTH if width is None else width
    bar_width = max(10, min(30, room - 9 - 9 - len(figures)))
    lines.append(fit(f"pages    {bar(s.pages_settled, s.pages_total, bar_width)}{figures}", width))
    lines += wrap(
        "entries  ",
        [f"{s.entries_total}", f" items {s.items}", f" stream {status.stream_entries}"],
        width=width,
    )
    lines += wrap("status   ", [f"{k} {v}" for k, v in s.items_by_status.items()], width=width)
    if s.items_by_generator:
        by_generator = [f"{k} {v}" for k, v in s.items_by_generator.items()]
        lines += wrap("generator ", by_generator, width=width)
    lines += wrap(
        "rate     ",
        [
            f"{s.rate_pages_s:.1f} pages/s",
            f" elapsed {duration(s.elapsed_s)}",
            # (no consumer serves it: no time of arrival either, whatever the last rate)
            f" ETA {duration(None if paused else s.eta_s)}",
            f" consumers {len(status.consumers_alive)}",
        ],
        width=width,
    )
    c = s.counters
    lines += wrap(
        "counters ",
        [
            f"{name} {c.get(name, 0)}"
            for name in ("claims", "retries", "reaped", "fenced", "redriven")
        ],
        width=width,
    )
    if status.redis_memory:
        mem = status.redis_memory
        lines += wrap(
            "memory   ",
            [f"{mib(mem['total'])} in Redis"]
            + [f" {k.replace('_', ' ')} {mib(v)}" for k, v in mem.items() if k != "total"],
            width=width,
        )
    lines += wrap(
        "stream   ",
        [
            f"{status.stream_entries} entries",
            f" retain {s.retain_items}",
            f" trimmed {status.items_trimmed}",
        ],
        width=width,
    )
    if s.refresh_round or s.next_refresh_at or s.refresh_interval_s:
        lines += wrap("refresh  ", refresh_parts(s, s.server_time), width=width)
    if s.error:
        lines.append(fit(f"error    {safe(s.error)}", width))
    if s.state == "failed":
        lines.append(fit(f"         failed, {clear_failed([s.crawl_id])}", width))
    lines.append("")
    # only the slots holding something: a finished crawl's 16 empty rows say one thing
    busy = [row for row in status.per_slot if slot_busy(row)]
    if not busy:
        lines.append(f"slots    {len(status.per_slot)}, all empty (nothing queued or in flight)")
    else:
        lines.append(
            f"{'slot':>4} {'queued':>7} {'inflight':>8} {'delayed':>7} {'dead':>5}  owner"
            + (f"  ({len(status.per_slot) - len(busy)} empty slots not shown)" if
               len(busy) < len(status.per_slot) else "")
        )  # fmt: skip
    for row in busy:
        owner = row["owner"] or "-"
        lines.append(
            fit(
                f"{row['slot']:>4} {row['queued']:>7} {row['inflight']:>8} "
                f"{row['delayed']:>7} {row.get('dead', 0):>5}  {owner}",
                width,
            )
        )
    if status.consumers_alive:
        lines.append("")
        lines += wrap("consumers ", status.consumers_alive, ", ", width=width)
    return "\n".join(lines)


def slot_busy(row: Mapping[str, Any]) -> bool:
    """Whether a slot row has anything to show: tasks in it, or a consumer owning it."""
    counts = ("queued", "inflight", "delayed", "dead")
    return bool(row.get("owner")) or any(int(row.get(k) or 0) for k in counts)


def is_paused(s: CrawlSummary, consumers: int) -> bool:
    """A running crawl no consumer serves (its run interrupted, its consumers gone): it
    waits for `invcrawl crawl` again, and showed "[running] ETA 45s consumers 0"."""
    return s.state == "running" and consumers == 0


def shown_state(s: CrawlSummary, consumers: int) -> str:
    """The state as the tables show it: ``paused`` for a running crawl no consumer serves
    (``--json`` keeps the stored state, and its ``consumers_alive``)."""
    return "paused" if is_paused(s, consumers) else s.state


def column(values: Iterable[str], header: str, width: int | None, rest: int) -> int:
    """The width of a table's first column: its longest value (piped), or what is left
    of ``width`` beside ``rest`` columns of the others (at least 10)."""
    natural = max([len(header), *(len(v) for v in values)])
    return natural if width is None else max(10, min(natural, width - rest))


def clear_failed(crawl_ids: list[str]) -> str:
    """What to do about failed crawls: they stay listed until forgotten (each by its id,
    or every failed crawl at once)."""
    them = "it" if len(crawl_ids) == 1 else "them"
    return (
        f"listed until forgotten: `invcrawl forget {' '.join(crawl_ids)} --yes` removes {them}, "
        "`invcrawl forget --failed --yes` every failed crawl (output files are kept); running "
        "a crawl again retries it"
    )


@terminal_text
def render_fleet(fleet: FleetStatus, width: int | None = None) -> str:
    """Every crawl on one line (and its refresh schedule, its error), then every busy
    host; on a terminal each line fits in ``width`` columns, piped nothing is cut."""
    crawls, hosts, t = fleet.crawls, fleet.hosts, fleet.totals()
    if not crawls:
        if fleet.crawls_total:
            return f"no crawls on this page: {fleet.crawls_total} crawls in this Redis"
        return "no crawls in this Redis"
    dead = f" ({t['pages_dead']} dead)" if t["pages_dead"] else ""
    idw = column((c.crawl_id for c in crawls), "crawl", width, 48)
    lines = [
        fit(
            f"{t['crawls']} crawls ({t['open']} open)  pages {t['pages_done']}/"
            f"{t['pages_total']}{dead}  items {t['items']}  {t['rate_pages_s']:.1f} pages/s",
            width,
        ),
        "",
        f"{'crawl':<{idw}} {'state':<9} {'pages':>13} {'items':>8} {'dead':>5} {'rate/s':>8}",
    ]
    if fleet.is_page:  # (pages and items: of the crawls shown)
        page = fleet.page()
        first = page["offset"] + 1
        lines[1:1] = [
            fit(
                f"crawls {first}-{page['offset'] + page['shown']} of {page['total']} shown "
                "(pages and items of these): --page N for others, --all for every one",
                width,
            )
        ]
    twins = same_as(crawls)
    for c in crawls:
        pages = f"{c.pages_done}/{c.pages_total}"
        state = shown_state(c, fleet.consumers_alive.get(c.crawl_id, 0))
        rate = f"{c.rate_pages_s:.1f}" if c.is_open and state != "paused" else "-"
        lines.append(
            fit(
                f"{fit(c.crawl_id, idw):<{idw}} {state[:9]:<9} {pages:>13} "
                f"{c.items:>8} {c.pages_dead:>5} {rate:>8}",
                width,
            )
        )
        if c.refresh_interval_s or c.next_refresh_at:
            schedule = [p.strip() for p in refresh_parts(c, fleet.server_time)[1:-1]]
            lines.append(fit("  refresh " + ", ".join(schedule), width))
        if c.error:
            lines.append(fit(f"  error: {safe(c.error)}", width))
        if c.crawl_id in twins:
            lines.append(
                fit(
                    f"  same as {twins[c.crawl_id]} ({safe(c.project)} {safe(c.version)}): "
                    "use crawl ids",
                    width,
                )
            )
    failed = [c.crawl_id for c in crawls if c.state == "failed"]
    if failed:
        lines += ["", fit(f"{len(failed)} failed, {clear_failed(failed)}", width)]
    if hosts:
        hw = column((h["host"] for h in hosts), "host", width, 33)
        lines += ["", f"{'host':<{hw}} {'in flight':>9} {'delay':>7}  blocked until"]
        for h in hosts:
            limit = f"{h['in_flight']}/{h['limit']}" if h["limit"] else str(h["in_flight"])
            blocked = "-"
            if h["blocked_until"]:
                blocked = time.strftime("%H:%M:%S", time.localtime(h["blocked_until"] / 1000))
                blocked += f" ({safe(h['block_reason'])})" if h.get("block_reason") else ""
            lines.append(
                fit(
                    f"{fit(safe(h['host']), hw):<{hw}} {limit:>9} {h['delay_s']:>6.2f}s  {blocked}",
                    width,
                )
            )
            if h.get("robots_delay_capped_from"):
                lines.append(
                    fit(
                        f"  robots.txt Crawl-delay {h['robots_delay_capped_from']:g}s capped "
                        f"to {h['robots_delay_s']:g}s (--max-crawl-delay)",
                        width,
                    )
                )
    return "\n".join(lines)


@terminal_text
def render_status_view(data: CrawlStatus | FleetStatus, width: int | None = None) -> str:
    """One crawl in detail, or the fleet."""
    if isinstance(data, FleetStatus):
        return render_fleet(data, width)
    return render_status(data, width)


@terminal_text
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


@terminal_text
def render_dlq(rows: list[dict[str, Any]], width: int | None = None) -> str:
    """Dead letters, two lines each (the second: the page's URL); rows of several crawls
    (``dlq list`` without ``--crawl-id``) start with their crawl."""
    if not rows:
        return "the dead-letter queue is empty"
    crawls = any("crawl_id" in row for row in rows)
    cw = column((row.get("crawl_id") or "" for row in rows), "crawl", width, 70) if crawls else 0
    lead = f"{'crawl':<{cw}}  " if crawls else ""
    lines = [fit(f"{lead}{'task id':<17} {'tries':>5}  {'died':<19}  reason / url", width)]
    for row in rows:
        died = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["died_at"] / 1000))
        lead = f"{fit(row.get('crawl_id') or '-', cw):<{cw}}  " if crawls else ""
        lines.append(
            fit(
                f"{lead}{row['id']:<17} {row['tries'] or 0:>5}  {died}  {safe(row['reason'])}",
                width,
            )
        )
        lines.append(fit(f"{'':<{len(lead) + 45}}{safe(row['url'])}", width))
    return "\n".join(lines)


def render_reports(reports: list[dict[str, Any]], width: int | None = None) -> str:
    """The coverage of several crawls: one table each, headed by its crawl."""
    if not reports:
        return "no crawl in this Redis"
    return "\n\n".join(render_report(report, width) for report in reports)


@terminal_text
def render_report(report: dict[str, Any], width: int | None = None) -> str:
    """One crawl's coverage table; a ``domain:role`` longer than its column is cut on a
    terminal of ``width`` columns only (piped, nothing is cut)."""
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
    rows = [*report["roles"].items(), ("TOTAL", report["totals"])]
    names = [safe(name) for name, _ in rows]
    nw = max(23, column(names, "domain:role", width, 7 * len(cols)))
    lines = [
        f"coverage of crawl {report['crawl_id']}",
        f"{'domain:role':<{nw}}" + "".join(f"{h:>7}" for h in short),
    ]
    for name, (_, row) in zip(names, rows, strict=True):
        lines.append(f"{fit(name, nw):<{nw}}" + "".join(f"{row.get(c, 0):>7}" for c in cols))
    generators = report.get("generators") or {}
    if generators:  # "-": items of pages that were not read (skipped, offsite, 404...)
        lines.append(f"{'generator':<{nw}}" + "".join(f"{h:>7}" for h in short))
        for name, row in generators.items():
            gname = safe(name)
            lines.append(f"{fit(gname, nw):<{nw}}" + "".join(f"{row.get(c, 0):>7}" for c in cols))
    return "\n".join(lines)


def refresh_parts(s: CrawlSummary, now_ms: int | None) -> list[str]:
    """Refresh round, when the last one started, the crawl's interval (``--every``) and
    when the next is due."""
    parts = [f"round {s.refresh_round}"]
    if s.refresh_interval_s:
        auto = " (auto)" if s.refresh_adaptive else ""
        parts.append(f" every {duration(s.refresh_interval_s)}{auto}")
    for label, at in ((" last", s.last_refresh_at), (" next", s.next_refresh_at)):
        if not at:
            continue
        if now_ms:
            delta = (at - now_ms) / 1000
            when = f"in {duration(delta)}" if delta >= 0 else f"{duration(-delta)} ago"
        else:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at / 1000))
        parts.append(f"{label} {when}")
    parts.append(f" removed {s.items_removed}")
    return parts


def mib(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB"
