"""robots.txt bounds without a network: the size cap at a line boundary, the parse under
the extraction budget (a file that outlasts it is not obeyed, and never holds the
consumer), and which Crawl-delay values count."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from fetch.robots import ROBOTS_MAX_BYTES, SharedRobotsTxtMiddleware, _crawl_delay, _head

# ~40 bytes a rule: about 13,000 wildcard rules in the 500 KiB that are read.
HEAVY = "User-agent: *\n" + "".join(f"Disallow: /n/*x{i}*y*z.html$\n" for i in range(13_000))


def _middleware(budget: float) -> SharedRobotsTxtMiddleware:
    settings = {"ROBOTSTXT_OBEY": True, "INVCRAWL_EXTRACT_BUDGET": budget}
    return SharedRobotsTxtMiddleware(get_crawler(settings_dict=settings))


def test_only_the_first_500_kib_are_read_up_to_a_whole_line() -> None:
    body = b"User-agent: *\n" + b"Disallow: /abcdefghij\n" * 40_000
    head = _head(body)
    assert len(head) <= ROBOTS_MAX_BYTES < len(body)
    assert head.endswith(b"\n") and body.startswith(head)
    assert _head(b"short\n") == b"short\n"
    assert _head(b"x" * (ROBOTS_MAX_BYTES + 10)) == b""  # no line ends in what is read


def test_parsing_past_the_budget_obeys_nothing() -> None:
    """The parse of 13,000 wildcard rules takes a few hundred ms of CPU: with a budget of
    one millisecond it is cut short, counted, and the robots.txt treated as absent."""
    middleware = _middleware(0.001)
    assert middleware._parse("http://h.test:80", {"body": HEAVY}) is None
    assert middleware._stats.get_value("invcrawl/robots_over_budget") == 1
    unbounded = _middleware(0)
    parser = unbounded._parse("http://h.test:80", {"body": HEAVY})
    assert parser is not None and not parser.allowed("http://h.test/n/ax7yz.html", "invcrawl")
    assert unbounded._parse("http://h.test:80", {"body": None}) is None


class _Rules:
    def __init__(self, delay: Any) -> None:
        self.delay = delay

    def crawl_delay(self, agent: str) -> Any:
        return self.delay


class _Parser:
    def __init__(self, delay: Any) -> None:
        self.rp = _Rules(delay)


@pytest.mark.parametrize(
    ("delay", "seconds"),
    [
        (None, 0.0),
        (2.5, 2.5),
        (1e20, 1e20),  # capped by the caller (--max-crawl-delay), recorded as asked
        (float("nan"), 0.0),
        (float("inf"), 0.0),
        (-3, 0.0),
        ("junk", 0.0),
    ],
)
def test_only_a_finite_positive_crawl_delay_counts(delay: Any, seconds: float) -> None:
    assert _crawl_delay(_Parser(delay), b"invcrawl") == seconds
    assert _crawl_delay(object(), "invcrawl") == 0.0
