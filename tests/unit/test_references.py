"""The references of an item (issue 48, 4): the links of its doc read at extraction
(``common/extract/references.py``: URL, the anchor's name, the xref role Sphinx wrote,
the key of an entry of the same page), and which crawl and key each names
(``common/references.py``: by the crawls' site bases, then the keys the role may
name). Pure: fixture pages and crawls, no Redis."""

from __future__ import annotations

from typing import Any

import orjson

from invcrawl.common.bounds import SizeLimits
from invcrawl.common.extract import extract_page
from invcrawl.common.extract.references import MAX_NAME, MAX_REFERENCES, doc_references
from invcrawl.common.items import CrawlInfo, build_item
from invcrawl.common.pageitems import page_items
from invcrawl.common.references import (
    Site,
    candidate_keys,
    page_match,
    shown_reference,
    site_base,
    target_site,
)
from invcrawl.common.tasks import Task, TaskEntry

URL = "https://lib.test/en/1.0/api.html"
F = TaskEntry("lib.f", "py", "function", 1, "lib.f", "-")
G = TaskEntry("lib.g", "py", "function", 1, "lib.g", "-")
G_ALIAS = TaskEntry("lib.gg", "py", "function", 1, "lib.g", "-")  # a re-export at g's anchor


def sphinx_page(doc: str) -> bytes:
    return (
        '<html><body><div class="body" role="main"><section id="api"><h1>API</h1>'
        '<dl class="py function"><dt class="sig sig-object py" id="lib.f">'
        '<span class="sig-name descname">f</span>(<em>x</em>)</dt>'
        f"<dd><p>{doc}</p></dd></dl>"
        '<dl class="py function"><dt class="sig sig-object py" id="lib.g">'
        '<span class="sig-name descname">g</span>()</dt><dd><p>G.</p></dd></dl>'
        "</section></div></body></html>"
    ).encode()


def xref(href: str, role: str, text: str, external: bool = False) -> str:
    kind = "external" if external else "internal"
    domain, _, name = role.partition(":")
    return (
        f'<a class="reference {kind}" href="{href}"><code class="xref {domain} '
        f'{domain}-{name} docutils literal notranslate"><span class="pre">{text}</span>'
        "</code></a>"
    )


DOC = (
    "Turn <em>x</em> into a "
    + xref("https://docs.python.org/3/library/stdtypes.html#str", "py:class", "str", True)
    + ", see "
    + xref("#lib.g", "py:func", "g()")
    + " and "
    + xref("other.html#lib.Thing", "py:class", "Thing")
    + ", the "
    + xref("json.html#module-json", "py:mod", "json")
    + ' module, <a class="reference internal" href="#lib.f">itself</a>, '
    + '<a class="reference internal" href="other.html">a page</a>, '
    + xref("#lib.g", "py:func", "g()")
    + " again and "
    + xref("capi.html#c.PyObject_Call", "c:func", "PyObject_Call")
    + "."
)


def test_a_sphinx_doc_s_links_are_its_references_in_order_each_once() -> None:
    [f, g] = extract_page(sphinx_page(DOC), URL, [F, G])
    assert f["references"] == [
        {
            "name": "str",
            "url": "https://docs.python.org/3/library/stdtypes.html#str",
            "role": "py:class",
        },
        {"key": "py:function:lib.g"},  # an entry of the page: its key alone
        {"name": "lib.Thing", "url": "https://lib.test/en/1.0/other.html#lib.Thing",
         "role": "py:class"},
        {"name": "json", "url": "https://lib.test/en/1.0/json.html#module-json",
         "role": "py:mod"},
        {"name": "c.PyObject_Call", "url": "https://lib.test/en/1.0/capi.html#c.PyObject_Call",
         "role": "c:func"},
    ]  # fmt: skip
    assert "references" not in g  # no links: no field


def test_the_entries_at_one_anchor_share_the_first_one_s_key() -> None:
    [f, _, _] = extract_page(sphinx_page(xref("#lib.g", "py:func", "g()")), URL, [F, G, G_ALIAS])
    assert f["references"] == [{"key": "py:function:lib.g"}]


