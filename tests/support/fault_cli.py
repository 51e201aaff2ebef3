"""Fault harness from the command line: real crawls over loopback HTTP while consumers
are SIGKILLed, paused and poisoned, Redis is SIGKILLed and restarted from its AOF, and
the HTTP server fails; then the accounting of every run, as a table. It runs the
harness of the ``faults`` test suite (tests/support/faults.py), so it lives beside it;
from the repository:

    PYTHONPATH=tests python -m support.fault_cli         # CPython docs if there, else synthetic
    PYTHONPATH=tests python -m support.fault_cli --site DIR --scenario kill-consumers,poison
    PYTHONPATH=tests python -m support.fault_cli --synthetic 300  # a 300-page site
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from support.faults import SCENARIOS, Site, run_scenario, table
from support.synthsite import generate


def main() -> int:
    parser = argparse.ArgumentParser(description="invcrawl fault harness")
    parser.add_argument("--site", type=Path, help="a built Sphinx site directory")
    parser.add_argument(
        "--synthetic",
        type=int,
        metavar="PAGES",
        help="generate a synthetic site with this many pages",
    )
    parser.add_argument(
        "--scenario", default=",".join(SCENARIOS), help="comma-separated scenarios (default: all)"
    )
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="invcrawl-faults-"))
    python_docs = Path("/usr/share/doc/python3.11/html")
    if args.synthetic or not (args.site or (python_docs / "objects.inv").exists()):
        root = workdir / "site"
        generate(root, args.synthetic or 300, 8)
    else:
        root = args.site or python_docs
    site = Site(root)
    reports = []
    for name in args.scenario.split(","):
        print(f"running {name}: {SCENARIOS[name].what} ...", file=sys.stderr, flush=True)
        reports.append(
            run_scenario(name, site, workdir / name, lease=args.lease, timeout=args.timeout)
        )
        print(f"  {reports[-1].verdict} in {reports[-1].seconds}s", file=sys.stderr)
    print(json.dumps([asdict(r) for r in reports], indent=2) if args.json else table(reports))
    print(f"site: {root}; work dir: {workdir}", file=sys.stderr)
    return 0 if all(r.passed for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
