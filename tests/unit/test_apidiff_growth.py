"""The typed diff is near-linear in a site's sizes (issue 36): one function with 20,000
parameters renamed took ``diff`` 22.6 s and ``history`` 21.5 s (the change feed paid it
too), 15,000 modules took ``diff --markdown`` 136 s. Each test counts the work at a size
and at twice the size (tests/support/growth.py: lines of Python run, string comparisons
and hashes included), so a CPU hog beside the suite changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from invcrawl.common.apidiff import diff as apidiff
from invcrawl.common.apidiff import diff_all, item_changes
from invcrawl.common.apidiff.order import history_steps
from invcrawl.common.apidiff.render import markdown, summary
from invcrawl.common.content import Content
from invcrawl.common.params import POSITIONAL_OR_KEYWORD
from support.growth import CountedStr, growth

LINEAR = 2.5  # doubling the size: 2 when linear, 4 when quadratic


def function(names: list[str], **fields: Any) -> dict[str, Any]:
    params = [
        {"name": CountedStr(n), "kind": POSITIONAL_OR_KEYWORD, "type": None, "default": None,
         "description": None}
        for n in names
    ]  # fmt: skip
    return {"key": "py:function:m.f", "domain": "py", "status": "ok", "signature": "m.f(...)",
            "doc": "Do.", "params": params, "returns": [], "raises": [], "versions": [],
            **fields}  # fmt: skip


def renamed(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every parameter renamed (the issue's 20,000), in another order too."""
    old = function([f"p{i}" for i in range(n)])
    new = function([f"q{i}" for i in reversed(range(n))])
    return old, new


def test_renamed_parameters_diff_in_linear_work() -> None:
    def work_at(n: int) -> Callable[[], Any]:
        old, new = renamed(n)
        return lambda: item_changes(old, new)

    assert growth(work_at, 400) < LINEAR
    old, new = renamed(3)
    kinds = [c.kind for c in item_changes(old, new)]
    assert kinds == ["param_added"] * 3 + ["param_removed"] * 3


def test_history_and_the_change_feed_pay_nothing_quadratic() -> None:
    """``history`` (history_steps) and a ``changed`` event (item_changes, as
    frontier/changes.py calls it) over versions whose parameters all changed name, and
    whose raises and version notes grew."""

    def work_at(n: int) -> Callable[[], Any]:
        versions = []
        for v in range(3):
            item = function(
                [f"v{v}p{i}" for i in range(n)],
                raises=[{"type": f"E{v}x{i}"} for i in range(n)],
                versions=[{"kind": "changed", "version": f"{v}.{i}"} for i in range(n)],
            )  # fmt: skip
            versions.append((str(v), f"c{v}", item))
        return lambda: history_steps(versions)

    assert growth(work_at, 300) < LINEAR


def test_release_notes_in_linear_work_in_modules() -> None:
    def work_at(n: int) -> Callable[[], Any]:
        modules = [f"pkg{i}.sub" for i in range(n)] + [f"pkg{i}" for i in range(n)]
        old = {
            f"py:function:pkg{i}.sub.f": function([], key=f"py:function:pkg{i}.sub.f")
            for i in range(n)
        }
        new = {k: function(["a"], key=k) for k in old}
        diffs = diff_all(old, new)
        return lambda: (markdown(diffs, "P 1", "P 2", modules), summary(diffs, "P 1", "P 2"))

    assert growth(work_at, 400) < LINEAR


def test_version_notes_each_cost_one_pass_over_the_doc_at_most_a_bounded_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Taking a version note out of a doc is a pass over the doc: 20,000 notes on a large
    doc would multiply the two. Only the first NOTES_STRIPPED notes are taken out."""
    passes: list[int] = []
    real = apidiff._without_note

    def counted(doc: str, version: str, rest: str) -> str:
        passes.append(len(doc))
        return real(doc, version, rest)

    monkeypatch.setattr(apidiff, "_without_note", counted)
    notes = [{"kind": "changed", "version": f"1.{i}", "text": f"Note {i}."} for i in range(5000)]
    doc = " ".join(f"Changed in version 1.{i}: Note {i}." for i in range(5000))
    old = function(["a"], doc="Intro. " + doc, versions=notes)
    new = function(["a"], doc="Intro, edited. " + doc, versions=notes)
    assert [c.kind for c in item_changes(old, new)] == ["doc_changed"]
    assert len(passes) == 2 * apidiff.NOTES_STRIPPED


def doc_text(item: dict[str, Any]) -> str:
    return apidiff._doc_text(item, Content.of(item))


def test_a_note_is_taken_out_of_the_doc_as_before() -> None:
    """The lead-in is read backwards from the version: the same text comes out as the
    regex that tried it at every position (checked on 4,058 items of the CPython and
    Sphinx docs while this was written)."""
    doc = "Return x. Changed in version 3.2: Accepts bytes. Deprecated since version 3.9."
    notes = [
        {"kind": "changed", "version": "3.2", "text": "Accepts bytes."},
        {"kind": "deprecated", "version": "3.9", "text": ""},
    ]
    assert doc_text({"doc": doc, "versions": notes}) == "Returnx."
    german = "Gibt x zurück. Geändert in Version 3.2: Nimmt Bytes."
    note = [{"kind": "changed", "version": "3.2", "text": "Nimmt Bytes."}]
    assert doc_text({"doc": german, "versions": note}) == "Gibtxzurück."
    assert doc_text({"doc": "a 3.2 b", "versions": note}) == "a3.2b"  # no lead-in
