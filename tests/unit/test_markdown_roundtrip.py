"""doc_markdown renders: parsed by a CommonMark parser (markdown-it-py), it gives back
the item's text with no stray ``*`` or backtick. One fixture per pattern that broke on
real sites (numpydoc parameter lists, typed Sphinx fields, c:function notes, icon
links, literal stars), each reproducing the pattern rather than one page."""

from __future__ import annotations

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.extract.inline import EM_CLOSE, EM_OPEN, STRONG_CLOSE, STRONG_OPEN, emphasis
from support.markdown_check import COMMONMARK, stray_markers
from support.targets import target

URL = "https://docs.example.org/en/latest/api/mod.html"


def item(dd_html: str, sig: str = "f(x)") -> dict[str, object]:
    body = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>'
        '<div class="body" role="main"><section id="mod"><h1>mod</h1>'
        f'<dl class="py function"><dt class="sig" id="mod.f">{sig}</dt><dd>{dd_html}</dd></dl>'
        "</section></div></body></html>"
    ).encode()
    [out] = extract_page(body, URL, [target("mod.f", "py", "function", "mod.f", "-")])
    assert out["status"] == "ok"
    return out


NUMPYDOC = (
    '<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span>'
    '</dt><dd class="field-odd"><dl class="simple">'
    '<dt><strong>axis</strong><span class="classifier">{-2, -1, 0, 1, None}, optional</span></dt>'
    "<dd><p>The axis to use.</p></dd>"
    '<dt><strong>**kwargs</strong><span class="classifier">dict</span></dt>'
    "<dd><p>Passed on.</p></dd></dl></dd></dl>"
)
TYPED_FIELDS = (
    '<dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span>'
    '</dt><dd class="field-odd"><ul class="simple"><li><p><strong>exchange</strong> '
    "(<em>kombu.Exchange</em><em>, </em><em>str</em>) – the exchange.</p></li></ul></dd></dl>"
)
C_NOTES = (
    '<p><span class="refcount"><em>Return value: New reference.</em></span>'
    '<span class="stableabi"><em> Part of the <a href="stable.html#stable">Stable ABI</a>.'
    "</em></span></p><p>Does <em> things </em> with <strong></strong>nothing.</p>"
)
ICON_LINK = '<p><a href="prev.html"><i class="fa-solid fa-angle-left"></i> previous</a></p>'
STARS = "<p>Takes <code>*args</code> and *kwargs* as in 2*3*4, then <em>emphasis</em>.</p>"


@pytest.mark.parametrize(
    "dd", [NUMPYDOC, TYPED_FIELDS, C_NOTES, ICON_LINK, STARS], ids=lambda d: d[:30]
)
def test_markdown_renders_without_stray_markers(dd: str) -> None:
    out = item(dd)
    doc, markdown = str(out["doc"]), str(out["doc_markdown"])
    assert stray_markers(doc, markdown) == [], markdown


def test_numpydoc_parameters_are_a_list_of_name_type_description() -> None:
    markdown = str(item(NUMPYDOC)["doc_markdown"])
    assert "- **axis** (*{-2, -1, 0, 1, None}, optional*): The axis to use." in markdown
    assert "- **\\*\\*kwargs** (*dict*): Passed on." in markdown
    html = COMMONMARK.render(markdown)
    assert html.count("<li>") == 2 and "<strong>**kwargs</strong>" in html


def test_typed_field_separators_do_not_become_markers() -> None:
    markdown = str(item(TYPED_FIELDS)["doc_markdown"])
    assert "(*kombu.Exchange, str*)" in markdown
    assert "<em>kombu.Exchange, str</em>" in COMMONMARK.render(markdown)


def test_emphasis_sentinels() -> None:
    def em(text: str) -> str:
        return EM_OPEN + text + EM_CLOSE

    def strong(text: str) -> str:
        return STRONG_OPEN + text + STRONG_CLOSE

    assert emphasis("a" + em(" b ") + "c") == "a *b* c"  # markers hug the text
    assert emphasis("x" + em(", ") + "y") == "x, y"  # punctuation only: no emphasis
    assert emphasis(strong("a" + strong("b") + "c")) == "**abc**"  # nested same kind
    assert emphasis(strong("a " + em("b"))) == "**a *b***"
    assert emphasis(em("") + "z") == "z"
    assert emphasis("p" + EM_CLOSE + "q" + EM_OPEN) == "pq"  # unpaired: dropped
