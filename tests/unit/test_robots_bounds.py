"""robots.txt bounds without a network: the size cap at a line boundary, the parse under
the extraction budget (a file that outlasts it is not obeyed, and never holds the
consumer), and which Crawl-delay values count."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from invcrawl.fetch.robots import ROBOTS_MAX_BYTES, SharedRobotsTxtMiddleware, crawl_delay, head

# ~40 bytes a rule: about 13,000 wildcard rules in the 500 KiB that are read.
HEAVY = "User-agent: *\n" + "".join(f"Disallow: /n/*x{i}*y*z.html$\n" for i in range(13_000))


def _middleware(budget: float) -> tuple[SharedRobotsTxtMiddleware, Crawler]:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "INVCRAWL_EXTRACT_BUDGET": budget})
    return SharedRobotsTxtMiddleware.from_crawler(crawler), crawler


def test_only_the_first_500_kib_are_read_up_to_a_whole_line() -> None:
    body = b"User-agent: *\n" + b"Disallow: /abcdefghij\n" * 40_000
    first = head(body)
    assert len(first) <= ROBOTS_MAX_BYTES < len(body)
    assert first.endswith(b"\n") and body.startswith(first)
    assert head(b"short\n") == b"short\n"
    assert head(b"x" * (ROBOTS_MAX_BYTES + 10)) == b""  # no line ends in what is read


def test_parsing_past_the_budget_obeys_nothing() -> None:
    """The parse of 13,000 wildcard rules takes a few hundred ms of CPU: with a budget of
    one millisecond it is cut short, counted, and the robots.txt treated as absent."""
    middleware, crawler = _middleware(0.001)
    assert middleware.rules_from("http://h.test:80", {"body": HEAVY}) is None
    assert crawler.stats.get_value("invcrawl/robots_over_budget") == 1
    unbounded, _ = _middleware(0)
    rules = unbounded.rules_from("http://h.test:80", {"body": HEAVY})
    assert rules is not None and not rules.can_fetch("http://h.test/n/ax7yz.html", "invcrawl")
    assert unbounded.rules_from("http://h.test:80", {"body": None}) is None


class _Rules:
    def __init__(self, delay: Any) -> None:
        self.delay = delay

    def crawl_delay(self, agent: str) -> Any:
        return self.delay


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
    assert crawl_delay(_Rules(delay), "invcrawl") == seconds  # type: ignore[arg-type]
    assert crawl_delay(None, "invcrawl") == 0.0
