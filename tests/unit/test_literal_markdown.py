# ruff: noqa: E501  (the HTML snippets are verbatim Sphinx output)
"""Literal roles in doc_markdown (issue 28): Markdown that renders through CommonMark with no
stray marker, code spans included, for the shapes that left some on real sites: ``:kbd:``
compounds, placeholders in ``:samp:``/``:file:`` (``{name}``), code spans that touch, and
literal backticks in the text (in emphasis, in a paragraph without markup)."""

from __future__ import annotations

import pytest

from invcrawl.common.extract import extract_page
from support.markdown_check import rendered_text, stray_markers
from support.targets import target

URL = "https://docs.example.org/api.html"


def section(paragraph: str) -> dict[str, str]:
    body = (
        '<html><body><div role="main"><section id="s"><h1>Title</h1>'
        f"{paragraph}</section></div></body></html>"
    ).encode()
    [out] = extract_page(body, URL, [target("s", "std", "label", "s", "-")])
    return {"doc": out["doc"], "markdown": out["doc_markdown"].split("\n\n", 1)[1]}


CASES = {
    "kbd compound": (
        '<p>Press <kbd class="kbd compound docutils literal notranslate"><kbd class="kbd docutils literal notranslate">Ctrl</kbd>-<kbd class="kbd docutils literal notranslate">C</kbd></kbd> to stop.</p>',
        "Press `Ctrl-C` to stop.",
    ),
    "kbd compound with spaces": (
        '<p><kbd class="kbd compound docutils literal notranslate"><kbd class="kbd docutils literal notranslate">$</kbd> <kbd class="kbd docutils literal notranslate">apt</kbd>-<kbd class="kbd docutils literal notranslate">get</kbd></kbd></p>',
        "`$ apt-get`",
    ),
    "samp placeholder": (
        '<p>See <code class="samp docutils literal notranslate"><span class="pre">issues/</span><em><span class="pre">num</span></em></code>, or <code class="samp docutils literal notranslate"><span class="pre">\'no-</span><em><span class="pre">flag</span></em><span class="pre">\'</span></code>.</p>',
        "See `issues/`*`num`*, or `'no-`*`flag`*`'`.",
    ),
    "file placeholder": (
        '<p>Creates <code class="file docutils literal notranslate"><span class="pre">Distutils-1.0.</span><em><span class="pre">plat</span></em><span class="pre">.tar.gz</span></code>; unpack it.</p>',
        "Creates `Distutils-1.0.`*`plat`*`.tar.gz`; unpack it.",
    ),
    "code spans that touch": (
        '<p>with <code class="docutils literal notranslate"><span class="pre">msgid=</span></code><code class="docutils literal notranslate"><span class="pre">RES_ANY</span></code> to</p>',
        "with `msgid=RES_ANY` to",
    ),
    "backtick in emphasis": (
        '<p>Uses the <em>curried`</em> versions of <code class="docutils literal notranslate"><span class="pre">map</span></code>.</p>',
        "Uses the *curried\\`* versions of `map`.",
    ),
    "backticks and stars in math-like text": (
        "<p>g^(-1)(z`) = <em>z`**(1/`power</em></p>",
        "g^(-1)(z\\`) = *z\\`\\*\\*(1/\\`power*",
    ),
    "paragraph without markup": ("<p>a `tick and 2*3*4</p>", "a \\`tick and 2\\*3\\*4"),
}


@pytest.mark.parametrize("name", CASES)
def test_literal_shapes_render_without_stray_markers(name: str) -> None:
    html, expected = CASES[name]
    out = section(html)
    assert out["markdown"] == expected
    assert stray_markers(out["doc"], out["markdown"], code=True) == []
    assert rendered_text(out["markdown"], code=True) == out["doc"].removeprefix("Title").strip()


def test_a_code_span_that_is_all_emphasis_stays_one_code_span() -> None:
    assert (
        section("<p>the <code><em>nested</em></code> code</p>")["markdown"] == "the `nested` code"
    )


def test_a_literal_backtick_in_a_list_item_is_escaped() -> None:
    out = section(
        "<ul><li><p>Fix <code>a</code> and a stray ` here</p></li><li><p>two</p></li></ul>"
    )
    assert out["markdown"] == "- Fix `a` and a stray \\` here\n- two"
    assert "\ufdd0" not in out["markdown"]


def test_a_control_character_of_the_page_stays_itself() -> None:
    out = section("<p>send Ctrl-G (ASCII 7, bell, \u2018\x07\u2019) and a ` tick</p>")
    assert out["markdown"] == "send Ctrl-G (ASCII 7, bell, \u2018\x07\u2019) and a \\` tick"
    assert stray_markers(out["doc"], out["markdown"], code=True) == []


def test_a_code_span_is_fenced_past_the_longest_backtick_run_in_one_pass() -> None:
    from invcrawl.common.extract.inline import code_span

    assert code_span("a``b`c") == "```a``b`c```"
    assert code_span("`x`") == "`` `x` ``"
    run = "`" * 200_000  # a fence grown one backtick per search was quadratic here
    assert code_span(f"a{run}b") == f"{run}`a{run}b{run}`"
