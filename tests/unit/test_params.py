# ruff: noqa: E501  (the HTML snippets are verbatim Sphinx output, one line per element)
"""Parameters as data (common/params.py) and their extraction from Sphinx's per-parameter
elements (common/extract/signature.py, fields.py): kinds, defaults and annotations, and
each class of noise that real sites gave (defaults holding commas, values of data and
attributes, ``name: type`` without a space, ``x (u)``, ``… xn``, prose taken as a name)."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.params import (
    balanced,
    c_slot,
    drop_optional_brackets,
    field_names,
    is_param_name,
    parse_py_arglist,
    with_kinds,
)
from support.targets import target

URL = "https://docs.example.org/api.html"


def extract(
    dt_inner: str, dd: str = "<p>Body.</p>", role: str = "function", domain: str = "py"
) -> dict[str, Any]:
    html = (
        '<html><body><div role="main"><section id="api"><h1>API</h1>'
        f'<dl class="{domain} {role}"><dt class="sig sig-object {domain}" id="x.f">{dt_inner}</dt>'
        f"<dd>{dd}</dd></dl></section></div></body></html>"
    )
    [out] = extract_page(html.encode(), URL, [target("x.f", domain, role, "x.f", "-")])
    return out


def shape(params: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(p["name"], p["kind"], p["type"], p["default"]) for p in params]


def n(text: str) -> str:
    return f'<span class="n"><span class="pre">{text}</span></span>'


def o(text: str) -> str:
    return f'<span class="o"><span class="pre">{text}</span></span>'


P = '<span class="p"><span class="pre">:</span></span><span class="w"> </span>'
EQ = '<span class="w"> </span><span class="o"><span class="pre">=</span></span><span class="w"> </span>'
NAME = '<span class="sig-prename descclassname"><span class="pre">x.</span></span><span class="sig-name descname"><span class="pre">f</span></span>'
OPEN, CLOSE = '<span class="sig-paren">(</span>', '<span class="sig-paren">)</span>'


def em(inner: str) -> str:
    return f'<em class="sig-param">{inner}</em>'


def default(text: str) -> str:
    return f'<span class="default_value"><span class="pre">{text}</span></span>'


# -- Sphinx >= 3: one em per parameter, its parts in spans ------------------------------


def test_structured_kinds_defaults_annotations_sphinx4_markers() -> None:
    ems = [
        em(n("a") + P + n("int")),
        em(o("/")),
        em(
            n("b")
            + P
            + n("Dict")
            + '<span class="p"><span class="pre">[</span></span>'
            + n("str")
            + '<span class="p"><span class="pre">,</span></span><span class="w"> </span>'
            + n("int")
            + '<span class="p"><span class="pre">]</span></span>'
            + EQ
            + default("{'x': 1, 'y': 2}")
        ),
        em(o("*") + n("args")),
        em(n("key") + EQ + default("None")),
        em(o("**") + n("kw") + P + n("Any")),
    ]
    out = extract(NAME + OPEN + ", ".join(ems) + CLOSE)
    assert shape(out["params"]) == [
        ("a", "positional-only", "int", None),
        ("b", "positional-or-keyword", "Dict[str, int]", "{'x': 1, 'y': 2}"),
        ("*args", "var-positional", None, None),
        ("key", "keyword-only", None, "None"),
        ("**kw", "var-keyword", "Any", None),
    ]


def test_sphinx9_separator_in_an_abbr_makes_keyword_only() -> None:
    star = em(
        '<span class="keyword-only-separator o"><abbr title="Keyword-only parameters separator (PEP 3102)"><span class="pre">*</span></abbr></span>'
    )
    slash = em(
        '<span class="positional-only-separator o"><abbr title="Positional-only parameter separator (PEP 570)"><span class="pre">/</span></abbr></span>'
    )
    out = extract(
        NAME
        + OPEN
        + ", ".join([em(n("a")), slash, em(n("b")), star, em(n("c") + EQ + default("1"))])
        + CLOSE
    )
    assert shape(out["params"]) == [
        ("a", "positional-only", None, None),
        ("b", "positional-or-keyword", None, None),
        ("c", "keyword-only", None, "1"),
    ]


# -- Sphinx's fallback parser: the raw text split at every comma ---------------------------


def pseudo(*pieces: str) -> str:
    return NAME + OPEN + ", ".join(em(n(p)) for p in pieces) + CLOSE


def test_default_holding_commas_is_one_default() -> None:
    out = extract(
        pseudo("name", "scalars=(&lt;class 'Mapping'&gt;", "&lt;class 'str'&gt;)", "flag=True")
    )
    assert shape(out["params"]) == [
        ("name", "positional-or-keyword", None, None),
        ("scalars", "positional-or-keyword", None, "(<class 'Mapping'>, <class 'str'>)"),
        ("flag", "positional-or-keyword", None, "True"),
    ]


def test_annotation_holding_commas_is_one_annotation() -> None:
    out = extract(
        pseudo(
            "mode: ~black.mode.Mode",
            "comments: ~typing.Dict[int",
            "~typing.List[~blib2to3.pytree.Leaf]] = &lt;factory&gt;",
            "x: Union[List[X]",
            "Dict[K",
            "X]] = None",
        )
    )
    assert shape(out["params"]) == [
        ("mode", "positional-or-keyword", "~black.mode.Mode", None),
        (
            "comments",
            "positional-or-keyword",
            "~typing.Dict[int, ~typing.List[~blib2to3.pytree.Leaf]]",
            "<factory>",
        ),
        ("x", "positional-or-keyword", "Union[List[X], Dict[K, X]]", "None"),
    ]


def test_whole_arglist_in_one_em_with_optional_groups() -> None:
    out = extract(
        NAME
        + OPEN
        + em("user, oldpw, newpw [, serverctrls=None [, clientctrls=None] [, extract_newpw=False]]")
        + CLOSE
    )
    assert [p["name"] for p in out["params"]] == [
        "user",
        "oldpw",
        "newpw",
        "serverctrls",
        "clientctrls",
        "extract_newpw",
    ]
    assert out["params"][3]["default"] == "None"


def test_base_class_in_a_class_signature_is_no_parameter() -> None:
    out = extract(NAME + OPEN + em(n("factory.Factory")) + CLOSE, role="class")
    assert out["params"] == []


# -- values are not parameter lists ------------------------------------------------------


@pytest.mark.parametrize(
    ("dt", "role"),
    [
        (
            '<span class="sig-name descname"><span class="pre">A</span></span><em class="property"><span class="w"> </span><span class="p"><span class="pre">=</span></span><span class="w"> </span><span class="pre">array([[5.6e-02,</span> <span class="pre">0.0,</span> <span class="pre">...]])</span></em>',
            "data",
        ),
        (
            '<span class="sig-name descname"><span class="pre">STmag</span></span><span class="w"> </span><span class="p">=</span> <span class="pre">Unit("mag(ST)")</span>',
            "data",
        ),
        (
            '<span class="sig-name descname"><span class="pre">HOOKS</span></span><span class="w"> </span><span class="p">=</span> <span class="pre">(&lt;function</span> <span class="pre">a&gt;,</span> <span class="pre">&lt;function</span> <span class="pre">b&gt;)</span>',
            "attribute",
        ),
        (
            '<span class="sig-name descname"><span class="pre">AED</span></span><em class="property"><span class="p"><span class="pre">:</span></span><span class="w"> </span><span class="pre">URIRef</span></em><em class="property"><span class="w"> </span><span class="p"><span class="pre">=</span></span><span class="w"> </span><span class="pre">rdflib.term.URIRef(\'https://brickschema.org/schema/Brick#AED\')</span></em>',
            "attribute",
        ),
        ('<code class="descname">mp.e</code> = &lt;e = exp(1): 2.71828~&gt;', "attribute"),
    ],
)
def test_values_of_data_and_attributes_have_no_params(dt: str, role: str) -> None:
    assert extract(dt, role=role)["params"] == []


def test_rst_directive_option_argument_is_no_parameter() -> None:
    dt = '<span class="sig-name descname"><span class="pre">:canonical:</span></span><span class="sig-prename descclassname"><span class="pre"> (full qualified name including module name)</span></span>'
    assert extract(dt, role="directive:option", domain="rst")["params"] == []


# -- names written in field lists --------------------------------------------------------


def numpydoc(*terms: str) -> str:
    rows = "".join(f"<dt>{t}</dt><dd><p>About it.</p></dd>" for t in terms)
    return (
        '<p>Body.</p><dl class="field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>'
        f'<dd class="field-odd"><dl class="simple">{rows}</dl></dd></dl>'
    )


def test_numpydoc_names_without_the_space_before_the_colon_elided_lists_and_prose() -> None:
    dd = numpydoc(
        "<strong>*args: Dask collections</strong>",
        "<strong>chunks: iterable of tuples</strong>",
        "<strong>x (u)</strong>",
        "<strong>x1, …, xn</strong>",
        "<strong>``**kwargs``</strong>",
        "<strong>\\*seqs</strong>",
        "<strong>Additional keywords are passed to the distance metric class.</strong>",
        "<strong>.. deprecated: 0.13</strong>",
        '<strong>scheduler</strong><span class="classifier">string, optional</span>',
    )
    out = extract(NAME + OPEN + CLOSE, dd)
    assert [(p["name"], p["kind"], p["type"]) for p in out["params"]] == [
        ("*args", None, "Dask collections"),
        ("chunks", None, "iterable of tuples"),
        ("x", None, "u"),
        ("x1", None, None),
        ("xn", None, None),
        ("**kwargs", None, None),
        ("*seqs", None, None),
        ("scheduler", None, "string, optional"),
    ]


def test_field_names_merge_into_the_signature_params() -> None:
    dd = numpydoc("<strong>a: int</strong>", "<strong>keywords for axes</strong>")
    out = extract(NAME + OPEN + em(n("a")) + ", " + em(o("**") + n("kw")) + CLOSE, dd)
    assert shape(out["params"]) == [
        ("a", "positional-or-keyword", "int", None),
        ("**kw", "var-keyword", None, None),
    ]
    assert out["params"][0]["description"] == "About it."


# -- C and C++ ---------------------------------------------------------------------------


def test_c_variadic_function_pointer_and_macro_params() -> None:
    dt = '<span class="kt">int</span> <span class="sig-name descname"><span class="n">f</span></span><span class="sig-paren">(</span>void <span class="p">(</span><span class="p">*</span>cb<span class="p">)</span><span class="p">(</span>int<span class="p">)</span>, const char *format, ...<span class="sig-paren">)</span>'
    out = extract(dt, domain="c")
    assert shape(out["params"]) == [
        ("cb", "positional-only", "void (*cb)(int)", None),
        ("format", "positional-only", "const char *", None),
        ("...", "var-positional", None, None),
    ]
    macro = '<span class="sig-name descname"><span class="n">MAX</span></span><span class="sig-paren">(</span>a, b<span class="sig-paren">)</span>'
    assert [p["name"] for p in extract(macro, role="macro", domain="c")["params"]] == ["a", "b"]


# -- the pure helpers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a, b", True),
        ("scalars=(<class 'Mapping'>", False),
        ("Union[List[X]", False),
        ("x='(('", True),
        ("x='unterminated", False),
        ("f(a) -> b", True),
    ],
)
def test_balanced(text: str, expected: bool) -> None:
    assert balanced(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "extreq[,serverctrls=None[,clientctrls=None]]",
            "extreq,serverctrls=None,clientctrls=None",
        ),
        ("key[, default]", "key, default"),
        ("[start, ]stop[, step]", "start, stop, step"),
        ("x: List[int], y=[1, 2]", "x: List[int], y=[1, 2]"),
        ("d: Dict[str, List[int]]", "d: Dict[str, List[int]]"),
        ("s='[,'", "s='[,'"),
    ],
)
def test_drop_optional_brackets(text: str, expected: str) -> None:
    assert drop_optional_brackets(text) == expected


def test_kinds_from_markers_and_stars() -> None:
    slots = parse_py_arglist("a, b=1, /, c: int = 2, *args, d, e=3, **kw")
    assert [(p["name"], p["kind"]) for p in with_kinds(slots, "py")] == [
        ("a", "positional-only"),
        ("b", "positional-only"),
        ("c", "positional-or-keyword"),
        ("*args", "var-positional"),
        ("d", "keyword-only"),
        ("e", "keyword-only"),
        ("**kw", "var-keyword"),
    ]
    assert [p["kind"] for p in with_kinds(parse_py_arglist("a, b"), "js")] == [
        "positional-only"
    ] * 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("int x", ("x", "int", None)),
        ("char buf[]", ("buf", "char", None)),
        ("int", ("", "int", None)),
        ("const char*", ("", "const char*", None)),
        ("...", ("...", None, None)),
        ("void (*cb)(int)", ("cb", "void (*cb)(int)", None)),
        ("std::size_t n = 0", ("n", "std::size_t", "0")),
    ],
)
def test_c_slot(raw: str, expected: tuple[Any, ...]) -> None:
    assert c_slot(raw) == expected


@pytest.mark.parametrize(
    ("raw", "names", "type_"),
    [
        ("x1, x2", ["x1", "x2"], None),
        ("kwargs:", ["kwargs"], None),
        ("values_dict: dict(str, bytes)", ["values_dict"], "dict(str, bytes)"),
        ("address: string, or Cluster", ["address"], "string, or Cluster"),
        ("x (u)", ["x"], "u"),
        ("… xn", ["xn"], None),
        ("delivery-tag", [], None),
        ("~Response.body", [], None),
        ("See statsmodels.LikelihoodModelResults", [], None),
        ("(", [], None),
    ],
)
def test_field_names(raw: str, names: list[str], type_: str | None) -> None:
    assert field_names(raw) == (names, type_)


def test_is_param_name() -> None:
    assert all(map(is_param_name, ["x", "_x1", "*args", "**kw", "naïve"]))
    assert not any(map(is_param_name, ["", None, "1x", "***x", "a.b", "x y", "'a'", "..."]))
