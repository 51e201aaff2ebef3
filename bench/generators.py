"""Extraction speed per page on each generator against a Sphinx page of the same size
(issue 35: within 1.5x).

    python -m bench.generators [--pages 300] [--repeat 3] [--sphinx DIR ...]

The pages of every generator site at hand (``tests/sites/generator_sites.py``: Debian's
Twisted API docs by pydoctor 22.9.1, the fixture sites by pydoctor 25 and 22, and
mkdocstrings' once registered there) and a pool of Sphinx pages (the CPython 3.11 docs
and Sphinx's own, by default) are read into memory with their real targets (the
inventory planned as the crawl plans it: ``floor.load_pages``). Each generator page (a
deterministic sample of ``--pages``) is paired with the Sphinx page nearest in bytes;
both are timed by ``extract_page`` in the same process, alternately, ``--repeat`` times
(the minimum kept). Per site: pairs, bytes, the ratio of the summed times, and the
median and 90th percentile of the per-pair ratios. Figures, not asserts.
"""

from __future__ import annotations

import argparse
import bisect
import gc
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.floor import load_pages
from invcrawl.common.extract import extract_page

try:  # the tests' fixture sites (tests/sites/): tests/ on the path
    from sites.generator_sites import generator_sites
except ModuleNotFoundError as exc:
    raise SystemExit(f"{exc}: run it as PYTHONPATH=tests python -m {__spec__.name}") from exc

SPHINX = (Path("/usr/share/doc/python3.11/html"), Path("/usr/share/doc/sphinx-doc/html"))


def timed(page: tuple[str, bytes, list[Any], Any]) -> float:
    url, body, targets, _ = page
    start = time.perf_counter()
    extract_page(body, url, targets)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="pages sampled per site")
    parser.add_argument("--repeat", type=int, default=3, help="timings per page (min kept)")
    parser.add_argument("--sphinx", type=Path, nargs="*", default=list(SPHINX))
    args = parser.parse_args(argv)
    pool = [p for root in args.sphinx if (root / "objects.inv").is_file() for p in load_pages(root)]
    pool.sort(key=lambda p: len(p[1]))
    sizes = [len(p[1]) for p in pool]
    print(f"sphinx pool: {len(pool)} pages from {', '.join(str(r) for r in args.sphinx)}")
    print(f"{'site':<34} {'pairs':>5} {'MB':>6} {'gen ms':>8} {'sphinx ms':>9} "
          f"{'sum ratio':>9} {'median':>7} {'p90':>6}")  # fmt: skip
    gc.disable()  # as extract_page runs in the consumer: no collection inside the timings
    for name, root in generator_sites().items():
        pages = load_pages(root)
        rng = random.Random(35)
        sample = rng.sample(pages, min(args.pages, len(pages)))
        ratios, gen_total, sphinx_total, size = [], 0.0, 0.0, 0
        for page in sample:
            at = bisect.bisect_left(sizes, len(page[1]))
            near = min(
                (i for i in (at - 1, at) if 0 <= i < len(pool)),
                key=lambda i: abs(sizes[i] - len(page[1])),
            )
            twin = pool[near]
            gen_t, sph_t = [], []
            for _ in range(args.repeat):  # alternate, so both see the same machine
                gen_t.append(timed(page))
                sph_t.append(timed(twin))
            gen_total += min(gen_t)
            sphinx_total += min(sph_t)
            ratios.append(min(gen_t) / min(sph_t))
            size += len(page[1])
            gc.collect()
        ratios.sort()
        p90 = ratios[int(0.9 * (len(ratios) - 1))]
        print(
            f"{name[:34]:<34} {len(sample):>5} {size / 1e6:>6.1f} {gen_total * 1e3:>8.0f} "
            f"{sphinx_total * 1e3:>9.0f} {gen_total / sphinx_total:>9.2f} "
            f"{statistics.median(ratios):>7.2f} {p90:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
