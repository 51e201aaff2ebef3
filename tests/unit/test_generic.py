"""Pages of an unknown generator (common/extract/generic.py): hand-made pages of a few
shapes (headings with ids, ``<a name>`` targets before headings, definition lists,
sections), each wrapped in page chrome (header, nav, aside, footer, and divs named so).
Every entry is found, an object's header is its heading and its doc never begins with
it, no doc holds the chrome, a target inside the chrome is still found; labels and pages
(``std``) keep Sphinx's rule, a section with its heading."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from support.targets import target

URL = "https://docs.example.org/lib.html"
CHROME_TEXTS = ("MySite", "Cannot search", "Related links", "Copyright", "Footer text", "Home")


def _page(content: str, layout: str) -> bytes:
    if layout == "landmarks":
        html = (
            '<header><h1>MySite</h1><nav><a href="#x">Home</a></nav></header>\n'
            '<aside><h2 id="side">Sidebar</h2>\n<p>Related links.</p></aside>\n'
            f"<main>{content}</main>\n<footer><p>Copyright 2024</p></footer>"
        )
    else:  # divs named as chrome, no landmark
        html = (
            '<div id="header"><h1>MySite</h1>\n<p>Cannot search: no JavaScript</p></div>\n'
            '<div class="sidebar"><h2 id="side">Sidebar</h2>\n<p>Related links.</p></div>\n'
            f'<div class="content">{content}</div>\n<div id="footer">Footer text</div>'
        )
    return f"<html><head><title>Lib</title></head><body>\n{html}\n</body></html>".encode()


HEADINGS = """<h1>Lib reference</h1>
<p>Intro of the lib.</p>
<h2 id="install">Installing</h2>
<p>Run pip install lib.</p>
<p>Then import it.</p>
<h2 id="api">API</h2>
<h3 id="lib.open">open(path, mode='r')</h3>
<p>Open a path.</p>
<h3 id="lib.close">close()</h3>
<p>Close it.</p>
"""
ANAMES = """<h1>Module foo</h1>
<p>Intro.</p>
<a name="foo.bar"></a><h3>bar(x, *rest)</h3>
<p>Bar does x.</p>
<a name="foo.baz"></a><h3>baz()</h3>
<p>Baz.</p>
"""
DLS = """<h1>API</h1>
<dl><dt id="f">f(a, b=2)</dt><dd><p>Function f.</p></dd>
<dt id="g">g()</dt><dd><p>Function g.</p></dd></dl>
"""
SECTIONS = """<section id="guide"><h1>Guide</h1>
<p>Guide text.</p>
<section id="usage"><h2>Usage</h2>
<p>Use it well.</p></section></section>
"""


def _run(content: str, layout: str, entries: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    targets = [
        target(key.split(":")[1], key.split(":")[0], role, anchor, "-")
        for key, role, anchor in entries
    ]
    return extract_page(_page(content, layout), URL, targets)


@pytest.mark.parametrize("layout", ["landmarks", "divs"])
def test_headings_with_ids(layout: str) -> None:
    install, opener, closer, page, side = _run(
        HEADINGS,
        layout,
        [
            ("std:install", "label", "install"),
            ("py:lib.open", "function", "lib.open"),
            ("py:lib.close", "function", "lib.close"),
            ("std:lib", "doc", ""),
            ("std:side", "label", "side"),
        ],
    )
    assert install["generator"] == "unknown"
    # a std label keeps Sphinx's rule: its heading's blocks, the heading first
    assert install["doc"] == "Installing Run pip install lib. Then import it."
    assert opener["signature"] == "open(path, mode='r')" and opener["doc"] == "Open a path."
    assert [(p["name"], p["default"]) for p in opener["params"]] == [
        ("path", None),
        ("mode", "'r'"),
    ]
    assert closer["doc"] == "Close it."
    assert page["title"] == "Lib reference" and page["doc"].startswith("Lib reference Intro")
    assert side["status"] == "ok" and "Related links." in side["doc"]  # a fragment in chrome
    for item in (install, opener, closer, page):
        assert not any(c in item["doc"] or c in item["doc_markdown"] for c in CHROME_TEXTS)


@pytest.mark.parametrize("layout", ["landmarks", "divs"])
def test_a_name_targets_before_headings(layout: str) -> None:
    bar, baz, module = _run(
        ANAMES,
        layout,
        [
            ("py:foo.bar", "function", "foo.bar"),
            ("py:foo.baz", "function", "foo.baz"),
            ("py:foo", "module", ""),
        ],
    )
    assert (bar["status"], bar["signature"], bar["doc"]) == ("ok", "bar(x, *rest)", "Bar does x.")
    assert [(p["name"], p["kind"]) for p in bar["params"]] == [
        ("x", "positional-or-keyword"),
        ("*rest", "var-positional"),
    ]
    assert baz["doc"] == "Baz." and bar["parent"] == "foo"
    assert module["title"] == "Module foo" and module["doc"].startswith("Intro.")
    assert not any(c in module["doc"] for c in CHROME_TEXTS)


@pytest.mark.parametrize("layout", ["landmarks", "divs"])
def test_definition_lists_and_sections(layout: str) -> None:
    f, g = _run(DLS, layout, [("py:f", "function", "f"), ("py:g", "function", "g")])
    assert (f["signature"], f["doc"]) == ("f(a, b=2)", "Function f.")
    assert [(p["name"], p["default"]) for p in f["params"]] == [("a", None), ("b", "2")]
    assert g["doc"] == "Function g."
    guide, usage = _run(
        SECTIONS, layout, [("std:guide", "label", "guide"), ("std:usage", "label", "usage")]
    )
    assert guide["title"] == "Guide" and guide["doc"].startswith("Guide Guide text.")
    assert (usage["title"], usage["doc"]) == ("Usage", "Usage Use it well.")
    (klass,) = _run(
        '<section id="m.K"><h2>class K(a)</h2><p>A class.</p></section>',
        layout,
        [("py:m.K", "class", "m.K")],
    )
    assert (klass["signature"], klass["doc"], klass["parent"]) == ("class K(a)", "A class.", "m")
