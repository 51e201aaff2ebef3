"""The targets of issue 35, counted on a crawl's items against the pages they came from,
by this module's own lxml reading of the pages (never the extractor's code): used by the
pydoctor e2e test and ``bench/sweep.py``.

Per site: ``accounting`` (items that are not exactly one per unique entry); ``anchor``
(``anchor_missing`` items whose page has the fragment: an element with that id or an
``a`` with that name); of the symbols whose header shows a call (``calls``),
``empty_signature`` and ``params`` (names differing from the header's; a parameter only
the docstring names, kind null as on Sphinx items, is counted apart as ``field_only``);
``heading`` (docs beginning with their own heading where the docstring does not);
``member_body`` (class or module docs holding a member's body); ``members`` and
``parent`` (a documented class's members, and those with another ``parent``); ``pages``
and ``page_doc`` (class and module pages, and those whose doc lacks the page's
docstring). Headers are read on pydoctor pages; other generators count accounting and
anchors.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

_TEXT = etree.XPath("string()")


def _norm(s: str | None) -> str:
    return " ".join((s or "").split())


def _cls(el: Any, name: str) -> bool:
    return name in (el.get("class") or "").split()


@dataclass
class PageFacts:
    """What a page shows, read here: ids and names, its title (h1) and docstring, and per
    ``<a name>`` the header of its member."""

    targets: set[str]
    title: str
    docstring: str
    headers: dict[str, str]
    bodies: dict[str, str]  # per <a name>: its member's body text

    @classmethod
    def read(cls, body: bytes) -> PageFacts:
        root = etree.fromstring(body, etree.HTMLParser(encoding="utf-8"))
        if root is None:
            return cls(set(), "", "", {}, {})
        targets = {el.get("id") for el in root.iter() if el.get("id")}
        headers: dict[str, str] = {}
        bodies: dict[str, str] = {}
        for a in root.iter("a"):
            name = a.get("name")
            if not name:
                continue
            targets.add(name)
            parent = a.getparent()
            header = (
                next((c for c in parent if c.tag == "div" and _cls(c, "functionHeader")), None)
                if parent is not None
                else None
            )
            if header is not None:
                headers[name] = _header_text(header)
                body = header.getnext()
                bodies[name] = _norm(_TEXT(body)) if body is not None else ""
        title = ""
        docstring = ""
        for div in root.iter("div"):
            if _cls(div, "page-header") and not title:
                h1 = div.find(".//h1")
                title = _norm(_TEXT(h1)) if h1 is not None else ""
            elif _cls(div, "moduleDocstring") and not docstring:
                docstring = _norm(_TEXT(div)).replace("Undocumented", "").strip()
        return cls(targets, title, docstring, headers, bodies)


def _alnum(text: str, n: int = 60) -> str:
    """The first ``n`` letters and digits of a text: field tables glued in the page's
    text and written as field lists in the item's compare alike."""
    return "".join(ch for ch in text if ch.isalnum())[:n]


def _header_text(header: Any) -> str:
    """The header as a reader sees it, without its permalink and source link."""
    return _norm(_TEXT(header).replace("\u00b6", "").replace("(source)", ""))


def header_call(header: str) -> list[str] | None:
    """The parameter names a header shows (``def f(a, b=1, *c)``: a, b, c), None when it
    shows no call (an attribute)."""
    text = header.split("def ", 1)[1] if "def " in header else ""
    at = text.find("(")
    if not text or at < 0:
        return None
    depth = 0
    inside = ""
    for i in range(at, len(text)):
        ch = text[i]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            inside = text[at + 1 : i]
            break
    names = []
    depth = 0
    piece = ""
    quote = ""
    escaped = False
    for ch in inside + ",":
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            name = piece.split(":", 1)[0].split("=", 1)[0].strip().lstrip("*")
            if name and name not in ("/",):
                names.append(name)
            piece = ""
            continue
        piece += ch
    return names


@dataclass
class Targets:
    counts: Counter[str]

    def line(self) -> str:
        c = self.counts
        return (
            f"items {c['items']} accounting {c['accounting']} anchor {c['anchor']} "
            f"calls {c['calls']} empty_signature {c['empty_signature']} params {c['params']} "
            f"(field_only {c['field_only']}) "
            f"heading {c['heading']} member_body {c['member_body']} "
            f"members {c['members']} parent {c['parent']} pages {c['pages']} "
            f"page_doc {c['page_doc']}"
        )


def count_targets(
    items: Iterable[dict[str, Any]], entries: int, page: Callable[[str], bytes | None]
) -> tuple[Targets, dict[str, list[str]]]:
    """The counts, and the keys of the items failing each check (for messages)."""
    items = list(items)
    counts: Counter[str] = Counter(items=len(items))
    bad: dict[str, list[str]] = defaultdict(list)
    keys = Counter(i["key"] for i in items)
    counts["accounting"] = abs(len(keys) - entries) + sum(n - 1 for n in keys.values())
    facts: dict[str, PageFacts | None] = {}

    def facts_of(url: str) -> PageFacts | None:
        if url not in facts:
            body = page(url)
            facts[url] = PageFacts.read(body) if body else None
        return facts[url]

    by_name = {i["name"]: i for i in items}
    for item in items:
        f = facts_of(item["page_url"]) if item.get("page_url") else None
        if f is None:
            continue
        anchor = item.get("anchor") or ""
        if item["status"] == "anchor_missing" and anchor and anchor in f.targets:
            counts["anchor"] += 1
            bad["anchor"].append(item["key"])
        if item["status"] != "ok":
            continue
        doc = _norm(item.get("doc"))
        if anchor:
            header = f.headers.get(anchor)
            if header is None:
                continue
            names = header_call(header)
            if names is not None:
                counts["calls"] += 1
                if not item.get("signature"):
                    counts["empty_signature"] += 1
                    bad["empty_signature"].append(item["key"])
                params = item.get("params") or []
                # a parameter only the docstring names (kind null) is not the header's
                got = [(p.get("name") or "").lstrip("*") for p in params if p.get("kind")]
                if got != names:
                    counts["params"] += 1
                    bad["params"].append(f"{item['key']}: {got} != {names}")
                if any(not p.get("kind") for p in params):
                    counts["field_only"] += 1
                    bad["field_only"].append(item["key"])
            short = item["name"].rsplit(".", 1)[-1]
            heading = header.split("def ", 1)[1] if "def " in header else ""
            own = (short + "(", short + ":", short + " =", *([heading[:40]] if heading else []))
            body = f.bodies.get(anchor, "")
            if doc and doc.startswith(own) and not body.startswith(own):
                counts["heading"] += 1
                bad["heading"].append(item["key"])
            if f.title:
                counts["members"] += 1
                if item.get("parent") != f.title:
                    counts["parent"] += 1
                    bad["parent"].append(f"{item['key']}: {item.get('parent')} != {f.title}")
            owner = by_name.get(f.title)
            if (
                owner is not None
                and len(doc) >= 30
                and doc[:80] in _norm(owner.get("doc"))
                and doc[:80] not in f.docstring
            ):
                counts["member_body"] += 1
                bad["member_body"].append(f"{owner['key']} holds {item['key']}")
        elif f.title:
            counts["pages"] += 1
            if f.docstring and _alnum(f.docstring) not in _alnum(doc, len(doc)):
                counts["page_doc"] += 1
                bad["page_doc"].append(item["key"])
            own_heading = (f.title, "class ")
            if doc.startswith(own_heading) and not f.docstring.startswith(own_heading):
                counts["heading"] += 1
                bad["heading"].append(item["key"])
    return Targets(counts), bad
