"""The pure parts of the mkdocstrings extractor (common/extract/mkdocstrings/), each on
its own: a signature's call parts and return annotation (signature.py), a multi-line
signature as its one line, and the merge of the docstring's sections into the
signature's parameters (sections.py). tests/unit/test_mkdocstrings.py reads whole pages."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.extract.mkdocstrings.merge import merge
from invcrawl.common.extract.mkdocstrings.sections import Section
from invcrawl.common.extract.mkdocstrings.signature import (
    _one_line,
    call_parts,
    params_and_return,
)
from invcrawl.common.params import ParamKind, param


@pytest.mark.parametrize(
    ("sig", "parts"),
    [
        ("f(a, b=1) -> int", ("a, b=1", " -> int")),
        ("pkg.mod.f()", ("", "")),
        ("async def run(x: str)", ("x: str", "")),
        ("class Base(ABC)", ("ABC", "")),
        ("f[T](x: T) -> T", ("x: T", " -> T")),  # type parameters before the call
        ("f(a, g=(1, 2)) -> tuple[int, int]", ("a, g=(1, 2)", " -> tuple[int, int]")),
        ("f(a, b", ("a, b", "")),  # cut short: everything after the "("
        ("X: T = f(a, b)", None),  # a value, not a call
        ("name", None),
        ("f[T", None),  # an unclosed type parameter list
    ],
)
def test_call_parts(sig: str, parts: tuple[str, str] | None) -> None:
    assert call_parts(sig) == parts


def test_params_and_return_of_a_call() -> None:
    params, hint = params_and_return("f(a: int, /, *args, key=None, **kw) -> list[str]", False)
    assert [(p["name"], p["kind"]) for p in params] == [
        ("a", ParamKind.POSITIONAL_ONLY),
        ("*args", ParamKind.VAR_POSITIONAL),
        ("key", ParamKind.KEYWORD_ONLY),
        ("**kw", ParamKind.VAR_KEYWORD),
    ]
    assert params[0]["type"] == "int" and params[2]["default"] == "None"
    assert hint == "list[str]"


@pytest.mark.parametrize(
    ("sig", "no_params"),
    [(None, False), ("", False), ("X: int = 3", False), ("Base(ABC)", True)],
)
def test_no_params_for_values_bare_names_and_bases(sig: str | None, no_params: bool) -> None:
    # None: the page shows no parameter list (the documented names are then the params)
    assert params_and_return(sig, no_params) == (None, None)


def test_a_formatted_signature_is_read_as_its_one_line() -> None:
    raw = "def f(\n    a: int,\n    b: str = 'x',\n) -> None"
    assert _one_line(raw) == "def f(a: int, b: str = 'x') -> None"
    assert _one_line("f(a,  b)") == "f(a, b)"  # one line: only its spaces normalized


def sig(*params: dict[str, Any]) -> list[dict[str, Any]]:
    return list(params)


def test_sections_complete_the_signatures_parameters() -> None:
    signature = sig(
        param("a", ParamKind.POSITIONAL_OR_KEYWORD),
        param("b", ParamKind.POSITIONAL_OR_KEYWORD, "int", "3"),
        param("*args", ParamKind.VAR_POSITIONAL),
    )
    sections = [
        Section(
            "params",
            [
                ("a", "str", "None", "The a."),
                ("b", "float", "4", "The b."),  # the signature's type and default win
                ("*args", "int", "()", "More."),  # griffe's () is no default of *args
                ("c", "bool", None, "Documented, not in the signature."),
            ],
        ),
        Section("raises", [(None, "ValueError", None, "When bad.")]),
    ]
    merged = merge(sections, signature, "int")
    params, returns, raises = merged.params, merged.returns, merged.raises
    assert [(p["name"], p["type"], p["default"], p["description"]) for p in params] == [
        ("a", "str", "None", "The a."),
        ("b", "int", "3", "The b."),
        ("*args", "int", None, "More."),
    ]
    # a documented name the signature lacks is no parameter of the call (issue 49, 7)
    assert merged.doc_only == [{"name": "c", "description": "Documented, not in the signature."}]
    assert signature[0]["type"] is None  # the signature's own dicts are left as they were
    assert raises == [{"type": "ValueError", "description": "When bad."}]
    # no Returns section: the annotation is the one return value
    assert returns == [{"name": None, "type": "int", "description": None}]


def test_the_annotation_types_an_untyped_return_only() -> None:
    untyped = [Section("returns", [(None, None, None, "The result.")])]
    returns = merge(untyped, [], "list[str]").returns
    assert returns == [{"name": None, "type": "list[str]", "description": "The result."}]
    typed = [Section("returns", [("out", "dict", None, "Named.")])]
    returns = merge(typed, [], "list[str]").returns
    assert returns == [{"name": "out", "type": "dict", "description": "Named."}]
