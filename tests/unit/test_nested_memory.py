"""A page of nested sections, each holding all those after it and each an entry's body,
is extracted within a small multiple of the page plus its output bound (issue 46, 1).

Each section's text (and Markdown) used to be a string of its own, a copy of everything
it contains: 150 nested sections of a 2 MB page held ~300 MB of texts before the output
bound (32 MB) cut them, quadratic in the sections. They are ropes now
(``common/rope.py``), joined only as far as the bounds keep them
(``pageitems.page_items``). Memory is measured with tracemalloc in this process (every
string the extraction builds is a Python object), as a guarantee, never a time; the
control is the same page through ``extract_page(lazy=False)``, whose contents are
every text joined, as before."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import orjson
import pytest

from invcrawl.common.bounds import SizeLimits, page_budget
from invcrawl.common.extract import extract_page
from invcrawl.common.items import CrawlInfo, checksum
from invcrawl.common.pageitems import page_items
from invcrawl.common.rope import Rope
from invcrawl.common.tasks import Task
from support.cli import support_json
from support.page_memory import nested_entries, nested_page

NESTED_150 = ["nested", "section", "sphinx", "150", "13000"]  # support.page_memory's argv

URL = "https://h.test/nested.html"
CRAWL = CrawlInfo("c", "Demo", "1.0")
MB = 1024 * 1024


def _measure(
    sections: int,
    section_bytes: int,
    kind: str = "section",
    lazy: bool = True,
    generator: str = "sphinx",
) -> dict[str, Any]:
    """One page extracted and bounded as the consumer does: its size, its output bound,
    the peak of traced memory above what was allocated before, the items."""
    body = nested_page(sections, section_bytes, kind, generator)
    task = Task("t", URL, nested_entries(sections, kind))
    gc.collect()
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        contents = extract_page(body, URL, task.entries, lazy=lazy)
        items = page_items(CRAWL, task, contents, SizeLimits(), len(body))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if not tracing:
            tracemalloc.stop()
    return {
        "page": len(body),
        "budget": page_budget(SizeLimits(), len(body)),
        "peak": peak,
        "items": items,
    }


def _bound(got: dict[str, Any]) -> int:
    """The guarantee: a few times the page (its tree's texts, memos), and a few times its
    output bound (an item's cut string is two bytes a character, the marker's "…" not
    being Latin-1, with its UTF-8 once measured; its JSON for the checksum)."""
    return 8 * got["page"] + 4 * got["budget"]


def test_150_nested_sections_stay_within_the_page_and_its_output_bound() -> None:
    got = _measure(150, 10_000)
    assert 1.4 * MB < got["page"] < 2 * MB
    items = got["items"]
    assert len(items) == 151 and {i["status"] for i in items} == {"ok"}
    sizes = [len(orjson.dumps(i)) for i in items]
    assert sum(sizes) <= got["budget"] + 2048 * len(items)
    assert "cut to fit" in (items[0]["reason"] or "")  # the outer sections were cut
    assert items[-2]["reason"] is None  # the innermost is whole
    assert all(i["checksum"] == checksum(i) for i in items)
    assert got["peak"] < _bound(got), (got["peak"] / MB, _bound(got) / MB)  # ~75 MB


@pytest.mark.parametrize(
    ("kind", "generator"),
    [
        ("div", "sphinx"),
        ("span", "sphinx"),
        ("dt", "sphinx"),
        ("section", "unknown"),
        ("div", "mkdocs"),
    ],
)
def test_other_nestings_stay_within_the_bound(kind: str, generator: str) -> None:
    """Blocks with ids (the Sphinx rules, the generic ones, mkdocstrings'), inline
    spans of text holding each other, and object descriptions libxml2 closed late (each
    dt holding all those after it: their raw texts were kept per dt, 166 MB on 2 MB)."""
    got = _measure(150, 10_000, kind, generator=generator)
    assert got["items"][0]["generator"] == {"mkdocs": "mkdocstrings"}.get(generator, generator)
    assert {i["status"] for i in got["items"]} == {"ok"}
    assert got["peak"] < _bound(got), (got["peak"] / MB, _bound(got) / MB)


def test_a_consumer_process_extracting_150_nested_sections_stays_within_the_bound() -> None:
    """The same guarantee as the process's own peak resident set, in a child of its own
    (``support.page_memory``, the consumer's calls): 83 MB on 2 MB, 338 MB before."""
    got = support_json("page_memory", *NESTED_150)
    assert 1.6 * MB < got["page_bytes"] < 2.1 * MB and got["statuses"] == ["ok"]
    grew = (got["peak_mb"] - got["before_mb"]) * MB
    assert grew < 8 * got["page_bytes"] + 4 * got["budget"], got


def test_control_every_section_a_string_of_its_own_breaks_the_bound() -> None:
    """The same page with its texts joined before the bounds (the extraction before
    ropes): ~300 MB, and the same items."""
    got = _measure(150, 10_000, lazy=False)
    assert got["peak"] > _bound(got), (got["peak"] / MB, _bound(got) / MB)


def test_doubling_the_nested_sections_doubles_memory_at_most() -> None:
    """Twice the sections (each of one size: twice the page) cost at most about twice the
    memory: linear, where a copy of its text per section is quadratic (the control:
    ~3 times here, tending to 4 as the sections grow). 1.8 times here: the output bound
    grows with the page."""
    small, large = _measure(60, 16_000), _measure(120, 16_000)
    assert large["peak"] <= 2.3 * small["peak"], (small["peak"] / MB, large["peak"] / MB)
    old_small, old_large = _measure(60, 16_000, lazy=False), _measure(120, 16_000, lazy=False)
    assert old_large["peak"] > 2.6 * old_small["peak"], (old_small["peak"], old_large["peak"])


@pytest.mark.parametrize(
    ("sections", "section_bytes", "kind", "item_bytes"),
    [(30, 20_000, "section", 100_000), (60, 5_000, "div", 50_000), (20, 8_000, "section", 0)],
)
def test_items_are_byte_identical_to_those_of_joined_texts(
    sections: int, section_bytes: int, kind: str, item_bytes: int
) -> None:
    """Ropes change what is held, not what is written: the items, cut or whole, are
    those of the texts joined first."""
    body = nested_page(sections, section_bytes, kind)
    task = Task("t", URL, nested_entries(sections, kind))
    limits = SizeLimits(item_bytes=item_bytes) if item_bytes else SizeLimits()
    lazy = extract_page(body, URL, task.entries, lazy=True)
    assert any(isinstance(v, Rope) for c in lazy for v in c.values())
    joined = extract_page(body, URL, task.entries)
    assert not any(isinstance(v, Rope) for c in joined for v in c.values())
    got = page_items(CRAWL, task, lazy, limits, len(body))
    want = page_items(CRAWL, task, joined, limits, len(body))
    assert [orjson.dumps(i) for i in got] == [orjson.dumps(i) for i in want]
    if item_bytes:
        assert any("cut to fit" in (i["reason"] or "") for i in got)
