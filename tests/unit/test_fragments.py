"""Fragments found as a browser finds them (the HTML standard's indicated part of the
document), on every generator's pages: the element with that id, else the first ``a``
element with that name, else ``anchor_missing``; then the same for the percent-decoded
fragment."""

from __future__ import annotations

from typing import Any

from invcrawl.common.extract import extract_page
from invcrawl.common.extract.page import build
from invcrawl.common.extract.parsing import parse
from support.targets import target

URL = "https://docs.example.org/api/page.html"


def _page(main: str, side: str = "") -> bytes:
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>'
        f'<div class="sphinxsidebar">{side}</div><div class="body" role="main">{main}</div>'
        "</body></html>"
    ).encode()


def _label(body: bytes, anchor: str) -> dict[str, Any]:
    [out] = extract_page(body, URL, [target(anchor, "std", "label", anchor, "-")])
    return out


def _fragment(body: bytes, anchor: str) -> Any:
    root = parse(body)
    return build(root, URL, body).fragment(anchor)


def test_a_name_is_found_when_no_element_has_the_id() -> None:
    body = _page('<h1>T</h1><p>before</p><a name="old"></a><p>The old anchor.</p><h2>Next</h2>')
    out = _label(body, "old")
    assert (out["status"], out["doc"]) == ("ok", "The old anchor.")


def test_an_id_anywhere_wins_over_an_a_name() -> None:
    body = _page('<a name="x"></a><p>by name</p>', side='<p id="x">by id, outside main</p>')
    el = _fragment(body, "x")
    assert el.tag == "p" and el.get("id") == "x"


def test_the_first_a_with_that_name_wins_and_only_a_counts() -> None:
    body = _page(
        '<span name="n">a span is no target</span><a name="n">first</a><a name="n">second</a>'
    )
    el = _fragment(body, "n")
    assert (el.tag, el.text) == ("a", "first")
    assert _fragment(_page('<span name="s">x</span><div name="s">y</div>'), "s") is None


def test_percent_decoded_fragment_is_tried_second() -> None:
    body = _page('<p id="café">coffee</p><p id="a%20b">literal percent</p><a name="c d"></a>')
    assert _fragment(body, "caf%C3%A9").text == "coffee"
    assert _fragment(body, "a%20b").text == "literal percent"  # as written first
    assert _fragment(body, "c%20d").tag == "a"
    assert _fragment(body, "caf%E9") is None  # not UTF-8: no second candidate


def test_missing_fragment_is_anchor_missing() -> None:
    out = _label(_page('<h1>T</h1><p>Intro.</p><a name="other"></a>'), "gone")
    assert out["status"] == "anchor_missing"
