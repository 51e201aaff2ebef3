"""Sphinx records without holes or chrome (issue 49, items 8 and 9), on the pattern site
built from tests/sites/sphinx_patterns_src by Sphinx 5.3 (which built Debian's Django 3.2
and SQLAlchemy 1.4 docs) and 8.2: a directive whose content follows it unindented gets
that prose (up to the next object description or heading), sphinx-paramlinks' permalinks
leave the parameter descriptions, CPython's C API annotations become labels, section
numbers and a module's leading version note leave the text. The expected values are read
from the sources, never from the extractor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sites.build import BuildError, PipUnreachable
from sites.sphinx_patterns import build_all

from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.tasks import TaskEntry

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture(scope="session")
def sites() -> dict[str, Path]:
    try:
        return build_all(log=lambda _m: None)
    except PipUnreachable as exc:
        pytest.skip(f"the pattern sites cannot be built: {str(exc).splitlines()[0]}")
    except BuildError as exc:
        pytest.fail(f"the pattern sites failed to build:\n{exc}", pytrace=False)


def _items(html: Path) -> dict[str, dict[str, Any]]:
    """Every entry of the site's inventory, extracted from its page."""
    inv = parse_inventory((html / "objects.inv").read_bytes())
    pages: dict[str, list[TaskEntry]] = {}
    for entry in inv.entries:
        page, _, anchor = entry.uri.partition("#")
        pages.setdefault(page, []).append(TaskEntry.on_page(entry, anchor))
    out = {}
    for page, targets in pages.items():
        contents = extract_page((html / page).read_bytes(), f"https://p.test/{page}", targets)
        for t, content in zip(targets, contents, strict=True):
            out[f"{t.domain}:{t.role}:{t.name}"] = content
    return out


SITES = ("sphpat-5", "sphpat-8")


@pytest.mark.parametrize("site", SITES)
def test_a_directive_without_content_gets_the_prose_written_after_it(
    sites: dict[str, Path], site: str
) -> None:
    items = _items(sites[site])
    q = "py:method:shop.query.QuerySet."
    flt = items[q + "filter"]
    assert flt["status"] == "ok"
    assert flt["doc"] == (
        "Returns a new QuerySet containing objects that match the given lookup parameters. "
        "Multiple parameters are joined via AND in the underlying SQL statement. "
        "New in version 2.0: Lookups may be expressions."
    ).replace("New in version", "Added in version" if site == "sphpat-8" else "New in version")
    assert flt["doc_markdown"].startswith("Returns a new `QuerySet` containing objects")
    assert [(v["kind"], v["version"]) for v in flt["versions"]] == [("added", "2.0")]
    # Two directives in a row, then the prose: both are described by it.
    shared = "You can also increment or decrement a key that already exists using the"
    assert items[q + "incr"]["doc"].startswith(shared)
    assert items[q + "decr"]["doc"] == items[q + "incr"]["doc"]
    # A method with a body of its own keeps it, never the paragraph after it.
    assert items[q + "count"]["doc"] == "Returns an integer: the number of objects."
    # Up to the next object description; the attribute keeps its own body.
    exclude = items[q + "exclude"]
    assert exclude["doc"] == "Returns a new QuerySet containing objects that do not match."
    assert items["py:attribute:shop.query.QuerySet.ordered"]["doc"] == (
        "True if the QuerySet is ordered."
    )
    # Nothing between it and the next heading: still empty, never the next section.
    assert items[q + "none"]["doc"] == ""
    assert items[q + "all"]["doc"] == "Returns a copy of the current QuerySet."


@pytest.mark.parametrize("site", SITES)
def test_parameter_permalinks_leave_the_descriptions(sites: dict[str, Path], site: str) -> None:
    items = _items(sites[site])
    engine = items["py:function:shopengine.create_engine"]
    assert {p["name"]: p["description"] for p in engine["params"]} == {
        "url": "the database URL.",
        "echo": "if True, the engine logs all statements.",
        "pool_size": "the number of connections to keep open.",
    }
    assert "¶" not in engine["doc"] and "¶" not in engine["doc_markdown"]
    connect = items["py:method:shopengine.Engine.connect"]
    assert [p["description"] for p in connect["params"] if p["name"] == "timeout"] == [
        "seconds to wait, or None to wait forever."
    ]


@pytest.mark.parametrize("site", SITES)
def test_c_api_annotations_are_labels_and_the_summary_is_the_description(
    sites: dict[str, Path], site: str
) -> None:
    items = _items(sites[site])
    new = items["c:function:PyList_New"]
    assert new["labels"] == ["refcount:new", "stable-abi"]
    assert first_sentence(new["doc"]) == (
        "Return a new list of length len on success, or NULL on failure."
    )
    get = items["c:function:PyList_GetItem"]
    assert get["labels"] == ["refcount:borrowed", "stable-abi:3.7"]
    assert get["doc"].startswith("Return the object at position index in the list")
    assert items["c:function:PyErr_NoMemory"]["labels"] == ["refcount:null", "stable-abi"]
    plain = items["c:function:PyList_Check"]
    assert plain["labels"] == [] and plain["doc"] == "Return true if p is a list object."
    for item in items.values():
        assert "Return value:" not in item["doc"] and "Part of the Stable" not in item["doc"]


@pytest.mark.parametrize("site", SITES)
def test_section_numbers_and_version_notes_are_not_summaries(
    sites: dict[str, Path], site: str
) -> None:
    items = _items(sites[site])
    summaries = {k: first_sentence(i["doc"]) for k, i in items.items()}
    assert not [s for s in summaries.values() if s[:1].isdigit()], summaries
    section = items["std:label:filter-section"]
    assert section["title"] == "1.1. filter()"  # the title keeps its number, as shown
    assert section["doc"].startswith("filter() QuerySet.filter(*args, **kwargs) Returns a new")
    argparse = items["py:module:argparse"]
    assert argparse["doc"].startswith("The argparse module makes it easy")
    assert [(v["kind"], v["version"]) for v in argparse["versions"]] == [("added", "3.2")]
