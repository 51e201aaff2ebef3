"""The typed content codec (common/content.py): every entry the extractors write decodes
and encodes back byte for byte, over the items of real sites (the Debian-packaged Sphinx
docs read by the extractor, and crawls written before if this machine holds some), and
what older or hand-made items hold reads as the readers read it before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from invcrawl.common.apidiff import Change, ChangeKind, diff_items
from invcrawl.common.apidiff.changes import ParamRemoved, RaisesChanged
from invcrawl.common.content import (
    Content,
    Param,
    Raised,
    Returned,
    VersionNote,
    params_of,
    returns_of,
)
from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from support.pattern_sites import BASE

FIELDS = ("params", "doc_only_params", "returns", "raises", "versions")
REAL_SITES = [Path(f"/usr/share/doc/{p}/html") for p in ("python-attr-doc", "python-click-doc")]
# Crawls a search benchmark wrote on this machine (JSON Lines of items), when there are some.
WRITTEN = sorted(Path.home().glob(".cache/invcrawl/search-bench/out/*.jsonl"))


def _site_items(html: Path) -> list[dict[str, Any]]:
    """The extracted content of every entry of a built site whose page it has."""
    plan = plan_crawl(parse_inventory((html / "objects.inv").read_bytes()), BASE + "objects.inv")
    out: list[dict[str, Any]] = []
    for page in plan.pages:
        path = html / page.page_url.removeprefix(BASE)
        if path.is_file():
            out += extract_page(path.read_bytes(), page.page_url, page.targets)
    return out


def _stored(item: dict[str, Any]) -> bytes:
    return orjson.dumps({f: item[f] for f in FIELDS if f in item})


def _round_trip(item: dict[str, Any]) -> bytes:
    return orjson.dumps(Content.of(item).to_json())


def _check(items: list[dict[str, Any]]) -> int:
    entries = 0
    for item in items:
        if "params" not in item:  # a tombstone, or a page read as a whole
            continue
        assert _round_trip(item) == _stored(item), item["key"]
        entries += sum(len(item.get(f) or []) for f in FIELDS)
    return entries


@pytest.mark.parametrize("html", REAL_SITES, ids=lambda p: p.parent.name)
def test_real_sites_items_round_trip_byte_for_byte(html: Path) -> None:
    if not (html / "objects.inv").exists():
        pytest.skip(f"{html} is not installed")
    items = _site_items(html)
    assert _check(items) > 100  # the sites document parameters, returns, version notes


@pytest.mark.skipif(not WRITTEN, reason="no crawl written before on this machine")
def test_crawls_written_before_read_the_same() -> None:
    entries = 0
    for path in WRITTEN:
        with path.open("rb") as lines:
            items = [orjson.loads(line) for line in lines]
        entries += _check([i for i in items if isinstance(i, dict)])
    assert entries > 0


def test_every_kind_of_entry_and_what_older_items_hold() -> None:
    item = {
        "params": [{"name": "x", "kind": "keyword-only", "type": "int", "default": "1",
                    "description": None, "from_a_newer_version": True}, "not an entry"],
        "doc_only_params": [{"name": "colour", "description": "Its colour."}],
        "returns": {"name": None, "type": "int", "description": None},  # before a list
        "raises": [{"type": "KeyError", "description": "when missing"}],
        "versions": [{"kind": "added", "version": "1.0"}],
    }  # fmt: skip
    content = Content.of(item)
    assert content.params == (Param("x", "keyword-only", "int", "1", None),)
    assert content.returns == (Returned(None, "int", None),)
    assert content.raises == (Raised("KeyError", "when missing"),)
    assert content.versions == (VersionNote("added", "1.0", None),)
    assert content.doc_only_params[0].name == "colour"
    assert params_of({}) == () and returns_of({"returns": None}) == ()
    assert "doc_only_params" not in Content.of({"params": []}).to_json()


def test_change_records_write_the_json_of_before_and_read_it_back() -> None:
    """Each change kind's JSON (``invcrawl diff --json``, ``history``, the change feed) is
    byte for byte the dict the diff made before its records were typed, and reads back as
    the same record."""
    written = [
        {"kind": "param_added", "param": "c", "required": True, "breaking": True},
        {"kind": "param_removed", "param": "gone", "breaking": True},
        {"kind": "param_renamed", "old": "src", "new": "source", "breaking": True},
        {"kind": "param_default_changed", "param": "b", "old": "1", "new": None,
         "breaking": True},
        {"kind": "param_type_changed", "param": "a", "old": "int", "new": "str",
         "breaking": False},
        {"kind": "param_kind_changed", "param": "c", "old": "positional-or-keyword",
         "new": "keyword-only", "breaking": True},
        {"kind": "return_changed", "old": "int", "new": "str", "breaking": False},
        {"kind": "raises_added", "exception": "TypeError", "breaking": False},
        {"kind": "raises_removed", "exception": "KeyError", "breaking": False},
        {"kind": "deprecated", "version": "1.4", "breaking": False},
        {"kind": "label_added", "label": "async", "breaking": True},
        {"kind": "label_removed", "label": "property", "breaking": True},
        {"kind": "signature_changed", "old": "f(a, b)", "new": "f(b, a)", "breaking": True},
        {"kind": "status_changed", "old": "ok", "new": "failed", "breaking": False},
        {"kind": "doc_changed", "breaking": False},
    ]  # fmt: skip
    assert {c["kind"] for c in written} == set(ChangeKind)
    for d in written:
        record = Change.from_json(d)
        assert orjson.dumps(record.to_json()) == orjson.dumps(d)
        assert Change.from_json(record.to_json()) == record
    newer = Change.from_json({"kind": "from_a_newer_version", "breaking": True})
    assert newer.to_json() == {"kind": "from_a_newer_version", "breaking": True}


def test_the_diff_makes_typed_records_with_the_json_of_before() -> None:
    old = {"key": "py:function:m.f", "status": "ok", "signature": "f(a)", "doc": "",
           "params": [{"name": "a", "kind": "positional-or-keyword", "type": None,
                       "default": None, "description": None}],
           "returns": [], "raises": [], "versions": []}  # fmt: skip
    new = dict(old, params=[], signature="f()", raises=[{"type": "E", "description": None}])
    found = diff_items(old, new)  # type: ignore[arg-type]
    assert found is not None
    assert found.changes == [
        ParamRemoved(ChangeKind.PARAM_REMOVED, True, "a"),
        RaisesChanged(ChangeKind.RAISES_ADDED, False, "E"),
    ]
    assert orjson.dumps(found.to_json()["changes"]) == (
        b'[{"kind":"param_removed","param":"a","breaking":true},'
        b'{"kind":"raises_added","exception":"E","breaking":false}]'
    )


def test_show_reads_typed_returns_and_raises_of_any_age() -> None:
    """``invcrawl show`` reads the codec's values: a ``returns`` stored as one object (before
    it was a list) prints its type, not its keys, as it did when it guessed per entry."""
    from invcrawl.symbol_cmds import _item_text

    item = {"name": "f", "key": "py:function:f",
            "params": [{"name": "x", "kind": "keyword-only", "type": "int", "default": "1",
                        "description": None}],
            "returns": {"name": None, "type": "int", "description": None},
            "raises": [{"type": None, "description": "when empty"}]}  # fmt: skip
    lines = _item_text(item, "P 1").splitlines()
    assert lines[1:] == [
        "  param x: int = 1 [keyword-only]",
        "  returns int",
        "  raises when empty",
    ]
