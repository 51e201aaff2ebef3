"""The CommonMark round trip of ``doc_markdown`` (issue "Extraction on any theme"):
rendered by markdown-it-py, an item's Markdown must show no ``*`` or backtick that is not
in its text (a marker CommonMark left literal: broken emphasis or code)."""

from __future__ import annotations

from lxml import html as lxml_html
from markdown_it import MarkdownIt

COMMONMARK = MarkdownIt("commonmark")


def rendered_text(markdown: str, code: bool = False) -> str:
    """The text a reader sees; code spans and blocks left out (their characters are
    literal by definition) unless ``code``: a marker inside a code span (``Ctrl`-`C``,
    ``issues/*num*``) is a stray too, since the item's text has none."""
    if not markdown.strip():
        return ""
    root = lxml_html.fromstring("<div>" + COMMONMARK.render(markdown) + "</div>")
    if not code:
        for element in root.xpath("//code|//pre"):
            element.drop_tree()
    return " ".join(root.text_content().split())


def stray_markers(doc: str, markdown: str, code: bool = False) -> list[str]:
    """Markers the rendered Markdown shows more often than the item's text has them."""
    text = rendered_text(markdown, code)
    return [ch for ch in "*`" if text.count(ch) > doc.count(ch)]
