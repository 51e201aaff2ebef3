"""Versions in order whatever a site wrote (issue 36): ``version_key`` is total. A version
of 4,301 digits (``int`` refuses to convert it) or any other text gives a key that
compares with every other, so one hostile crawl never breaks ``versions``, ``history``
or ``diff`` for its project or any other."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from invcrawl.common.version_order import version_key

HOSTILE = [
    "9" * 4301,  # past int's 4,300 digits: PEP 440 parsing raised ValueError
    "1." + "0" * 4301,
    "v" + "1" * 5000 + "rc" + "2" * 5000,
    "1!" * 3000,
    "\x1b]0;title\x07",
    "",
    " ",
    "0" * 10_000,
    "1.0" + "\u202e" * 10,
]
REAL = ["1.9", "1.10", "2.0rc1", "2.0", "2.0.post1", "nightly", "latest", "3.11.0a7", "r12"]


def test_hostile_versions_sort_beside_real_ones() -> None:
    ordered = sorted(REAL + HOSTILE, key=version_key)
    real = [v for v in ordered if v in REAL]
    assert real[:5] == ["1.9", "1.10", "2.0rc1", "2.0", "2.0.post1"]
    # digit runs compare as numbers without int(): 10,000 zeros are 0, before 9s
    assert ordered.index("0" * 10_000) < ordered.index("9" * 4301)
    for a, b in itertools.permutations(HOSTILE + REAL, 2):
        ka, kb = version_key(a), version_key(b)
        assert (ka < kb) + (ka == kb) + (ka > kb) == 1  # comparable, one answer


# A short text, or one with a run of 4,200-4,400 digits in it (int's limit is 4,300).
LONG = st.builds(
    lambda head, digit, n, tail: head + digit * n + tail,
    st.sampled_from(["", "1.", "v", "1!"]),
    st.sampled_from("0123456789"),
    st.integers(4200, 4400),
    st.text(max_size=5),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40) | LONG, max_size=6))
def test_any_versions_sort(versions: list[str]) -> None:
    keys = [version_key(v) for v in sorted(versions, key=version_key)]
    assert all(a <= b for a, b in itertools.pairwise(keys))
