"""Which program generated a page (common/extract/generators.py): the generator meta first,
then each generator's markup, else unknown."""

from __future__ import annotations

import pytest

from invcrawl.common.extract.generators import Generator, detect_generator
from invcrawl.common.extract.parsing import parse


def page(head: str, body: str) -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Sphinx 7.2.6", Generator.SPHINX),
        ("Docutils 0.20.1: https://docutils.sourceforge.io/", Generator.SPHINX),
        ("pydoctor 25.4.0", Generator.PYDOCTOR),
        ("mkdocs-1.6.1, mkdocs-material-9.5.0", Generator.MKDOCSTRINGS),
        ("Hugo 0.120", Generator.UNKNOWN),
    ],
)
def test_the_generator_meta_names_it(content: str, expected: Generator) -> None:
    root = parse(page(f'<meta name="generator" content="{content}">', "<p>x</p>"))
    assert root is not None
    assert detect_generator(root) is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '<div class="doc doc-object doc-function"><h2 class="doc doc-heading">f</h2></div>',
            Generator.MKDOCSTRINGS,
        ),
        ('<h1 class="thingTitle">mod.C</h1><div class="docstring">x</div>', Generator.PYDOCTOR),
        (
            '<dl class="py function"><dt id="f"><span class="sig-name descname">f</span></dt></dl>',
            Generator.SPHINX,
        ),
        (
            '<div role="main"><h1>Hello<a class="headerlink" href="#h">#</a></h1></div>',
            Generator.SPHINX,
        ),
        ("<main><h1>Just a page</h1><p>text</p></main>", Generator.UNKNOWN),
    ],
)
def test_without_a_meta_the_markup_names_it(body: str, expected: Generator) -> None:
    root = parse(page("<title>t</title>", body))
    assert root is not None
    assert detect_generator(root) is expected
