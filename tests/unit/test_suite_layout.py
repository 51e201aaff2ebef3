"""The suite collects as one: pytest imports test modules by their basename (rootdir
"prepend" mode), so two test files of one name in different folders break the whole
run at collection (a CI run stopped there once)."""

from __future__ import annotations

import collections
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_name_of_its_own() -> None:
    names = collections.Counter(p.name for p in TESTS.rglob("test_*.py") if "src" not in p.parts)
    assert [name for name, count in names.items() if count > 1] == []
