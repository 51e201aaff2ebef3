"""The symbols an entry's doc links to (its ``references``: docs/items.md), read from its
``doc_markdown``, whose links the converter made absolute (``links.py``). Pure.

A Sphinx doc names another symbol with ``<a class="reference internal"
href="page.html#anchor"><code class="xref py py-class">``, or, through intersphinx, with
``<a class="reference external" href="https://other.site/page.html#anchor">``; the
anchor of a Python object is its qualified name (``#str``, ``#os.path.exists``), the
``xref`` classes say its domain and role as the doc wrote them (``py`` ``py-class``).
mkdocstrings' autorefs and pydoctor link the same way without the classes. So each link
with an anchor is kept as the exact key when the link is to an entry of the same page
(the task's entries: the inventory entries this page holds), else as its URL and the
name its anchor gives, with the role of the ``xref`` when the page wrote one. Which symbol of
which crawl a link names elsewhere is read where every crawl is known
(``common/references.py``, the MCP server's ``get_symbol``).

Bounded: at most :data:`MAX_REFERENCES` per entry, each name at most
:data:`MAX_NAME` characters; a URL longer than :data:`MAX_URL` is not kept."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from invcrawl.common.tasks import TaskEntry

from .links import Linker

MAX_REFERENCES = 64
MAX_NAME = 200
MAX_URL = 1000

# A link's ``](url)``: the converter writes an absolute URL without spaces or
# parentheses. Its text is read back from the ``[`` before it only when its anchor names
# no object (rare): the scan is for the literal ``](``.
_LINK = re.compile(r"\]\(([a-z][a-z0-9+.-]*://[^()\s]+)\)")
_TEXT_BACK = 200  # characters of a link's text looked back at, at most

# Sphinx writes an xref as ``<a ... href="..."><code class="xref py py-class ...">``
# (``span`` for std refs): found in the page's bytes, its link's href just before it.
_XREF = re.compile(rb'class="xref ([A-Za-z][\w-]*) ([A-Za-z][\w-]*)')
_HREF = re.compile(rb'href="([^"]*)"[^<>]*>\s*<(?:code|span)\s[^<>]*$')
_LOOK_BACK = 1000  # bytes before an xref's class where its link's href may be


def xref_roles(body: bytes, linker: Linker) -> dict[str, str]:
    """``domain:role`` of each link of the page that Sphinx wrote as an xref (``py:class``
    for ``<code class="xref py py-class">``), by its absolute URL. The first wins."""
    roles: dict[str, str] = {}
    for match in _XREF.finditer(body):
        domain, role = match.group(1), match.group(2)
        if not role.startswith(domain + b"-"):
            continue
        start = match.start()
        at = body.rfind(b"<a ", max(0, start - _LOOK_BACK), start)
        link = _HREF.search(body, at, start) if at >= 0 else None
        if link is None or b"#" not in link.group(1):
            continue
        href = link.group(1).decode("utf-8", "replace")
        url = linker(html.unescape(href) if "&" in href else href)
        name = role[len(domain) + 1 :]
        roles.setdefault(url, f"{domain.decode()}:{name.decode()}")
    return roles


def anchor_keys(entries: Sequence[TaskEntry]) -> dict[str, str]:
    """The key of the entry at each anchor of the page (the first one of an anchor several
    entries share: the inventory lists an object before its aliases)."""
    keys: dict[str, str] = {}
    for entry in entries:
        if entry.anchor:
            keys.setdefault(entry.anchor, entry.key)
    return keys


Link = tuple[str | None, dict[str, Any]]  # (its anchor when on the page itself, reference)


def doc_links(
    markdown: str, page_url: str, anchors: Mapping[str, str], roles: Mapping[str, str]
) -> list[Link]:
    """The first :data:`MAX_REFERENCES` + 1 distinct links with an anchor of a doc, in its
    order: ``{"key"}`` of an entry of this page (``page_url``, whose anchors ``anchors``
    maps to keys), else ``{"name", "url"}`` and ``"role"`` when the page wrote its xref
    role (``roles``: :func:`xref_roles`); the anchor of a link to this page beside it
    (the entry itself is no reference of its own)."""
    if "](" not in markdown:
        return []
    page = page_url.split("#", 1)[0]
    out: list[Link] = []
    seen: set[str] = set()
    for match in _LINK.finditer(markdown):
        url = match.group(1)
        target, _, anchor = url.partition("#")
        if not anchor or len(url) > MAX_URL or url in seen:
            continue
        seen.add(url)
        anchor = unquote(anchor)
        text = _text_before(markdown, match.start()) if " " in anchor else ""
        name = reference_name(anchor, text)
        key = anchors.get(anchor) if target == page else None
        ref: dict[str, Any] = {"key": key} if key is not None else {"name": name, "url": url}
        if key is None and url in roles:
            ref["role"] = roles[url]
        out.append((anchor if target == page else None, ref))
        if len(out) > MAX_REFERENCES:
            break
    return out


def own_references(links: Sequence[Link], own_anchor: str) -> list[dict[str, Any]]:
    """The references of the entry at ``own_anchor`` among a doc's :func:`doc_links`: all
    but the link to itself, at most :data:`MAX_REFERENCES`."""
    return [ref for anchor, ref in links if anchor != own_anchor][:MAX_REFERENCES]


def doc_references(
    markdown: str,
    page_url: str,
    own_anchor: str,
    anchors: Mapping[str, str],
    roles: Mapping[str, str],
) -> list[dict[str, Any]]:
    """The references of the entry at ``own_anchor`` whose doc is ``markdown``."""
    return own_references(doc_links(markdown, page_url, anchors, roles), own_anchor)


def _text_before(markdown: str, end: int) -> str:
    """The text of the link whose ``]`` is at ``end`` (from the last ``[`` before it)."""
    start = markdown.rfind("[", max(0, end - _TEXT_BACK), end)
    return markdown[start + 1 : end] if start >= 0 else ""


def reference_name(anchor: str, text: str) -> str:
    """What a link names: its anchor's object (``module-json`` is ``json``), else its text
    without code marks, at most :data:`MAX_NAME` characters."""
    name = anchor.removeprefix("module-") if anchor.startswith("module-") else anchor
    if not name or " " in name:
        name = text.replace("`", "").strip() or anchor
    return name[:MAX_NAME]
