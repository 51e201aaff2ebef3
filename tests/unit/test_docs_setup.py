"""The benchmarks' set-up is the README's: every command of bench/README.md's first
block that is not a benchmark run is one the README gives (its first line once assumed a
`.venv` that nothing had created)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_setup_matches_the_readme() -> None:
    bench = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", bench, re.S)
    assert block
    setup = [
        line.split("#")[0].strip()
        for line in block[1].splitlines()
        if line.strip() and not line.startswith("python -m bench.")
    ]
    assert setup, "the set-up comes first"
    for command in setup:
        assert command in readme, f"{command!r} is not the README's set-up"
    for i, command in enumerate(setup):
        if "bin/activate" in command:  # a venv it uses, it creates first
            assert any("-m venv" in earlier for earlier in setup[: i + 1]), command
