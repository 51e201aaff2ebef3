"""Refresh validators (common/validators.py) and their trip through a task payload."""

from __future__ import annotations

import pytest

from invcrawl.common.tasks import Task, TaskEntry, decode_task, encode_task
from invcrawl.common.validators import (
    MAX_VALIDATOR,
    Validators,
    body_hash,
    decode_validators,
    entries_digest,
    response_validators,
)

ENTRIES = (TaskEntry("json.dumps", "py", "function", 1, "json.dumps", "-"),)


def test_round_trip_and_compact_form() -> None:
    v = Validators('"abc"', "Tue, 24 Nov 2026 10:00:00 GMT", "0123456789abcdef", "fedcba987654")
    text = v.encode()
    assert decode_validators(text) == v
    assert len(text) < 150 and " " not in text.replace("Tue, 24 Nov 2026 10:00:00 GMT", "")
    assert Validators(body_hash="ab").encode() == '{"h":"ab"}'


@pytest.mark.parametrize("stored", [None, "", "not json", "[1, 2]", '{"e": 5}', b"\xff"])
def test_unreadable_validators_mean_fetch_in_full(stored: str | bytes | None) -> None:
    assert decode_validators(stored) is None


def test_conditional_headers_only_for_what_the_server_gave() -> None:
    assert Validators(body_hash="ab").conditional_headers() == {}
    assert Validators(etag='"x"').conditional_headers() == {"If-None-Match": '"x"'}
    lm = "Tue, 24 Nov 2026 10:00:00 GMT"
    assert Validators(last_modified=lm).conditional_headers() == {"If-Modified-Since": lm}


def test_hostile_validators_are_not_kept() -> None:
    v = response_validators("x" * (MAX_VALIDATOR + 1), "a\r\nSet-Cookie: x", b"body", "k")
    assert v.etag is None and v.last_modified is None
    assert v.body_hash == body_hash(b"body") and len(v.body_hash) == 16


def test_entries_digest_depends_on_keys_anchors_and_order() -> None:
    a = entries_digest([("py:function:a", "a"), ("py:function:b", "b")])
    assert a == entries_digest([("py:function:a", "a"), ("py:function:b", "b")])
    assert a != entries_digest([("py:function:b", "b"), ("py:function:a", "a")])
    assert a != entries_digest([("py:function:a", "a2"), ("py:function:b", "b")])


def test_a_task_carries_its_validators_on_the_wire() -> None:
    v = Validators('"e"', None, "0123456789abcdef", "fedcba987654")
    task = Task("3f2a", "http://h/d/json.html", ENTRIES, validators=v)
    back = decode_task(encode_task(task))
    assert back.validators == v and back == task
    assert "val" not in encode_task(Task("3f2a", "http://h/d/json.html", ENTRIES))
