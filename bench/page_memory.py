"""Peak memory of one hostile page's extraction, as the consumer extracts and bounds it
(issue 46, 1): each case in a child process of its own, its peak resident set
(``VmHWM``) above what it held before the extraction.

    PYTHONPATH=tests python -m bench.page_memory            # every case, ~1 min
    PYTHONPATH=tests python -m bench.page_memory --json

Cases: the issue's pydoctor page (one 100,000-parameter member, 150 entries at its
anchor); a 2 MB page of 150 nested elements with ids, an entry at each (docutils
sections, divs, spans of text, object descriptions libxml2 closes late; Sphinx, unknown
generator, mkdocstrings). To measure other code (main's, for a before), run the script
from outside this checkout with that code's ``invcrawl`` package first on the path (the
children inherit it): ``cd /tmp && PYTHONPATH=/other python /this/bench/page_memory.py``.

On 2 CPUs (2026-12-03), peak RSS growth, MB, main before issue 46's ropes -> after:
pydoctor 54 -> 54; nested sections 338 -> 83, divs 338 -> 82, spans 364 -> 86,
object descriptions 166 -> 28; unknown generator 340 -> 84; mkdocstrings divs 338 -> 81
(the output bound of each page: ~28 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
SECTIONS = 150
SECTION_BYTES = 13_000  # 150 of them: ~2 MB

# (name, argv of support.page_memory)
CASES: list[tuple[str, list[str]]] = [
    ("pydoctor, 100,000 parameters, 150 entries", ["bounded", "100000", "150"]),
    *(
        (f"{generator}: 150 nested {kind}", ["nested", kind, generator, str(SECTIONS)])
        for kind, generator in (
            ("section", "sphinx"),
            ("div", "sphinx"),
            ("span", "sphinx"),
            ("dt", "sphinx"),
            ("section", "unknown"),
            ("div", "mkdocs"),
        )
    ),
]


def run(argv: list[str]) -> dict[str, Any]:
    if argv[0] == "nested":
        argv = [*argv, str(SECTION_BYTES)]
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    if str(TESTS) not in path.split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), path) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "support.page_memory", *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    got: dict[str, Any] = json.loads(proc.stdout)
    return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="peak memory of hostile pages' extraction")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name, case in CASES:
        got = run(case)
        rows.append(
            {
                "case": name,
                "page_mb": got["page_bytes"] / 2**20,
                "bound_mb": got["budget"] / 2**20,
                "output_mb": got["output_bytes"] / 2**20,
                "grew_mb": got["peak_mb"] - got["before_mb"],
            }
        )
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'case':44} {'page':>6} {'bound':>6} {'output':>7} {'peak RSS +':>10}  (MB)")
    for row in rows:
        print(
            f"{row['case']:44} {row['page_mb']:6.2f} {row['bound_mb']:6.1f} "
            f"{row['output_mb']:7.1f} {row['grew_mb']:10.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
