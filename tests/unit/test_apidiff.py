"""The typed API diff (common/apidiff/diff.py) and its renderings (common/apidiff/render.py):
every change kind, the breaking rule, rename evidence, and what is no change."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.apidiff import Change, diff_all, diff_items
from invcrawl.common.apidiff import item_changes as typed_item_changes
from invcrawl.common.apidiff import param_changes as typed_param_changes
from invcrawl.common.apidiff.render import counts, describe, markdown, module_of, summary
from invcrawl.common.content import Param
from invcrawl.common.params import param

PK, KW, PO = "positional-or-keyword", "keyword-only", "positional-only"


def param_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes between two lists of parameters as items hold them (decoded)."""
    found = typed_param_changes(map(Param.from_json, old), map(Param.from_json, new))
    return [c.to_json() for c in found]


def item_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes between two items, as their JSON holds them."""
    return [c.to_json() for c in typed_item_changes(old, new)]  # type: ignore[arg-type]


def item(key: str = "py:function:m.f", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "key": key,
        "domain": key.split(":", maxsplit=1)[0],
        "status": "ok",
        "url": "http://a/m.html#m.f",
        "signature": "m.f(a, b=1)",
        "doc": "Do things.",
        "doc_markdown": "Do things.",
        "params": [param("a", PK), param("b", PK, default="1")],
        "returns": [],
        "raises": [],
        "versions": [],
    }
    base.update(fields)
    return base


def kinds(changes: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    return [(c["kind"], c["breaking"]) for c in changes]


def test_identical_and_theme_only_differences_are_no_change() -> None:
    old = item()
    new = item(
        url="http://b:8080/other/m.html#m.f",
        signature="m.f(a,  b = 1)",
        doc="Do   things.",
        doc_markdown="Do *things*.",
        crawl="other",
        version="2.0",
        checksum="x",
    )
    assert diff_items(old, new) is None
    assert item_changes(old, new) == []


def test_added_removed_and_tombstones() -> None:
    new = item()
    added = diff_items(None, new)
    assert added is not None and (added.change, added.breaking) == ("added", False)
    removed = diff_items(new, {"key": new["key"], "status": "removed"})
    assert removed is not None and (removed.change, removed.breaking) == ("removed", True)
    assert removed.to_json() == {
        "key": "py:function:m.f",
        "change": "removed",
        "breaking": True,
        "changes": [],
    }
    label = item("std:label:intro")
    gone = diff_items(label, None)
    assert gone is not None and gone.breaking is False  # a page or label is not API
    assert diff_items(None, {"key": "k", "status": "removed"}) is None


def test_param_added_required_and_optional() -> None:
    old = [param("a", PK)]
    new = [
        param("a", PK),
        param("c", PK),
        param("d", KW, default="None"),
        param("*args", "var-positional"),
    ]
    assert param_changes(old, new) == [
        {"kind": "param_added", "param": "c", "required": True, "breaking": True},
        {"kind": "param_added", "param": "d", "required": False, "breaking": False},
        {"kind": "param_added", "param": "*args", "required": False, "breaking": False},
    ]


def test_param_added_that_only_a_field_list_documents_is_not_required() -> None:
    changes = param_changes([], [param("opt", None)])
    assert changes == [
        {"kind": "param_added", "param": "opt", "required": False, "breaking": False}
    ]


def test_param_removed_default_type_and_kind_changes() -> None:
    old = [param("a", PK, "int"), param("b", PK, default="1"), param("c", PK), param("gone", PK)]
    new = [param("a", PK, "float"), param("b", PK, default="2"), param("c", KW)]
    assert param_changes(old, new) == [
        {
            "kind": "param_type_changed",
            "param": "a",
            "old": "int",
            "new": "float",
            "breaking": False,
        },
        {"kind": "param_default_changed", "param": "b", "old": "1", "new": "2", "breaking": False},
        {"kind": "param_kind_changed", "param": "c", "old": PK, "new": KW, "breaking": True},
        {"kind": "param_removed", "param": "gone", "breaking": True},
    ]


@pytest.mark.parametrize(
    ("old_kind", "new_kind", "breaking"),
    [
        (PK, KW, True),
        (PK, PO, True),
        (KW, PK, False),
        (PO, PK, False),
        (PK, "var-positional", True),
    ],
)
def test_kind_change_breaking_rule(old_kind: str, new_kind: str, breaking: bool) -> None:
    [change] = param_changes([param("x", old_kind)], [param("x", new_kind)])
    assert (change["kind"], change["breaking"]) == ("param_kind_changed", breaking)


def test_a_default_removed_makes_the_parameter_required_and_breaks() -> None:
    [change] = param_changes([param("x", PK, default="0")], [param("x", PK)])
    assert change == {
        "kind": "param_default_changed",
        "param": "x",
        "old": "0",
        "new": None,
        "breaking": True,
    }
    [added] = param_changes([param("x", PK)], [param("x", PK, default="0")])
    assert added["breaking"] is False


def test_rename_needs_clear_evidence() -> None:
    described = param_changes(
        [param("a", PK), param("src", PK, "str", None, "The source.")],
        [param("a", PK), param("source", PK, "str", None, "The source.")],
    )
    assert described == [{"kind": "param_renamed", "old": "src", "new": "source", "breaking": True}]
    # same place and kind but nothing else in common: a removal and an addition
    bare = param_changes([param("a", PK), param("b", PK)], [param("a", PK), param("c", PK)])
    assert kinds(bare) == [("param_added", True), ("param_removed", True)]
    # another place: no rename either
    moved = param_changes(
        [param("x", PK, "int"), param("a", PK)], [param("a", PK), param("y", PK, "int")]
    )
    assert [c["kind"] for c in moved] == ["param_added", "param_removed"]
    # a positional-only rename cannot break a caller (C, or before a "/")
    c_rename = param_changes([param("s", PO, "char *")], [param("text", PO, "char *")])
    assert c_rename == [{"kind": "param_renamed", "old": "s", "new": "text", "breaking": False}]


def test_unnamed_c_params_match_by_position() -> None:
    old = [param(None, PO, "int"), param(None, PO, "char *")]
    assert param_changes(old, [param(None, PO, "int"), param(None, PO, "const char *")]) == [
        {
            "kind": "param_type_changed",
            "param": None,
            "old": "char *",
            "new": "const char *",
            "breaking": False,
        }
    ]


def test_return_raises_deprecated_doc() -> None:
    old = item(
        returns=[{"name": None, "type": "int", "description": None}],
        raises=[
            {"type": "ValueError", "description": "bad"},
            {"type": "KeyError", "description": None},
        ],
        versions=[{"kind": "added", "version": "1.0", "text": ""}],
        doc="Do things. New in version 1.0.",
    )
    new = item(
        signature="m.f(a, b=1) -> str",
        returns=[{"name": None, "type": "str", "description": None}],
        raises=[
            {"type": "ValueError", "description": "worse"},
            {"type": "TypeError", "description": None},
        ],
        versions=[
            {"kind": "added", "version": "1.0", "text": ""},
            {"kind": "deprecated", "version": "1.4", "text": "Use g instead."},
        ],
        doc="Do things. New in version 1.0. Deprecated since version 1.4: Use g instead.",
    )
    assert item_changes(old, new) == [
        {"kind": "return_changed", "old": "int", "new": "str", "breaking": False},
        {"kind": "raises_added", "exception": "TypeError", "breaking": False},
        {"kind": "raises_removed", "exception": "KeyError", "breaking": False},
        {"kind": "deprecated", "version": "1.4", "breaking": False},
    ]  # the note's own text is no doc change, a raise's description is no change either


def test_doc_changed_and_translated_version_notes() -> None:
    old = item(doc="Fait des choses.")
    new = item(
        doc="Fait des choses. Obsolète depuis la version 2.1: Utiliser g.",
        versions=[{"kind": "deprecated", "version": "2.1", "text": "Utiliser g."}],
    )
    assert kinds(item_changes(old, new)) == [("deprecated", False)]
    assert kinds(item_changes(old, item(doc="Fait autre chose."))) == [("doc_changed", False)]


def test_signature_changed_only_when_nothing_else_says_it() -> None:
    old = item("py:data:m.X", signature="m.X = 1", params=[])
    new = item("py:data:m.X", signature="m.X = 2", params=[])
    assert item_changes(old, new) == [
        {"kind": "signature_changed", "old": "m.X = 1", "new": "m.X = 2", "breaking": False}
    ]
    explained = item(signature="m.f(a, b=2)", params=[param("a", PK), param("b", PK, default="2")])
    assert kinds(item_changes(item(), explained)) == [("param_default_changed", False)]


def test_positional_parameters_reordered_break_callers() -> None:
    new = item(signature="m.f(b=1, a)", params=[param("b", PK, default="1"), param("a", PK)])
    assert kinds(item_changes(item(), new)) == [("signature_changed", True)]


def test_status_change_compares_no_content() -> None:
    dead = item(status="failed", params=[], signature=None, doc="")
    assert item_changes(item(), dead) == [
        {"kind": "status_changed", "old": "ok", "new": "failed", "breaking": False}
    ]
    assert item_changes(dead, dict(dead, reason="other")) == []


def test_diff_all_sorted_by_key_and_breaking_line() -> None:
    old = {"py:function:m.f": item(), "py:function:m.g": item("py:function:m.g")}
    new = {
        "py:function:m.f": item(params=[param("a", KW), param("b", PK, default="1")]),
        "py:class:m.C": item("py:class:m.C", signature="class m.C", params=[]),
    }
    diffs = diff_all(old, new)
    assert [(d.key, d.change, d.breaking) for d in diffs] == [
        ("py:class:m.C", "added", False),
        ("py:function:m.f", "changed", True),
        ("py:function:m.g", "removed", True),
    ]
    assert diffs[1].to_json()["changes"] == [
        {"kind": "param_kind_changed", "param": "a", "old": PK, "new": KW, "breaking": True}
    ]


# -- renderings --------------------------------------------------------------------------


def sample() -> list[Any]:
    old = {
        "py:function:pkg.core.f": item("py:function:pkg.core.f"),
        "py:function:pkg.util.g": item("py:function:pkg.util.g"),
        "std:label:intro": item("std:label:intro", params=[], signature=None),
    }
    new = {
        "py:function:pkg.core.f": item(
            "py:function:pkg.core.f",
            params=[param("a", PK), param("b", PK, default="2")],
            signature="f(a, b=2)",
        ),
        "py:class:pkg.core.C": item("py:class:pkg.core.C", params=[]),
        "std:label:intro": item("std:label:intro", params=[], signature=None, doc="New intro."),
    }
    return diff_all(old, new)


def test_counts_and_summary_put_breaking_first() -> None:
    diffs = sample()
    total = counts(diffs)
    assert (total["added"], total["removed"], total["changed"], total["breaking"]) == (1, 1, 2, 1)
    text = summary(diffs, "Pkg 1.0", "Pkg 2.0")
    lines = text.splitlines()
    assert (
        lines[0]
        == "Pkg 1.0 -> Pkg 2.0: 4 symbols differ: 1 added, 1 removed, 2 changed; 1 breaking"
    )
    assert lines[2:4] == ["Breaking changes:", "  py:function:pkg.util.g removed"]
    assert "  py:function:pkg.core.f: default of b: 1 -> 2" in lines
    assert "  param_default_changed  1" in lines


def test_markdown_sections_per_module_breaking_first() -> None:
    modules = ["pkg", "pkg.core", "pkg.util"]
    text = markdown(sample(), "Pkg 1.0", "Pkg 2.0", modules)
    assert text.startswith(
        "# Changes from Pkg 1.0 to Pkg 2.0\n\n1 breaking, 1 added, 1 removed, 2 changed.\n"
    )
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## pkg.util", "## Pages and labels", "## pkg.core"]
    core = text.split("## pkg.core")[1]
    assert "### Added\n\n- `py:class:pkg.core.C` added" in core
    assert "- `py:function:pkg.core.f`: default of `b`: `1` -> `2`" in core


def test_module_of_and_describe() -> None:
    assert module_of("py:method:a.b.C.m", ["a", "a.b"]) == "a.b"
    assert module_of("c:function:f", []) == "C API"
    assert (
        describe(Change.from_json({"kind": "param_added", "param": "x", "required": True}))
        == "new required parameter x"
    )
    assert (
        describe(Change.from_json({"kind": "deprecated", "version": None}))
        == "deprecated in this version"
    )


def test_a_deprecation_taken_away_is_a_doc_change() -> None:
    old = item(
        doc="Do things. Deprecated since version 2.0: Use g.",
        versions=[{"kind": "deprecated", "version": "2.0", "text": "Use g."}],
    )
    assert kinds(item_changes(old, item())) == [("doc_changed", False)]
    assert kinds(item_changes(item(), old)) == [("deprecated", False)]


def test_made_keyword_only_is_not_a_reordering() -> None:
    new = item(signature="m.f(a, *, b=1)", params=[param("a", PK), param("b", KW, default="1")])
    assert kinds(item_changes(item(), new)) == [("param_kind_changed", True)]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (["classmethod"], [], [("label_removed", True)]),  # Cls.f() breaks
        (["staticmethod"], [], [("label_removed", True)]),
        ([], ["property"], [("label_added", True)]),  # a method became a property: f() breaks
        (["property"], [], [("label_removed", True)]),
        ([], ["async"], [("label_added", True)]),  # sync callers get a coroutine
        (["async"], [], [("label_removed", True)]),  # await of a plain value breaks
        ([], ["abstractmethod"], [("label_added", True)]),  # subclasses must implement it
        ([], ["final"], [("label_added", True)]),
        (["abstractmethod"], [], [("label_removed", False)]),
        ([], ["classmethod"], [("label_added", False)]),  # obj.f() still works
        (["property"], ["cached_property"], [("label_added", False), ("label_removed", False)]),
        (["cached_property"], [], [("label_removed", True)]),
        (["classmethod"], ["classmethod"], []),
    ],
)
def test_label_changes_and_when_they_break(
    old: list[str], new: list[str], expected: list[tuple[str, bool]]
) -> None:
    changes = item_changes(item(labels=old), item(labels=new))
    assert kinds(changes) == expected
    assert [describe(Change.from_json(c)) for c in changes] == [
        f"now {c['label']}" if c["kind"] == "label_added" else f"no longer {c['label']}"
        for c in changes
    ]


def test_items_of_before_the_labels_field_give_no_label_change() -> None:
    assert item_changes(item(), item(labels=["classmethod"])) == []
