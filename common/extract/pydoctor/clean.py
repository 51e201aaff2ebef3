"""What a pydoctor page's text never holds (permalinks, source links, placeholders, the
search box), and links out of code spans, done once per page before anything is read."""

from __future__ import annotations

from ..text import Element, drop, raw_text

# Chrome inside pydoctor's main: the search results box (whose <noscript> says "Cannot
# search: JavaScript is not supported/enabled in your browser"), the private-API toggle,
# and the "latest version" banner of Twisted's template.
_CHROME_IDS = frozenset(
    ("search-results-container", "showPrivate", "show-private", "current-docs-container")
)


def clean(main: Element, raw: bytes) -> None:
    """Drop what is never a symbol's text: permalinks and source links, pydoctor's
    "Undocumented" placeholders, the search results box and the private-API toggle,
    scripts. (Paragraphs and spans are visited only on a page that has a placeholder:
    pydoctor 25 writes a span per parameter and per quote.)"""
    noise: list[Element] = []
    tags = ["a", "div", "script", "noscript", "style"]
    if b"undocumented" in raw:
        tags += ["p", "span"]
    for el in main.iter(*tags):
        tag = el.tag
        if tag in ("script", "noscript", "style"):
            noise.append(el)
            continue
        cls = el.get("class")
        if tag == "a":
            if cls and ("headerLink" in cls or "sourceLink" in cls):
                noise.append(el)
        elif tag == "div":
            if el.get("id") in _CHROME_IDS:
                noise.append(el)
        elif cls and "undocumented" in cls.split():
            noise.append(el)
    for el in noise:
        if el.getparent() is not None:
            drop(el)
    for code in main.iter("code"):
        _link_outside(code)


def _link_outside(code: Element) -> None:
    """pydoctor writes a link to a name as ``<code><a>name</a></code>``; as Sphinx's
    ``<a><code>name</code></a>`` it is a link in Markdown, not a code span showing the
    link's brackets. A link among other code (a type, ``Optional[<a>Option</a>]``) keeps
    its text only: a code span cannot hold a link."""
    if not len(code):
        return
    if len(code) != 1 or (code.text or "").strip():
        _unwrap_links(code)
        return
    a = code[0]
    if a.tag != "a" or (a.tail or "").strip() or len(a):
        _unwrap_links(code)
        return
    parent = code.getparent()
    if parent is None:
        return
    code.text, a.text = a.text, None
    a.tail, code.tail = code.tail, None
    code.remove(a)
    parent.replace(code, a)
    a.append(code)


def _unwrap_links(code: Element) -> None:
    """Each ``a`` inside ``code`` replaced by its text (its children's text too)."""
    for a in list(code.iter("a")):
        parent = a.getparent()
        if parent is None:
            continue
        words = raw_text(a) + (a.tail or "")
        prev = a.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + words
        else:
            parent.text = (parent.text or "") + words
        parent.remove(a)


__all__ = ["clean"]
