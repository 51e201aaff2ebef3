"""The domain's typed models keep the strings they replaced (issue 37): each StrEnum's
values are the JSON's, the renderer words every change kind, and the item's TypedDict
names the fields of an item in their order."""

from __future__ import annotations

import json

import orjson

from invcrawl.common.apidiff import CHANGE_KINDS, Change, ChangeKind, SymbolChange
from invcrawl.common.apidiff.render import MARKDOWN, describe
from invcrawl.common.items import ITEM_FIELDS, Item
from invcrawl.common.params import KINDS, ParamKind, with_kinds
from invcrawl.fetch.failures import OutcomeKind, classify_status


def test_the_enums_hold_the_strings_of_the_json() -> None:
    assert [str(k) for k in CHANGE_KINDS] == [
        "param_added", "param_removed", "param_renamed", "param_default_changed",
        "param_type_changed", "param_kind_changed", "return_changed", "raises_added",
        "raises_removed", "deprecated", "label_added", "label_removed", "signature_changed",
        "status_changed", "doc_changed",
    ]  # fmt: skip
    assert list(SymbolChange) == ["added", "removed", "changed"]
    assert list(KINDS) == [
        "positional-only", "positional-or-keyword", "keyword-only", "var-positional",
        "var-keyword",
    ]  # fmt: skip
    assert list(OutcomeKind) == ["extract", "not_found", "retry", "dead", "skipped"]
    params = with_kinds([("a", None, None), ("/", None, None), ("*b", None, None)], "py")
    assert orjson.dumps(params) == json.dumps(params, separators=(",", ":")).encode()
    assert b'"kind":"positional-only"' in orjson.dumps(params)
    assert json.dumps({"kind": ParamKind.VAR_POSITIONAL}) == '{"kind": "var-positional"}'
    assert classify_status(503).kind == "retry"


def test_every_change_kind_has_its_words_and_stored_strings_find_them() -> None:
    facts = {"param": "x", "old": "a", "new": "b", "required": True, "exception": "E",
             "version": "1.0", "label": "async"}  # fmt: skip
    words = {describe(Change.from_json({"kind": kind, **facts})) for kind in ChangeKind}
    assert len(words) == len(ChangeKind)  # none falls through to another's words
    stored = {"kind": "param_removed", "param": "x"}  # a kind read back from JSON: a str
    assert describe(Change.from_json(stored), MARKDOWN) == "parameter `x` removed"
    assert describe(Change.from_json({"kind": "from_a_newer_version"})) == "documentation changed"


def test_the_item_typeddict_names_every_field_in_order() -> None:
    assert tuple(Item.__annotations__) == ITEM_FIELDS
