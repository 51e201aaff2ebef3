"""How the typed diff's work grows with a site's sizes (issue 36): each case timed at a size
and at twice that size, the best of ``--runs`` runs (CPU time of this thread: a loaded
machine inflates it less than the clock), and the ratio (2 when linear, 4 when
quadratic). ``tests/unit/test_apidiff_growth.py`` counts the same work instead.

* ``params renamed``: one function whose parameters all changed name (``item_changes``,
  as ``diff``, ``history`` and a ``changed`` event of the change feed call it);
* ``release notes``: ``diff --markdown`` of one changed symbol per module;
* ``version notes``: a doc with 64 version notes (the most that are taken out of it)
  around a text of the given size, both sides edited.

    python -m bench.growth [--runs 3] [--params 10000] [--modules 7500] [--doc-mb 2]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from invcrawl.common.apidiff import diff_all, item_changes
from invcrawl.common.apidiff.render import markdown


def function(key: str, names: list[str], **fields: Any) -> dict[str, Any]:
    params = [{"name": n, "kind": "positional-or-keyword"} for n in names]
    return {"key": key, "status": "ok", "signature": "f(...)", "doc": "Do.", "params": params,
            "returns": [], "raises": [], "versions": [], **fields}  # fmt: skip


def renamed(n: int) -> Callable[[], Any]:
    old = function("py:function:m.f", [f"p{i}" for i in range(n)])
    new = function("py:function:m.f", [f"q{i}" for i in range(n)])
    return lambda: item_changes(old, new)


def notes(n: int) -> Callable[[], Any]:
    modules = [f"pkg{i}.sub" for i in range(n)]
    old = {f"py:function:{m}.f": function(f"py:function:{m}.f", []) for m in modules}
    new = {k: function(k, ["a"]) for k in old}
    diffs = diff_all(old, new)
    return lambda: markdown(diffs, "P 1", "P 2", modules)


def doc_notes(chars: int) -> Callable[[], Any]:
    versions = [{"kind": "changed", "version": f"1.{i}", "text": f"Note {i}."} for i in range(64)]
    body = "word " * (chars // 5)
    old = function("py:function:m.f", ["a"], doc="Old. " + body, versions=versions)
    new = function("py:function:m.f", ["a"], doc="New. " + body, versions=versions)
    return lambda: item_changes(old, new)


def best(work: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.thread_time()
        work()
        times.append(time.thread_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--params", type=int, default=10_000)
    parser.add_argument("--modules", type=int, default=7_500)
    parser.add_argument("--doc-mb", type=float, default=2.0)
    args = parser.parse_args()
    cases = [
        ("params renamed", renamed, args.params),
        ("release notes (modules)", notes, args.modules),
        ("version notes (doc chars)", doc_notes, int(args.doc_mb * 1_000_000)),
    ]
    print(f"{'case':<27} {'size':>10} {'s':>8} {'2x size':>10} {'s':>8} {'ratio':>6}")
    for name, make, size in cases:
        small, large = best(make(size), args.runs), best(make(2 * size), args.runs)
        ratio = large / small if small else float("nan")
        print(f"{name:<27} {size:>10} {small:>8.3f} {2 * size:>10} {large:>8.3f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
