"""The filters of crawl's and export's files (common/itemfilter.py): which items, which
fields, page text left out; an empty filter hands back the very bytes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from invcrawl.common import itemfilter
from invcrawl.common.itemfilter import ItemFilter


def item(key: str, status: str = "ok", doc: str = "text") -> dict[str, Any]:
    domain, role, name = key.split(":", 2)
    return {
        "key": key,
        "name": name,
        "domain": domain,
        "role": role,
        "doc": doc,
        "doc_markdown": f"*{doc}*",
        "status": status,
    }


ITEMS = [
    item("py:function:json.dumps"),
    item("py:method:json.JSONEncoder.encode", status="anchor_missing"),
    item("c:function:PyObject_New"),
    item("std:doc:library/json", doc="a whole page"),
    item("std:label:json-module", doc="a section"),
]


def keys(f: ItemFilter) -> list[str]:
    return [i["key"] for i in ITEMS if f.apply(i) is not None]


def test_items_are_selected_by_domain_role_and_status() -> None:
    assert keys(ItemFilter(domains=("py",))) == [ITEMS[0]["key"], ITEMS[1]["key"]]
    assert keys(ItemFilter(roles=("function",))) == [ITEMS[0]["key"], ITEMS[2]["key"]]
    assert keys(ItemFilter(roles=("py:function",))) == [ITEMS[0]["key"]]
    assert keys(ItemFilter(statuses=("anchor_missing",))) == [ITEMS[1]["key"]]
    both = ItemFilter(domains=("py", "c"), roles=("function",), statuses=("ok",))
    assert keys(both) == [ITEMS[0]["key"], ITEMS[2]["key"]]


def test_fields_are_selected_in_the_order_given() -> None:
    line = orjson.dumps(ITEMS[0])
    out = ItemFilter(fields=("status", "key")).data(line)
    assert out == b'{"status":"ok","key":"py:function:json.dumps"}'


def test_page_text_is_left_out_of_page_items_only() -> None:
    f = ItemFilter(omit_page_text=True)
    shaped = [f.apply(dict(i)) for i in ITEMS]
    assert [s["doc"] for s in shaped if s] == ["text", "text", "text", "", ""]
    assert [s["doc_markdown"] for s in shaped if s][3:] == ["", ""]
    assert all(s is not None and set(s) == set(i) for s, i in zip(shaped, ITEMS, strict=True))


def test_an_empty_filter_or_a_kept_item_keeps_its_bytes() -> None:
    line = b'{"key":"py:function:f","domain":"py","role":"function","status":"ok", "x": 1}'
    assert ItemFilter().data(line) is line
    assert ItemFilter(domains=("py",)).data(line) is line
    assert ItemFilter(domains=("c",)).data(line) is None
    assert ItemFilter().lines([line]) == [line]
    assert ItemFilter(domains=("py",)).text(line.decode()) == line.decode()


def test_a_tombstone_follows_its_key_not_the_status_or_fields() -> None:
    tomb = {"key": "py:function:gone", "status": "removed"}
    assert ItemFilter(domains=("py",), statuses=("ok",)).apply(tomb) == tomb
    assert ItemFilter(domains=("c",)).apply(tomb) is None
    assert ItemFilter(fields=("signature",)).apply(tomb) == tomb


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (itemfilter.statuses, "ok,gone", "unknown status 'gone'"),
        (itemfilter.field_names, "key,sig", "unknown field 'sig'"),
        (itemfilter.roles, "py:", "domain:role"),
        (itemfilter.domains, " , ", "expected domains"),
    ],
)
def test_a_value_naming_nothing_is_refused_in_one_line(parse: Any, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(text)
