"""Links in inline Markdown: the fast link pattern must fail in linear time on an <a> that
has no "</a>" after it (a theme's prev/next link wrapping block elements put 3.6 s per page
into one dask page); the per-test timeout catches a pattern that backtracks again."""

from invcrawl.common.extract.inline import convert
from invcrawl.common.extract.links import Linker


def test_unclosed_link_with_long_text_converts_without_backtracking() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    fragment = f'<a class="left-prev" href="prev.html">\n  {text}\n  <i class="x"></i>'
    out = convert(fragment, Linker("http://h/docs/page.html"))
    assert "word0" in out and "word399" in out
    assert "](" not in out  # an unclosed link is no link


def test_links_still_convert_and_keep_no_trailing_blank() -> None:
    out = convert(
        'see <a class="r" href="a.html#x">the  thing </a> and <a href="b.html">b</a>',
        Linker("http://h/d/p.html"),
    )
    assert out == "see [the thing](http://h/d/a.html#x) and [b](http://h/d/b.html)"
