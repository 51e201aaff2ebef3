"""Issue 49's defect classes counted on held-out crawls: one JSON Lines export per site
(``invcrawl crawl -o`` or ``invcrawl export``), each item checked against its own fields
and, for an empty ``doc``, against its page (read by this script's own lxml code, never by
``invcrawl.common.extract``). The judgement of issue 49: each count at most 0.5% of a
site's items.

    python -m bench.heldout_counts out/*.jsonl            # one line per site
    python -m bench.heldout_counts out/x.jsonl --examples 5  # and the first keys of each class
    python -m bench.heldout_counts out/*.jsonl --json counts.json

Classes (an item counts once per class):

* ``not_ok``: status not ``ok`` (``skipped`` generated pages apart: genindex, search);
* ``empty_doc``: an API object (not ``std:``; a module included) with an empty ``doc``
  where its page shows text for it: the ``dd`` of its ``dt``, or, when that ``dd`` is
  empty, the prose after its description (Django's unindented directive content), or the
  prose of the section its target labels (a module's ``span.target``);
* ``param_chrome``: a parameter, return or raise description starting with a permalink
  sign or a separator (``¶``, ``#``, ``–``, link icons);
* ``annotation_summary``: the summary (the doc's first sentence, as search shows it) is a
  Sphinx annotation ("Return value: New reference.", "Part of the Stable ABI");
* ``number_summary``: the summary starts with a section number ("6.11.");
* ``version_summary``: the summary is a version note ("New in version 3.2.") and prose
  follows it (a description that is nothing but a version note reads as the page does);
* ``kind_null``: a parameter with ``kind`` null on an item whose signature shows a call;
* ``table_chrome``: the plain ``doc`` holds a table's column headings ("Name Type
  Description Default", "PARAMETER DESCRIPTION");
* ``link_in_code``: a Markdown link written inside a code span of ``doc_markdown``;
* ``markdown``: ``doc_markdown`` rendered by CommonMark shows a backtick or ``*`` (outside
  code) more often than ``doc`` has it: a marker that did not render;
* ``parent``: a ``parent`` that is not a prefix of the name (inherited members and aliases
  apart: ``inherited_from``, ``alias_of``);
* ``permalink_text``: a permalink sign left in ``doc`` or a signature;
* ``fields`` (Sphinx): a name the entry's own Parameters field lists (its ``strong``) in
  neither ``params`` nor ``doc_only_params``, or fewer ``raises`` than its Raises field
  has entries.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lxml import html as lxml_html
from markdown_it import MarkdownIt

from invcrawl.common.search.summary import first_sentence

CLASSES = (
    "not_ok", "empty_doc", "param_chrome", "annotation_summary", "number_summary",
    "version_summary", "kind_null", "table_chrome", "link_in_code", "markdown", "parent",
    "permalink_text", "fields",
)  # fmt: skip
LIMIT = 0.5  # percent of a site's items (issue 49)

CHROME_START = ("¶", "#", "–", "—", "\uf0c1", "\U0001f517", ":")
ANNOTATION = re.compile(r"(Return value: |Part of the (Stable ABI|Limited API))")
NUMBER = re.compile(r"\d+(\.\d+)*\.(\s|$)")
VERSION = re.compile(
    r"(New in version|Changed in version|Deprecated since version|Added in version"
    r"|Version added|Version changed|Deprecated in version)\b"
)
TABLE = re.compile(
    r"\bName Type Description( Default)?\b|\bPARAMETER DESCRIPTION\b|\bType Description\b"
    r"|\bRETURNS DESCRIPTION\b|\bRAISES DESCRIPTION\b"
)
CODE_LINK = re.compile(r"\[[^\]]+\]\([^)\s]+\)")  # inside a rendered code span: literal
COMMONMARK = MarkdownIt("commonmark")
# A crawl of a local directory links file:// URLs, which markdown-it refuses to render
# (its safety default): here every link is one, as any CommonMark reader shows it.
COMMONMARK.validateLink = lambda url: True  # type: ignore[method-assign]
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
PERMALINK = ("¶", "\uf0c1", "\U0001f517")
SEP = {"py": ".", "c": ".", "js": ".", "cpp": "::"}


class Pages:
    """Local pages (file:// URLs, as a crawl of a directory gives), parsed once."""

    def __init__(self) -> None:
        self.cache: dict[str, dict[str, Any]] = {}

    def ids(self, url: str) -> dict[str, Any]:
        page = url.split("#", 1)[0]
        if page not in self.cache:
            parts = urlsplit(page)
            found: dict[str, Any] = {}
            path = Path(unquote(parts.path))
            if parts.scheme == "file" and path.is_file():
                root = lxml_html.fromstring(path.read_bytes())
                for el in root.iter():
                    if isinstance(el.tag, str):
                        for key in ("id", "name"):
                            if el.get(key):
                                found.setdefault(el.get(key), el)
            self.cache[page] = found
        return self.cache[page]


def words(el: Any) -> str:
    return " ".join(el.text_content().split())


def _object_dl(el: Any) -> bool:
    return el.tag == "dl" and any(c.tag == "dt" and c.get("id") for c in el)


def _prose_after(dl: Any) -> str:
    """The text after an object description, up to the next one, heading or section."""
    out = [dl.tail or ""]
    sib = dl.getnext()
    while sib is not None and _object_dl(sib):  # empty descriptions sharing the prose
        if any(c.tag == "dd" and words(c) for c in sib):
            return ""
        out.append(sib.tail or "")
        sib = sib.getnext()
    while sib is not None:
        if sib.tag in ("h1", "h2", "h3", "h4", "h5", "h6", "section") or _object_dl(sib):
            break
        if sib.tag == "div" and "section" in (sib.get("class") or "").split():
            break
        if sib.get("id"):
            break
        out.append(words(sib))
        out.append(sib.tail or "")
        sib = sib.getnext()
    return " ".join(" ".join(out).split())


def page_text_for(item: dict[str, Any], pages: Pages) -> str:
    """What the page shows as the entry's description (this script's reading)."""
    el = pages.ids(item["url"]).get(item.get("anchor") or "")
    if el is None:
        return ""
    dt = el if el.tag == "dt" else next((a for a in el.iterancestors("dt")), None)
    if dt is not None:
        nxt = dt.getnext()
        while nxt is not None and nxt.tag == "dt":
            nxt = nxt.getnext()
        if nxt is not None and nxt.tag == "dd" and own_words(nxt):
            return own_words(nxt)
        dl = dt.getparent()
        return _prose_after(dl) if dl is not None else ""
    if el.tag == "span" and not words(el):
        after = el.getnext()
        if after is not None and _section(after):  # a target labelling the next section
            return _intro(list(after))
        following = []
        sib = el.getnext()
        while sib is not None:
            following.append(sib)
            sib = sib.getnext()
        return _intro(following)
    if _section(el):
        return _intro(list(el))
    return ""


def _section(el: Any) -> bool:
    return el.tag == "section" or (el.tag == "div" and "section" in (el.get("class") or "").split())


def own_words(dd: Any) -> str:
    """A dd's text without the object descriptions nested in it (items of their own)."""
    parts = [dd.text or ""]
    for child in dd:
        if not _object_dl(child):
            parts.append(child.text_content())
        parts.append(child.tail or "")
    return " ".join(" ".join(parts).split())


def _intro(blocks: list[Any]) -> str:
    """The paragraphs of ``blocks`` before the first object description or subsection."""
    out = []
    for el in blocks:
        if not isinstance(el.tag, str) or el.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            continue
        if _section(el) or _object_dl(el):
            break
        if el.tag == "p":
            out.append(words(el))
    return " ".join(p for p in out if p)


def _link_in_code(markdown: str) -> bool:
    """A code span of the rendered Markdown that shows a link's Markdown as its text."""
    for block in COMMONMARK.parse(markdown):
        for token in block.children or []:
            if token.type == "code_inline" and CODE_LINK.search(token.content):
                return True
    return False


def _own_field_lists(dd: Any) -> list[Any]:
    return [c for c in dd if c.tag == "dl" and "field-list" in (c.get("class") or "").split()]


def page_fields(item: dict[str, Any], pages: Pages) -> dict[str, Any] | None:
    """The Parameters names and the Raises count of the entry's own Sphinx field list."""
    el = pages.ids(item["url"]).get(item.get("anchor") or "")
    if el is None or el.tag != "dt":
        return None
    nxt = el.getnext()
    while nxt is not None and nxt.tag == "dt":
        nxt = nxt.getnext()
    if nxt is None or nxt.tag != "dd":
        return None
    names: set[str] = set()
    raises = 0
    for fl in _own_field_lists(nxt):
        for label, body in zip(fl.findall("dt"), fl.findall("dd"), strict=False):
            heading = words(label).rstrip(":").strip().lower()
            entries = body.findall("ul/li") or [body]
            if heading in ("parameters", "parameter", "arguments", "keyword arguments"):
                for entry in entries:
                    strong = entry.find(".//strong")
                    if strong is not None and words(strong).lstrip("*").isidentifier():
                        names.add(words(strong).lstrip("*"))
            elif heading in ("raises", "raise", "exceptions"):
                raises += len(entries)
    return {"names": names, "raises": raises}


def field_mismatch(item: dict[str, Any], pages: Pages) -> bool:
    """A documented parameter name in neither ``params`` nor ``doc_only_params``, or
    fewer ``raises`` than the Raises field lists."""
    found = page_fields(item, pages)
    if found is None:
        return False
    have = {
        (p.get("name") or "").lstrip("*")
        for key in ("params", "doc_only_params")
        for p in item.get(key) or []
    }
    return bool(found["names"] - have) or len(item.get("raises") or []) < found["raises"]


def _stray_markers(markdown: str, doc: str) -> bool:
    """The rendered Markdown (outside code) shows a ``*``, ``_`` pair or backtick more
    often than the plain text has them: a marker that did not render."""
    html = COMMONMARK.render(markdown)
    if "<" not in html:
        return False
    root = lxml_html.fromstring("<div>" + CONTROL.sub("", html) + "</div>")
    for code in root.xpath("//code|//pre"):
        code.drop_tree()
    shown = root.text_content()
    return any(shown.count(m) > doc.count(m) for m in ("`", "**", "*"))


def classes_of(item: dict[str, Any], pages: Pages) -> list[str]:
    found: list[str] = []
    status = item.get("status")
    if status != "ok":
        if not (status == "skipped" and "generated page" in (item.get("reason") or "")):
            found.append("not_ok")
        return found
    domain = item.get("domain") or ""
    doc = item.get("doc") or ""
    md = item.get("doc_markdown") or ""
    api = domain != "std" and not (item.get("role") or "").endswith("Param")
    if api and not doc.strip() and page_text_for(item, pages):
        found.append("empty_doc")
    descs = [
        (e.get("description") or "").lstrip()
        for key in ("params", "returns", "raises", "doc_only_params")
        for e in item.get(key) or []
    ]
    if any(d.startswith(CHROME_START) for d in descs):
        found.append("param_chrome")
    summary = first_sentence(doc)
    if ANNOTATION.match(summary):
        found.append("annotation_summary")
    if NUMBER.match(summary):
        found.append("number_summary")
    if VERSION.match(summary) and len(" ".join(doc.split())) > len(summary):
        found.append("version_summary")  # (a description that is only a note is its text)
    signature = item.get("signature") or ""
    if "(" in signature and any(p.get("kind") is None for p in item.get("params") or []):
        found.append("kind_null")
    if TABLE.search(doc):
        found.append("table_chrome")
    if "](" in md and _link_in_code(md):
        found.append("link_in_code")
    if md and _stray_markers(md, doc):
        found.append("markdown")
    parent, name, sep = item.get("parent"), item.get("name") or "", SEP.get(domain)
    if (
        parent
        and sep
        and not item.get("inherited_from")
        and not item.get("alias_of")
        and not name.startswith(parent + sep)
    ):
        found.append("parent")
    if any(p in doc or p in signature for p in PERMALINK):
        found.append("permalink_text")
    if item.get("generator") == "sphinx" and api and field_mismatch(item, pages):
        found.append("fields")
    return found


def count(path: Path, examples: int) -> tuple[str, int, Counter[str], dict[str, list[str]]]:
    pages = Pages()
    counts: Counter[str] = Counter()
    seen: dict[str, list[str]] = defaultdict(list)
    site, total = path.stem, 0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item.get("deleted"):
                continue
            site = item.get("crawl") or site
            total += 1
            for name in classes_of(item, pages):
                counts[name] += 1
                if len(seen[name]) < examples:
                    seen[name].append(item["key"])
    return site, total, counts, seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exports", nargs="+", type=Path)
    parser.add_argument("--examples", type=int, default=0, help="keys shown per class")
    parser.add_argument("--json", type=Path, help="write the counts here too")
    args = parser.parse_args(argv)
    rows = []
    width = max(len(c) for c in CLASSES)
    for path in args.exports:
        site, total, counts, seen = count(path, args.examples)
        rows.append({"site": site, "items": total, "counts": dict(counts)})
        print(f"{site}: {total} items")
        for name in CLASSES:
            n = counts.get(name, 0)
            pct = 100 * n / total if total else 0.0
            flag = "  OVER" if pct > LIMIT else ""
            print(f"  {name:<{width}} {n:>6} {pct:6.2f}%{flag}")
            for key in seen.get(name, []):
                print(f"      {key}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
