"""Which symbols are spelt close to a name of none (the "did you mean" of ``show``,
``history`` and the MCP ``get_symbol``): ``frontier/symbol_names.py``."""

from __future__ import annotations

import pytest

from invcrawl.frontier.search import SymbolHit
from invcrawl.frontier.symbol_names import DID_YOU_MEAN, spelt_close


def hit(name: str, role: str = "function") -> SymbolHit:
    return SymbolHit(f"py:{role}:{name}", name, role, "P", "1", "", "", 0.0)


HITS = [
    hit(name) for name in ("jsonish.evil", "json.dump", "json.load", "json.loads", "os.path.join")
] + [hit("collections.OrderedDict", "class")]


@pytest.mark.parametrize(
    "requested, close",
    [
        ("json.lods", ["json.loads", "json.load"]),  # the closest first
        ("jsn.loads", ["json.loads", "json.load"]),  # a typo in the module
        ("os.path.joinn", ["os.path.join"]),
        ("collections.OrderDict", ["collections.OrderedDict"]),
        ("JSON.LODS", ["json.loads", "json.load"]),  # in any case
        # sharing the module alone is not close: jsonish.evil is not offered
        ("jsonish.lods", ["json.loads", "json.load"]),
        ("zzqqxx", []),
    ],
)
def test_spelt_close(requested: str, close: list[str]) -> None:
    assert [h.name for h in spelt_close(requested, HITS)] == close


def test_a_last_component_alone_is_compared_with_last_components() -> None:
    assert [h.name for h in spelt_close("dumsp", HITS)] == ["json.dump"]
    many = [hit(f"m{i}.dump") for i in range(10)]
    assert len(spelt_close("dump", many)) == DID_YOU_MEAN