def test_an_item_without_links_is_byte_for_byte_what_it_was() -> None:
    """No link, no field: the item's JSON and checksum are those of before references."""
    task = Task(id="0" * 16, url=URL, entries=(F,))
    [content] = extract_page(sphinx_page("Does f, plainly."), URL, [F])
    item = build_item(CrawlInfo("c", "P", "1"), task, F, content)
    assert "references" not in item
    before = {k: v for k, v in content.items() if k != "references"}
    assert orjson.dumps(item) == orjson.dumps(build_item(CrawlInfo("c", "P", "1"), task, F, before))
    linked = extract_page(sphinx_page(DOC), URL, [F])[0]
    with_links = build_item(CrawlInfo("c", "P", "1"), task, F, linked)
    assert list(with_links).index("references") == list(with_links).index("doc_markdown") + 1


def test_references_are_bounded_in_count_and_length() -> None:
    many = " ".join(f"[`n{n}`](https://x.test/p.html#mod.n{n})" for n in range(500))
    refs = doc_references(many, URL, "lib.f", {}, {})
    assert len(refs) == MAX_REFERENCES
    assert refs[0] == {"name": "mod.n0", "url": "https://x.test/p.html#mod.n0"}
    long = doc_references("[`x`](https://x.test/p.html#" + "a" * 900 + ")", URL, "", {}, {})
    assert len(long[0]["name"]) == MAX_NAME
    assert doc_references("[x](https://x.test/p.html#" + "a" * 2000 + ")", URL, "", {}, {}) == []
    assert (
        doc_references("[mail](mailto:a@b.test) [page](https://x.test/p.html)", URL, "", {}, {})
        == []
    )


def test_a_mkdocs_autoref_without_xref_classes_keeps_its_anchor_s_name() -> None:
    md = "Returns a [`Session`](https://req.test/api/#requests.Session)."
    assert doc_references(md, URL, "", {}, {}) == [
        {"name": "requests.Session", "url": "https://req.test/api/#requests.Session"}
    ]


# -- which crawl, which key ---------------------------------------------------------------

OWN = Site("lib-1.0", "Lib", "1.0", site_base("https://lib.test/en/1.0/"))
PY = Site("py-3.11", "Python", "3.11", site_base("https://docs.python.org/3.11/objects.inv"))
REQS = Site("req-2", "Requests", "2.31", site_base("https://requests.test/en/latest/index.html"))
SHARED_A = Site("a-1", "A", "1", site_base("https://hosting.test/a/"))
SHARED_B = Site("b-1", "B", "1", site_base("https://hosting.test/b/"))


def test_site_bases_are_folders_without_their_scheme() -> None:
    assert PY.base == "//docs.python.org/3.11/"
    assert REQS.base == "//requests.test/en/latest/"
    assert OWN.base == "//lib.test/en/1.0/"
    assert site_base("/usr/share/doc/python3/html") == "///usr/share/doc/python3/html/"
    assert site_base("file:///srv/docs/objects.inv") == "///srv/docs/"


def test_a_link_lands_in_the_crawl_whose_site_holds_it() -> None:
    others = [PY, REQS, SHARED_A, SHARED_B]
    assert target_site("https://docs.python.org/3.11/library/os.html#os.sep", OWN, others) is PY
    assert target_site("http://requests.test/en/latest/api.html#x", OWN, others) is REQS
    assert target_site("https://lib.test/en/1.0/other.html#lib.Thing", OWN, others) is OWN
    assert target_site("https://hosting.test/b/x.html#a", OWN, others) is SHARED_B
    # another folder of a crawled host, another copy of a site: no site holds it
    assert target_site("https://docs.python.org/3/library/stdtypes.html#str", OWN, others) is None
    assert target_site("https://elsewhere.test/x.html#a", OWN, others) is None
    inner = Site("py-doc", "Py", "1", "//docs.python.org/3.11/c-api/")
    assert target_site("https://docs.python.org/3.11/c-api/x.html#a", OWN, [PY, inner]) is inner
    twin = Site("lib-twin", "Twin", "1", OWN.base)
    assert target_site("https://lib.test/en/1.0/x.html#a", OWN, [twin]) is OWN


