"""The issue-35 checks of an mkdocstrings site's items against its HTML, by this module's
own lxml code (never the extractor's): usable on a fixture site and on a real site nobody
here built (``bench/mkdocs_sites.py``).

Per item whose page was read:

* ``anchor``: ``anchor_missing`` although the page has the fragment (an element with that
  id, or an ``a`` with that name);
* of the documented objects whose header shows a call signature (``name(...)`` in the
  heading's code or the signature written apart; a legacy class's bases excepted):
  ``signature`` (the item's is empty) and ``params`` (the item's signature parameter names
  differ from the header's);
* ``heading``: the doc begins with the object's own heading text;
* ``member``: a class's or module's doc holds the text of a nested member's body that the
  container's own docstring does not have;
* ``parent``: a nested member whose ``parent`` is not the enclosing documented object.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

CHECKS = ("anchor", "signature", "params", "heading", "member", "parent")


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _classes(el: Any) -> list[str]:
    return (el.get("class") or "").split()


def _text_without(el: Any, drop: Callable[[Any], bool]) -> str:
    """The text of ``el`` without the subtrees ``drop`` names (tails kept)."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and not drop(child):
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return _norm("".join(parts))


def _noise(el: Any) -> bool:
    cls = _classes(el)
    return (
        "headerlink" in cls
        or "doc-labels" in cls
        or "doc-properties" in cls
        or "doc-symbol" in cls
        or el.tag in ("script", "style")
    )


@dataclass
class PageInfo:
    root: Any
    ids: dict[str, Any]
    names: dict[str, Any]


def load_page(body: bytes) -> PageInfo:
    parser = etree.HTMLParser(encoding="utf-8")
    root = etree.fromstring(body, parser)
    ids: dict[str, Any] = {}
    names: dict[str, Any] = {}
    if root is not None:
        for el in root.iter():
            if not isinstance(el.tag, str):
                continue
            if el.get("id") is not None:
                ids.setdefault(el.get("id"), el)
            if el.tag == "a" and el.get("name") is not None:
                names.setdefault(el.get("name"), el)
    return PageInfo(root, ids, names)


def _doc_object_of(el: Any) -> Any | None:
    """The div.doc-object whose heading (or leading ``<a id>``) ``el`` is."""
    parent = el.getparent()
    if parent is not None and "doc-object" in _classes(parent):
        return parent
    return None


def _ident(obj: Any) -> str | None:
    for child in obj:
        if not isinstance(child.tag, str):
            continue
        if "doc-contents" in _classes(child):
            return None
        if child.get("id"):
            return str(child.get("id"))
    return None


def _heading(obj: Any) -> Any | None:
    for child in obj:
        if isinstance(child.tag, str) and re.fullmatch(r"h[1-6]", child.tag):
            return child
        if isinstance(child.tag, str) and "doc-contents" in _classes(child):
            return None
    return None


def _separate_signature(obj: Any) -> Any | None:
    for child in obj:
        if not isinstance(child.tag, str):
            continue
        if "doc-contents" in _classes(child):
            return None
        if "doc-signature" in _classes(child):
            return child
        for code in child.iter("code"):
            if "doc-signature" in _classes(code):
                return child
    return None


def _contents(obj: Any) -> Any | None:
    for child in obj:
        if isinstance(child.tag, str) and "doc-contents" in _classes(child):
            return child
    return None


