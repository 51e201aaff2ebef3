"""common/rope.py: a rope reads, measures and cuts as the string it stands for."""

from __future__ import annotations

import random

import orjson
import pytest

from invcrawl.common.bounds import Sizer, truncate
from invcrawl.common.rope import ROPE_CHARS, Rope, head, join, materialise, to_str

ALPHABET = ["a", "b", " ", "\n", '"', "\\", "\x01", "é", "…", "😀", "*"]


def _random_text(rng: random.Random, depth: int = 0) -> tuple[object, str]:
    """A random rope (or string) and the string it stands for."""
    if depth > 3 or rng.random() < 0.3:
        s = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))
        return s, s
    parts = [_random_text(rng, depth + 1) for _ in range(rng.randrange(1, 5))]
    sep = rng.choice(["", " ", "\n\n"])
    strings = [p[1] for p in parts]
    return join([p[0] for p in parts], sep), sep.join(strings)  # type: ignore[misc]


@pytest.mark.parametrize("seed", range(40))
def test_a_rope_is_the_string_it_stands_for(seed: int) -> None:
    rng = random.Random(seed)
    text, want = _random_text(rng)
    assert isinstance(text, str | Rope)
    assert len(text) == len(want) and to_str(text) == want
    for n in (0, 1, 7, len(want) // 2, len(want), len(want) + 3):
        assert head(text, n) == want[:n]
        if isinstance(text, Rope):
            assert to_str(text.after(n)) == want[n:]
    assert Sizer().value(text) == len(orjson.dumps(want))
    for limit in (10, 60, len(want)):
        for markdown in (False, True):
            assert to_str(truncate(text, limit, markdown)) == truncate(want, limit, markdown)


def test_long_joins_stay_ropes_and_short_ones_strings() -> None:
    short = join(["a", "b"], " ")
    assert short == "a b"
    long = join(["x" * ROPE_CHARS, "y"], "\n\n")
    assert isinstance(long, Rope) and len(long) == ROPE_CHARS + 3
    outer = join([long, "z"])  # a rope inside: the outer text holds it, not a copy
    assert isinstance(outer, Rope) and outer.parts[0] is long
    assert join([long]) is long


def test_a_deep_rope_reads_and_measures_without_recursion() -> None:
    text: str | Rope = "x" * (ROPE_CHARS + 1)
    for _ in range(5000):
        text = join([text, "y"])
    assert len(text) == ROPE_CHARS + 1 + 5000
    assert head(text, 3) == "xxx" and to_str(text).endswith("y" * 5000)
    assert Sizer().value(text) == len(text) + 2


def test_materialise_joins_each_rope_once_for_every_content_holding_it() -> None:
    rope = join(["x" * ROPE_CHARS, "tail"])
    contents = [{"doc": rope, "title": "a"}, {"doc": rope, "title": "b"}]
    materialise(contents)
    assert contents[0]["doc"] == "x" * ROPE_CHARS + "tail"
    assert contents[0]["doc"] is contents[1]["doc"]
