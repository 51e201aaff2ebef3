"""The crawl command's progress line."""

from __future__ import annotations

from typing import Any

from invcrawl.render import progress_line


def status(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "producer": "done",
        "pages_total": 500,
        "pages_done": 250,
        "pages_dead": 1,
        "items": 7000,
        "items_by_status": {"ok": 6990},
        "rate_pages_s": 50.0,
        "eta_s": 5.0,
    }
    return base | overrides


def test_progress_counts_pages_items_and_dead() -> None:
    line = progress_line(status())
    assert "251/500 pages" in line and "7000 items (6990 ok)" in line and "(1 dead)" in line
    assert len(line) < 80


def test_before_the_inventory_is_read_it_says_so_instead_of_zero_pages() -> None:
    for producer in (None, "running"):
        line = progress_line(status(producer=producer, pages_total=0, pages_done=0, items=0))
        assert line.startswith("producing:") and "0/0" not in line
    # A crawl whose producer is done always shows its pages, even an empty one.
    assert "0/0 pages" in progress_line(status(pages_total=0, pages_done=0, pages_dead=0))
