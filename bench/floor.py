"""The extraction floor: what parsing alone costs, against what extraction costs.

    python -m bench.floor /usr/share/doc/python3.11/html [--repeat 3] [--json]

Every page the crawl would fetch (``parse_inventory`` + ``plan_crawl`` of the site's
``objects.inv``; Debian's gzipped pages inflated) is read into memory first, then timed
in one process, in passes over all pages:

* **floor**: ``lxml.html.fromstring(body)`` plus a dict of every element id
  (``{el.get("id"): el for el in root.iter(etree.Element) if el.get("id")}``): the least
  any extractor that looks anchors up must do;
* **extract**: ``invcrawl.common.extract.extract_page(body, url, targets)`` with the page's real
  targets, exactly as the consumer calls it;
* **extract + items**: the same plus ``build_item`` and ``prepare`` (item checksum and
  the JSON the commit sends) for every entry: all the per-page CPU the consumer spends in
  its own Python code.

Each pass is repeated and the median kept; ``ratio = extract / floor``.

**Parallel ceiling**: the extract + items pass over all pages in one process, then in
two forked processes at once (each doing all pages): ``speed-up = 2 x one / two``. It is
what two CPU-bound processes gain on this machine for exactly this work, the ceiling of
the crawl's b/c (2 consumers vs 1) before any start-up, Redis or HTTP cost.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import statistics
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from lxml import etree, html

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl

BASE = "http://bench.invalid/"


def load_pages(root: Path) -> list[tuple[str, bytes, list[Any], Any]]:
    """``(url, body, targets, task)`` for every page to fetch, bodies in memory."""
    from invcrawl.producer.enqueue import tasks_from_plan

    inventory = parse_inventory((root / "objects.inv").read_bytes())
    plan = plan_crawl(inventory, BASE + "objects.inv")
    pages = []
    for task in tasks_from_plan(plan):
        if task.status != "fetch":
            continue
        rel = task.url[len(BASE) :].split("#", 1)[0]
        path = root / (rel or "index.html")
        if path.is_dir() or not rel or rel.endswith("/"):
            path = path / "index.html"
        if path.exists():
            body = path.read_bytes()
        elif path.with_name(path.name + ".gz").exists():
            body = zlib.decompress(path.with_name(path.name + ".gz").read_bytes(), wbits=31)
        else:
            continue  # a page missing from the site: a 404 in the crawl, nothing to parse
        targets = task.entries
        pages.append((task.url, body, targets, task))
    return pages


def floor_page(body: bytes) -> int:
    root = html.fromstring(body)
    ids = {}
    for el in root.iter(etree.Element):
        value = el.get("id")
        if value:
            ids[value] = el
    return len(ids)


def measure(root: Path, repeat: int = 3) -> dict[str, Any]:
    from invcrawl.common.extract import extract_page
    from invcrawl.common.items import CrawlInfo, ItemLayout, build_item, prepare
    from invcrawl.common.search.postings import term_logs_for

    pages = load_pages(root)
    crawl = CrawlInfo("floor", None, None)
    entries = sum(len(p[2]) for p in pages)
    size = sum(len(p[1]) for p in pages)
    layout = ItemLayout(64, term_logs_for(64))

    def floor_pass() -> list[float]:
        times = []
        for _url, body, _targets, _task in pages:
            t = time.perf_counter()
            floor_page(body)
            times.append(time.perf_counter() - t)
        return times

    def extract_pass() -> list[float]:
        times = []
        for url, body, targets, _task in pages:
            t = time.perf_counter()
            extract_page(body, url, targets)
            times.append(time.perf_counter() - t)
        return times

    def items_pass() -> list[float]:
        times = []
        for url, body, targets, task in pages:
            t = time.perf_counter()
            contents = extract_page(body, url, targets)
            for entry, content in zip(task.entries, contents, strict=True):
                prepare(build_item(crawl, task, entry, content), layout)
            times.append(time.perf_counter() - t)
        return times

    runs: dict[str, list[list[float]]] = {"floor": [], "extract": [], "items": []}
    passes = {"floor": floor_pass, "extract": extract_pass, "items": items_pass}
    extract_pass()  # warm-up: imports, caches, first-call costs
    for _ in range(repeat):
        for name, run in passes.items():
            gc.collect()
            runs[name].append(run())
    totals = {name: statistics.median(sum(r) for r in rs) for name, rs in runs.items()}
    one, two = parallel_ceiling(lambda: sum(items_pass()), repeat)
    # Per page: the median over repeats of each page's time, for the worst ratios.
    per_page = {
        name: [statistics.median(r[i] for r in rs) for i in range(len(pages))]
        for name, rs in runs.items()
    }
    worst = sorted(
        (
            (
                per_page["extract"][i] / max(per_page["floor"][i], 1e-9),
                pages[i][0],
                len(pages[i][2]),
                per_page["floor"][i],
                per_page["extract"][i],
            )
            for i in range(len(pages))
        ),
        reverse=True,
    )[:5]
    slowest = sorted(
        ((per_page["extract"][i], pages[i][0], len(pages[i][2])) for i in range(len(pages))),
        reverse=True,
    )[:5]
    return {
        "pages": len(pages),
        "entries": entries,
        "bytes": size,
        "repeat": repeat,
        "floor_s": totals["floor"],
        "extract_s": totals["extract"],
        "items_s": totals["items"],
        "ratio": totals["extract"] / totals["floor"],
        "items_ratio": totals["items"] / totals["floor"],
        "parallel_one_s": one,
        "parallel_two_s": two,
        "parallel_speedup": 2 * one / two,
        "worst_ratio_pages": [
            {"url": u, "entries": n, "floor_ms": f * 1e3, "extract_ms": e * 1e3, "ratio": r}
            for r, u, n, f, e in worst
        ],
        "slowest_pages": [{"url": u, "entries": n, "extract_ms": e * 1e3} for e, u, n in slowest],
    }


def parallel_ceiling(work: Any, repeat: int) -> tuple[float, float]:
    """Wall time of ``work`` alone, and of two forked copies running at once (medians)."""
    fork = multiprocessing.get_context("fork")
    alone, both = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        work()
        alone.append(time.perf_counter() - t)
        procs = [fork.Process(target=work) for _ in range(2)]
        t = time.perf_counter()
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        both.append(time.perf_counter() - t)
    return statistics.median(alone), statistics.median(both)


def render(result: dict[str, Any]) -> str:
    pages = result["pages"]
    rows = [
        f"extraction floor: {pages} pages, {result['entries']} entries, "
        f"{result['bytes'] / 2**20:.1f} MiB of HTML, one process, median of {result['repeat']}",
        f"  {'pass':34} {'total s':>8} {'ms/page':>8} {'x floor':>8}",
    ]
    for label, key in (
        ("floor: lxml parse + id index", "floor_s"),
        ("extract: extract_page", "extract_s"),
        ("extract + items (build, prepare)", "items_s"),
    ):
        seconds = result[key]
        rows.append(
            f"  {label:34} {seconds:8.2f} {seconds / pages * 1e3:8.2f} "
            f"{seconds / result['floor_s']:8.2f}"
        )
    rows.append(f"  ratio extract/floor {result['ratio']:.2f} (target <= 2.0)")
    rows.append(
        f"  parallel ceiling: extract + items alone {result['parallel_one_s']:.2f} s, "
        f"twice at once in 2 processes {result['parallel_two_s']:.2f} s = "
        f"{result['parallel_speedup']:.2f}x throughput (the most b/c can reach here)"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="extraction vs the lxml parse floor")
    parser.add_argument(
        "root", type=Path, nargs="?", default=Path("/usr/share/doc/python3.11/html")
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = measure(args.root, args.repeat)
    print(json.dumps(result) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
