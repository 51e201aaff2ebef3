"""What the dashboard page shows, built from the fleet view of ``invcrawl status --json``
(:func:`invcrawl.frontier.status.fleet_status`, the one code path for both) plus a throughput
history kept in this process's memory: the dashboard never writes to Redis.

Pure apart from :func:`take`, which reads the status. Nothing here shows a secret: the
Redis URL, every site and page URL and every error text are masked
(:mod:`invcrawl.process.secrets`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from invcrawl.frontier.admin import dead_tasks
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.status import fleet_status, status_view
from invcrawl.frontier.summary import CrawlSummary, FleetStatus
from invcrawl.process.secrets import mask_secrets, mask_url


class Throughput:
    """Pages per second per crawl over the last ``window_s`` seconds, from successive
    status snapshots (``pages_done`` deltas), in ``bucket_s`` buckets. Only the ``top``
    busiest crawls of the window get a series of their own; the rest are summed."""

    def __init__(self, window_s: int = 300, bucket_s: int = 2, top: int = 8) -> None:
        self.window_ms = window_s * 1000
        self.bucket_ms = bucket_s * 1000
        self.top = top
        self._last: dict[str, int] = {}
        self._samples: deque[tuple[int, dict[str, int]]] = deque()  # (server ms, deltas)
        self.since: int | None = None  # the first sample: the history starts there

    def add(self, server_ms: int, crawls: Iterable[CrawlSummary]) -> None:
        if self.since is None:
            self.since = server_ms
        done = {c.crawl_id: c.pages_done for c in crawls}
        deltas = {
            crawl: count - self._last[crawl]
            for crawl, count in done.items()
            if crawl in self._last and count > self._last[crawl]
        }
        self._last = done
        self._samples.append((server_ms, deltas))
        while self._samples and self._samples[0][0] <= server_ms - self.window_ms:
            self._samples.popleft()

    def view(self) -> dict[str, Any]:
        """``{bucket_s, buckets, since, end, series: [{crawl_id, rates}], other}``:
        ``rates[i]`` is the rate of the bucket ending ``(buckets-1-i)·bucket_s`` seconds
        before ``end``; ``since`` is the first sample (no history before it)."""
        n = self.window_ms // self.bucket_ms
        head = {"bucket_s": self.bucket_ms / 1000, "buckets": n, "since": self.since}
        if not self._samples:
            return {**head, "end": None, "series": [], "other": []}
        end = self._samples[-1][0]
        totals: dict[str, int] = {}
        per_bucket: list[dict[str, int]] = [{} for _ in range(n)]
        for at, deltas in self._samples:
            index = n - 1 - (end - at) // self.bucket_ms
            if index < 0:
                continue
            for crawl, delta in deltas.items():
                per_bucket[index][crawl] = per_bucket[index].get(crawl, 0) + delta
                totals[crawl] = totals.get(crawl, 0) + delta
        ranked = sorted(totals, key=lambda c: (-totals[c], c))
        shown, rest = ranked[: self.top], set(ranked[self.top :])
        seconds = self.bucket_ms / 1000

        def rates(crawls: set[str]) -> list[float]:
            return [
                round(sum(v for c, v in bucket.items() if c in crawls) / seconds, 2)
                for bucket in per_bucket
            ]

        return {
            **head,
            "end": end,
            "series": [{"crawl_id": c, "rates": rates({c})} for c in shown],
            "other": rates(rest) if rest else [],
        }


# Fields of a crawl's summary the page does not show: left out of every update (with 500
# crawls an update is ~216 KiB instead of ~290 KiB); ``status --json`` has them.
UNSHOWN = frozenset(
    {"counters", "server_time", "weight", "entries_total", "elapsed_s", "created_at"}
    | {"started_at", "finished_at"}
)


DASHBOARD_CRAWLS = 1_000  # crawls of a snapshot, open ones first (the totals count every crawl)


def page_data(fleet: FleetStatus, redis_url: str, throughput: Throughput) -> dict[str, Any]:
    """The page's data from one fleet view (its ``status --json``): the crawls without
    the fields it does not show (raw counters...), every URL masked, and the throughput
    history."""
    data = fleet.as_dict()
    crawls = []
    for crawl in data["crawls"]:
        row = {k: v for k, v in crawl.items() if k not in UNSHOWN}
        row["site"] = _masked(row["site"])
        row["error"] = _masked(row["error"])
        crawls.append(row)
    dead = [
        {**row, "url": _masked(row.get("url")), "error": _masked(row.get("error"))}
        for row in fleet.dead_letters
    ]
    return {
        **data,
        "crawls": crawls,
        "dead_letters": dead,
        "redis": mask_url(redis_url),
        "generated_at": int(time.time() * 1000),
        "throughput": throughput.view(),
        "error": None,
    }


def _masked(text: Any) -> Any:
    return mask_secrets(text) if isinstance(text, str) else text


async def take(
    frontier: Frontier, redis_url: str, lease_ms: int, throughput: Throughput
) -> dict[str, Any]:
    """One snapshot: the fleet view of ``status --json`` (its first
    :data:`DASHBOARD_CRAWLS` crawls, open ones first: bounded, whatever the number of
    crawls), sampled into ``throughput``."""
    fleet = await fleet_status(frontier, lease_ms, limit=DASHBOARD_CRAWLS)
    throughput.add(fleet.server_time, fleet.crawls)
    return page_data(fleet, redis_url, throughput)


async def crawl_detail(frontier: Frontier, crawl_id: str, lease_ms: int) -> dict[str, Any]:
    """One crawl as ``status --crawl-id ID --json`` shows it (slots, consumers), with
    its dead letters and the command that redrives them; raises CrawlNotFound."""
    status, _ = await status_view(frontier, crawl_id, lease_ms)
    dead = await dead_tasks(frontier.crawl(crawl_id))
    data = status.as_dict()
    data.pop("counters", None)
    data["site"] = _masked(data.get("site"))
    data["error"] = _masked(data.get("error"))
    data["dead_letters"] = [
        {**row, "url": _masked(row.get("url")), "error": _masked(row.get("error"))} for row in dead
    ]
    data["redrive_command"] = f"invcrawl dlq redrive --all --crawl-id {crawl_id}"
    return data
