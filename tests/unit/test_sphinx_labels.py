"""Labels of Sphinx object descriptions: the keywords written before the name, in the
markup of Sphinx 4-8 (``em.property``), 7+ (``span.k`` inside) and 9 (``span.property``),
and CPython's own directives; the signature text is unchanged."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from invcrawl.common.extract import extract_page
from support.targets import target

URL = "https://docs.example.org/lib.html"
NAME = '<span class="sig-name descname"><span class="pre">{}</span></span>'


def _dt(prefix: str, name: str = "f", after: str = "") -> bytes:
    return (
        '<html><head><meta name="generator" content="Sphinx 7"></head><body>'
        '<div class="body" role="main"><dl class="py method">'
        f'<dt class="sig sig-object py" id="m.C.{name}">{prefix}{NAME.format(name)}'
        f'<span class="sig-paren">(</span><span class="sig-paren">)</span>{after}</dt>'
        "<dd><p>Body.</p></dd></dl></div></body></html>"
    ).encode()


def _one(body: bytes, name: str = "f") -> dict[str, object]:
    [out] = extract_page(body, URL, [target(f"m.C.{name}", "py", "method", f"m.C.{name}", "-")])
    return out


def _em(word: str) -> str:
    return f'<em class="property"><span class="pre">{word}</span><span class="w"> </span></em>'


def _k(word: str) -> str:
    return (
        f'<span class="property"><span class="k"><span class="pre">{word}</span></span>'
        '<span class="w"> </span></span>'
    )


@pytest.mark.parametrize(
    ("words", "markup", "labels"),
    [
        (["classmethod"], _em, ["classmethod"]),
        (["static"], _em, ["staticmethod"]),
        (["abstract", "async"], _k, ["abstractmethod", "async"]),
        (["coroutine"], _em, ["async"]),  # CPython's coroutinemethod
        (["awaitable"], _em, ["async"]),  # CPython's awaitablefunction
        (["abstractmethod"], _em, ["abstractmethod"]),
        (["final", "property"], _k, ["final", "property"]),
        (["class"], _em, []),  # the role, not a label
        ([], _em, []),
    ],
)
def test_keywords_before_the_name_are_labels(
    words: list[str], markup: Callable[[str], str], labels: list[str]
) -> None:
    out = _one(_dt("".join(markup(w) for w in words)))
    assert out["labels"] == labels
    assert out["signature"] == " ".join([*words, "f()"])  # the signature text is unchanged


@pytest.mark.parametrize("markup", [_em, _k])
def test_a_themes_type_word_leaves_the_signature(markup: Callable[[str], str]) -> None:
    """zzzeeksphinx (SQLAlchemy) writes ``method`` (``function``) before every method
    (function): the role says so, and Python has no such keyword (issue 47, 8)."""
    out = _one(_dt(markup("method")))
    assert out["signature"] == "f()" and out["labels"] == []
    kept = _one(_dt(markup("classmethod") + markup("method")))  # only a leading one
    assert kept["signature"] == "classmethod method f()"


def test_an_annotation_after_the_name_is_no_label() -> None:
    after = '<em class="property"><span class="p">:</span> <span class="pre">property</span></em>'
    assert _one(_dt("", after=after))["labels"] == []


def test_c_api_annotations_name_their_labels() -> None:
    """CPython's c_annotations texts (3.11 and later releases) and the labels they state
    (issue 49, 9); an annotation this does not know stays text."""
    from invcrawl.common.extract.sphinx_capi import annotation_label

    assert annotation_label("Return value: New reference.") == "refcount:new"
    assert annotation_label("Return value: Borrowed reference.") == "refcount:borrowed"
    assert annotation_label("Return value: Always NULL.") == "refcount:null"
    assert annotation_label("Part of the Stable ABI.") == "stable-abi"
    assert annotation_label("Part of the Stable ABI since version 3.7.") == "stable-abi:3.7"
    assert annotation_label("Part of the Limited API.") == "limited-api"
    assert annotation_label("Part of the Limited API (as an opaque struct).") == "limited-api"
    assert annotation_label("Part of the Limited API since version 3.10.") == "limited-api:3.10"
    assert annotation_label("Thread safety: safe.") is None
