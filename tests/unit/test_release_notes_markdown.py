"""Release notes (``diff --markdown``) render inert whatever a site stored (issue 36): a
key, a module name, a parameter, a value, a version or the project and version in the
title holding ``<script>``, ``<img onerror>``, a remote image, backticks or line breaks
come out as text through a CommonMark renderer (markdown-it-py), never as HTML, and
every code span shows its value exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lxml import html as lxml_html
from markdown_it import MarkdownIt

from invcrawl.common.apidiff import diff_all
from invcrawl.common.apidiff.render import markdown, markdown_code, markdown_text
from invcrawl.common.params import POSITIONAL_OR_KEYWORD

RENDERERS = [
    MarkdownIt("commonmark"),
    MarkdownIt("commonmark").enable(["table", "strikethrough"]),  # GFM's block and inline
]
OURS = {"div", "h1", "h2", "h3", "p", "ul", "li", "code"}  # the tags the notes are made of
HOSTILE = [
    "<script>alert(1)</script>",
    '<img src="x" onerror="alert(1)">',
    "![tracker](https://tracker.example/pixel.png)",
    "[click](javascript:alert(1))",
    "<https://tracker.example/a>",
    "a\n<script>x()</script>\n# heading",
    "a\r\n\r\n<img src=x onerror=y>",
    "``` fenced `` ticks `",
    "*emphasis* _u_ ~~s~~ | a | b |",
    "&lt;script&gt; &#60;img&#62;",
    "\\<script>",
    "https://tracker.example/x.png",
    " padded ",
    "`",
]


def tags_and_root(notes: str) -> list[tuple[set[str], Any]]:
    out = []
    for renderer in RENDERERS:
        root = lxml_html.fromstring("<div>" + renderer.render(notes) + "</div>")
        out.append(({el.tag for el in root.iter() if isinstance(el.tag, str)}, root))
    return out


def item(key: str, **fields: Any) -> dict[str, Any]:
    return {"key": key, "domain": "py", "status": "ok", "signature": "f()", "doc": "Doc.",
            "params": [], "returns": [], "raises": [], "versions": [], **fields}  # fmt: skip


def hostile_notes(text: str) -> str:
    module = text
    old = {
        f"py:function:{text}.f": item(
            f"py:function:{text}.f",
            params=[{"name": text, "kind": POSITIONAL_OR_KEYWORD, "default": text}],
            raises=[{"type": "E"}],
        ),
        f"py:function:{text}.gone": item(f"py:function:{text}.gone"),
    }
    new = {
        f"py:function:{text}.f": item(
            f"py:function:{text}.f",
            params=[{"name": text, "kind": POSITIONAL_OR_KEYWORD, "default": text + "2"}],
            returns=[{"type": text}],
            raises=[{"type": text}],
            versions=[{"kind": "deprecated", "version": text, "text": ""}],
            signature=text,
        ),
        f"py:class:{text}.New": item(f"py:class:{text}.New"),
    }
    return markdown(diff_all(old, new), f"{text} 1.0", f"P {text}", [module])


def test_stored_html_and_images_come_out_as_text() -> None:
    for text in HOSTILE:
        notes = hostile_notes(text)
        for tags, root in tags_and_root(notes):
            assert tags <= OURS, (text, tags - OURS, notes)
            shown = " ".join(text.split())
            heading = root.find(".//h1").text_content()
            assert " ".join(heading.split()).startswith(f"Changes from {shown} 1.0"), notes
            modules = [" ".join(h.text_content().split()) for h in root.iter("h2")]
            assert shown in modules or not shown, (modules, notes)
            codes = {c.text_content() for c in root.iter("code")}
            flat = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
            assert f"py:function:{flat}.gone" in codes, (codes, notes)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=30))
@example(" ")
@example("  a ")
@example("` ")
@example("\x00")
def test_any_text_renders_as_exactly_that_text(text: str) -> None:
    flat = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").replace("\x00", "\ufffd")
    for renderer in RENDERERS:
        code = lxml_html.fromstring(
            "<div>" + renderer.render("a " + markdown_code(text)) + "</div>"
        )
        assert {el.tag for el in code.iter()} <= {"div", "p", "code"}
        assert code.find(".//code").text_content() == flat
        prose = lxml_html.fromstring(
            "<div>" + renderer.render("## x " + markdown_text(text) + " y") + "</div>"
        )
        assert {el.tag for el in prose.iter()} <= {"div", "h2"}
        assert " ".join(prose.text_content().split()) == " ".join(f"x {flat} y".split())