_CALL = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(\[[^(]*\])?\s*\((.*)\)", re.S)


def header_params(header: str) -> list[str] | None:
    """The parameter names a header shows, None when it shows no call."""
    match = _CALL.match(header)
    if match is None:
        return None
    inner = match.group(3)
    depth = 0
    pieces: list[str] = []
    current = ""
    quote = ""
    for ch in inner:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break  # the call's own ")" (a return annotation may follow)
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(current)
            current = ""
            continue
        current += ch
    pieces.append(current)
    names = []
    for raw in pieces:
        piece = raw.strip()
        if piece in ("", "/", "*"):
            continue
        found = re.match(r"\*{0,2}[A-Za-z_]\w*", piece)
        if found:
            names.append(found.group(0))
    return names


@dataclass
class SiteCheck:
    items: int = 0
    fails: Counter[str] = field(default_factory=Counter)
    counted: Counter[str] = field(default_factory=Counter)  # the denominator of each check
    examples: dict[str, list[str]] = field(default_factory=dict)

    def fail(self, check: str, key: str, why: str) -> None:
        self.fails[check] += 1
        self.examples.setdefault(check, [])
        if len(self.examples[check]) < 5:
            self.examples[check].append(f"{key}: {why}")

    def share(self, check: str) -> float:
        total = self.counted[check]
        return self.fails[check] / total if total else 0.0

    def row(self) -> str:
        cells = [f"{self.fails[c]}/{self.counted[c]}" for c in CHECKS]
        return f"{self.items:6d} " + " ".join(f"{c:>11}" for c in cells)


def check_items(
    items: Iterable[dict[str, Any]], page_body: Callable[[str], bytes | None]
) -> SiteCheck:
    """Every check over ``items`` (exported items); ``page_body(page_url)`` gives a page's
    bytes (None when it cannot be read)."""
    out = SiteCheck()
    pages: dict[str, PageInfo | None] = {}
    for item in items:
        if item.get("status") not in ("ok", "anchor_missing"):
            continue
        out.items += 1
        url = item["page_url"]
        if url not in pages:
            body = page_body(url)
            pages[url] = load_page(body) if body else None
        page = pages[url]
        if page is None or page.root is None:
            continue
        anchor = item.get("anchor") or ""
        key = item["key"]
        target = page.ids.get(anchor) if anchor else None
        if target is None and anchor:
            target = page.names.get(anchor)
        if anchor:
            out.counted["anchor"] += 1
            if item["status"] == "anchor_missing" and target is not None:
                out.fail("anchor", key, "the page has the fragment")
        if target is None or item["status"] != "ok":
            continue
        obj = _doc_object_of(target)
        if obj is None:
            continue
        _check_object(out, item, obj)
    return out


def _check_object(out: SiteCheck, item: dict[str, Any], obj: Any) -> None:
    key = item["key"]
    heading = _heading(obj)
    separate = _separate_signature(obj)
    heading_text = _text_without(heading, _noise) if heading is not None else ""
    header = _text_without(separate, _noise) if separate is not None else heading_text
    kinds = _classes(obj)
    legacy_bases = (
        "doc-class" in kinds
        and separate is None
        and heading is not None
        and not any("highlight" in _classes(c) for c in heading.iter("code"))
    )
    shown = None if "doc-module" in kinds or legacy_bases else header_params(header)
    if shown is not None:
        out.counted["signature"] += 1
        out.counted["params"] += 1
        if not _norm(item.get("signature")):
            out.fail("signature", key, f"empty; the header shows {header[:80]!r}")
        got = [p["name"] for p in item.get("params") or [] if p.get("kind") is not None]
        if got != shown:
            out.fail("params", key, f"{got} vs the header's {shown}")
    doc = _norm(item.get("doc"))
    if heading_text:
        # (a bare name cannot tell: "Widget objects hold..." is a docstring's own start)
        own = [t for t in (heading_text, header) if t and not re.fullmatch(r"[\w.]+", t)]
        out.counted["heading"] += 1
        if doc and any(doc.startswith(t) for t in own):
            out.fail("heading", key, f"doc begins {doc[:60]!r}")
    if "doc-class" in kinds or "doc-module" in kinds:
        _check_members(out, item, obj, doc)
    parent_obj = next((a for a in obj.iterancestors() if "doc-object" in _classes(a)), None)
    while parent_obj is not None and _ident(parent_obj) is None:
        parent_obj = next(
            (a for a in parent_obj.iterancestors() if "doc-object" in _classes(a)), None
        )
    if parent_obj is not None:
        out.counted["parent"] += 1
        if item.get("parent") != _ident(parent_obj):
            out.fail("parent", key, f"{item.get('parent')!r} vs {_ident(parent_obj)!r}")


def _check_members(out: SiteCheck, item: dict[str, Any], obj: Any, doc: str) -> None:
    contents = _contents(obj)
    if contents is None:
        return
    out.counted["member"] += 1
    own = _text_without(
        contents, lambda el: "doc-children" in _classes(el) or "doc-object" in _classes(el)
    )
    for member in contents.iter("div"):
        if "doc-object" not in _classes(member):
            continue
        body = _contents(member)
        if body is None:
            continue
        first = next((p for p in body.iter("p")), None)
        text = _norm("".join(first.itertext())) if first is not None else ""
        if len(text) >= 20 and text in doc and text not in own:
            out.fail("member", item["key"], f"holds {text[:60]!r}")
            return
