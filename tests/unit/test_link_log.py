"""The link log's records (``common/search/link_log.py``): a page's distinct links to
other pages, a page's last record winning, torn records left for the next read."""

from __future__ import annotations

import pytest

from invcrawl.common.search import link_log
from invcrawl.common.search.link_log import InboundLinks, page_record

PAGE_A, PAGE_B = "a" * 16, "b" * 16
OPEN = "http://docs.test/functions.html#open"
PATH = "http://docs.test/os.path.html#os.path.exists"


def test_a_record_holds_a_pages_distinct_links_to_other_pages() -> None:
    own = "http://docs.test/io.html"
    record = page_record(PAGE_A, own, [OPEN, OPEN, PATH, own + "#io.open"])
    [(page, targets, stop)] = list(link_log.each_record(record))
    assert page == bytes.fromhex(PAGE_A[:12]) and stop == len(record)
    assert targets == tuple(sorted({link_log.url_digest(OPEN), link_log.url_digest(PATH)}))


def test_counts_are_of_pages_and_a_pages_last_record_wins() -> None:
    links = InboundLinks()
    links.merge(page_record(PAGE_A, "http://docs.test/a.html", [OPEN, PATH]))
    links.merge(page_record(PAGE_B, "http://docs.test/b.html", [OPEN, OPEN]))
    assert (links.count(OPEN), links.count(PATH), links.count("http://x/#y")) == (2, 1, 0)
    links.merge(page_record(PAGE_A, "http://docs.test/a.html", [PATH]))  # committed again
    assert (links.count(OPEN), links.count(PATH)) == (1, 1)
    links.merge(link_log.page_digest(PAGE_B) + b"\0\0")  # a page gone (tombstone.lua)
    assert links.count(OPEN) == 0 and links.count("") == 0


def test_a_torn_record_is_read_once_it_is_whole() -> None:
    data = page_record(PAGE_A, "http://docs.test/a.html", [OPEN, PATH])
    links = InboundLinks()
    links.merge(data[:-3])
    assert links.offset == 0 and links.count(OPEN) == 0
    links.merge(data[links.offset :])
    assert links.offset == len(data) and links.count(OPEN) == 1


def test_a_page_keeps_at_most_max_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_log, "MAX_TARGETS", 3)
    urls = [f"http://docs.test/p{n}.html#x" for n in range(10)]
    [(_, targets, _)] = list(link_log.each_record(page_record(PAGE_A, "http://o/", urls)))
    assert len(targets) == 3


def test_the_prior_grows_slowly_with_the_pages() -> None:
    values = [link_log.prior(n) for n in (0, 1, 10, 100, 1000)]
    assert values[0] == 1.0 and values == sorted(values)
    assert values[-1] < 1.5  # a prior: it orders what the blend finds close, no more
