"""How the consumer turns a download into bytes and an encoding for extraction."""

from __future__ import annotations

import gzip

import pytest
from scrapy.http import HtmlResponse

from invcrawl.consumer.spider import declared_charset, inflate_gzip

PAGE = '<html><head><meta charset="utf-8"></head><body><p id="x">café</p></body></html>'


def test_gzip_bodies_are_inflated_and_plain_ones_kept() -> None:
    raw = PAGE.encode()
    assert inflate_gzip(gzip.compress(raw), 1 << 20) == raw
    assert inflate_gzip(raw, 1 << 20) is raw


def test_inflation_is_bounded() -> None:
    with pytest.raises(ValueError, match="inflates beyond"):
        inflate_gzip(gzip.compress(b"\0" * (1 << 20)), 1000)


def test_only_a_declared_charset_is_passed_on() -> None:
    # A .html.gz served as application/octet-stream: Scrapy guesses an encoding from
    # the compressed bytes; that guess must not reach the parser.
    body = gzip.compress(PAGE.encode())
    response = HtmlResponse(
        "http://h/p.html", body=body, headers={"Content-Type": "application/octet-stream"}
    )
    assert declared_charset(response) is None
    declared = HtmlResponse(
        "http://h/p.html",
        body=PAGE.encode(),
        headers={"Content-Type": 'text/html; charset="ISO-8859-1"'},
    )
    assert declared_charset(declared) == "ISO-8859-1"