def test_a_link_to_another_copy_of_a_site_matches_its_page_and_anchor() -> None:
    crawled = "file:///usr/share/doc/python3.11/html/library/stdtypes.html#str"
    assert page_match("https://docs.python.org/3/library/stdtypes.html#str", crawled) == 2
    debian = "file:///usr/share/doc/python3-doc/html/library/stdtypes.html#str"
    assert page_match(debian, crawled) == 3  # library/stdtypes.html and html/
    assert page_match("https://docs.python.org/3/library/functions.html#str", crawled) == 0
    assert page_match("https://docs.python.org/3/library/stdtypes.html#bytes", crawled) == 0
    assert page_match("https://x.test/a/#str", "https://y.test/b/#str") == 0  # no file name
    assert page_match("https://x.test/a/p.html#m%2Ex", "https://y.test/p.html#m.x") == 1


def ref(name: str, role: str = "", url: str = "https://x.test/p.html#a", **more: str) -> Any:
    return {"name": name, "url": url, **({"role": role} if role else {}), **more}


def test_the_keys_a_reference_may_name() -> None:
    assert candidate_keys(ref("lib.g", key="py:function:lib.g")) == ["py:function:lib.g"]
    assert candidate_keys(ref("str", "py:class")) == [
        "py:class:str", "py:exception:str", "py:type:str"
    ]  # fmt: skip
    assert candidate_keys(ref("x.f", "py:func"))[:2] == ["py:function:x.f", "py:method:x.f"]
    assert candidate_keys(ref("c.PyObject_Call", "c:func")) == [
        "c:function:PyObject_Call", "c:macro:PyObject_Call"
    ]  # fmt: skip
    assert candidate_keys(ref("tut-files", "std:ref")) == ["std:label:tut-files"]
    assert candidate_keys(ref("x", "js:func")) == ["js:func:x"]
    assert candidate_keys(ref("json", url="https://x.test/json.html#module-json")) == [
        "py:module:json"
    ]
    assert candidate_keys(ref("requests.Session"))[0] == "py:class:requests.Session"
    assert candidate_keys(ref("tut-files"))[-1] == "std:label:tut-files"  # a :ref: link
    assert candidate_keys(ref("")) == []


def test_a_reference_is_shown_by_key_with_the_other_crawl_that_holds_it() -> None:
    r = ref("str", "py:class", "https://docs.python.org/3/library/stdtypes.html#str")
    assert shown_reference(r, (PY, "py:class:str"), OWN) == {
        "key": "py:class:str",
        "name": "str",
        "project": "Python",
        "crawl_id": "py-3.11",
    }
    assert shown_reference(ref("lib.g"), (OWN, "py:function:lib.g"), OWN) == {
        "key": "py:function:lib.g",
        "name": "lib.g",
    }
    assert shown_reference(r, None, OWN) == {"name": "str", "url": r["url"]}


def test_the_consumer_s_items_keep_them_and_the_size_bound_cuts_them() -> None:
    """``page_items`` (the consumer's path, texts lazy) gives the item the references of
    its content; an item over ``item_bytes`` has them cut like its other lists."""
    links = " ".join(xref(f"other.html#lib.n{n}", "py:class", f"n{n}") for n in range(60))
    body = sphinx_page(links)
    task = Task(id="0" * 16, url=URL, entries=(F, G))
    contents = extract_page(body, URL, [F, G], lazy=True)
    crawl = CrawlInfo("c", "P", "1")
    [f, g] = page_items(crawl, task, contents, SizeLimits(), len(body))
    assert len(f["references"]) == 60 and f["references"][0] == {
        "name": "lib.n0",
        "url": "https://lib.test/en/1.0/other.html#lib.n0",
        "role": "py:class",
    }
    assert "references" not in g
    small = page_items(crawl, task, extract_page(body, URL, [F, G], lazy=True),
                       SizeLimits(item_bytes=4000), len(body))[0]  # fmt: skip
    assert 0 < len(small["references"]) < 60 and "references" in (small["reason"] or "")
