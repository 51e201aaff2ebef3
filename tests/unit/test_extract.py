# ruff: noqa: E501  (the HTML snippets are verbatim Sphinx output, one line per element)
"""Unit tests for invcrawl.common.extract on HTML snippets shaped like each Sphinx version's output
and each theme's main node (docs/extraction.md, "How an entry is found")."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from support.targets import target

URL = "https://docs.example.org/en/latest/api/mod.html"
KEYS = {
    "status",
    "reason",
    "signature",
    "title",
    "parent",
    "doc",
    "doc_markdown",
    "params",
    "returns",
    "raises",
    "versions",
    "labels",
    "generator",
}


def page(body: str, wrapper: str = '<div class="body" role="main">{}</div>') -> bytes:
    html = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>'
        '<div class="sphinxsidebar"><a href="#json.dumps">json.dumps</a>'
        '<span id="json.dumps">sidebar duplicate</span></div>'
        + wrapper.format(body)
        + "</body></html>"
    )
    return html.encode("utf-8")


def one(
    body: bytes,
    name: str,
    anchor: str,
    domain: str = "py",
    role: str = "function",
) -> dict[str, Any]:
    [out] = extract_page(body, URL, [target(name, domain, role, anchor, "-")])
    assert set(out) - {"references"} == KEYS  # references: only a doc with links has them
    return out


# -- Sphinx 1.8 (HTML4 writer): table field lists, bare <em> params, div.section ------------

SPHINX_18 = """
<div class="section" id="module-json">
<span id="json-json-encoder-and-decoder"></span><h1>json — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Permalink to this headline">¶</a></h1>
<p>Intro text of the module.</p>
<dl class="function">
<dt id="json.dumps">
<!--[json.dumps]--><code class="descclassname">json.</code><code class="descname">dumps</code><span class="sig-paren">(</span><em>obj</em>, <em>*</em>, <em>skipkeys=False</em><span class="sig-paren">)</span><a class="headerlink" href="#json.dumps" title="Permalink to this definition">¶</a></dt>
<dd><p>Serialize <em>obj</em> to a JSON formatted <code class="docutils literal"><span class="pre">str</span></code>.</p>
<table class="docutils field-list" frame="void" rules="none">
<col class="field-name" /><col class="field-body" />
<tbody valign="top">
<tr class="field-odd field"><th class="field-name">Parameters:</th><td class="field-body"><ul class="first last simple">
<li><strong>obj</strong> (<em>object</em>) – the object to serialize</li>
<li><strong>skipkeys</strong> (<em>bool</em>) – skip non-basic keys</li></ul></td></tr>
<tr class="field-even field"><th class="field-name">Returns:</th><td class="field-body">a JSON string</td></tr>
<tr class="field-odd field"><th class="field-name" colspan="2">Return type:</th></tr>
<tr class="field-odd field"><td>&#160;</td><td class="field-body">str</td></tr>
</tbody></table>
<div class="versionadded"><p><span class="versionmodified">New in version 3.4.</span></p></div>
</dd></dl>
<dl class="glossary docutils"><dt id="term-apical">apical</dt>
<dd>at the top of the plant.</dd></dl>
</div>
"""


def test_sphinx18_function_signature_params_fields_versions() -> None:
    out = one(page(SPHINX_18), "json.dumps", "json.dumps")
    assert out["status"] == "ok" and out["reason"] is None
    assert out["signature"] == "json.dumps(obj, *, skipkeys=False)"
    assert out["params"] == [
        {
            "name": "obj",
            "kind": "positional-or-keyword",
            "type": "object",
            "default": None,
            "description": "the object to serialize",
        },
        {
            "name": "skipkeys",
            "kind": "keyword-only",
            "type": "bool",
            "default": "False",
            "description": "skip non-basic keys",
        },
    ]
    assert out["returns"] == [{"name": None, "type": "str", "description": "a JSON string"}]
    assert out["versions"] == [{"kind": "added", "version": "3.4", "text": ""}]
    assert out["doc"].startswith("Serialize obj to a JSON formatted str.")
    assert out["doc_markdown"].startswith("Serialize *obj* to a JSON formatted `str`.")
    assert out["parent"] == "json"
    assert out["title"] is None


def test_duplicate_id_outside_main_is_ignored() -> None:
    out = one(page(SPHINX_18), "json.dumps", "json.dumps")
    assert "sidebar duplicate" not in (out["doc"] or "")


def test_sphinx18_module_is_div_section_without_member_bodies() -> None:
    out = one(page(SPHINX_18), "json", "module-json", role="module")
    assert out["title"] == "json — JSON encoder and decoder"
    assert out["signature"] is None
    assert "Intro text of the module." in out["doc"]
    assert "Serialize" not in out["doc"]
    assert "Serialize" not in out["doc_markdown"]
    # The module's own introduction: not its section's title, not its members (issue 14.4).
    assert out["doc"].startswith("Intro text of the module.")
    assert out["doc_markdown"].startswith("Intro text of the module.")
    assert "¶" not in out["doc_markdown"]


def test_label_on_leading_span_is_the_whole_section() -> None:
    out = one(
        page(SPHINX_18),
        "json-json-encoder-and-decoder",
        "json-json-encoder-and-decoder",
        "std",
        "label",
    )
    assert out["title"] == "json — JSON encoder and decoder"
    assert "Serialize obj" in out["doc"]  # a label's section keeps its objects


def test_html4_glossary_term() -> None:
    out = one(page(SPHINX_18), "apical", "term-apical", "std", "term")
    assert out["title"] == "apical"
    assert out["doc"] == "at the top of the plant."
    assert out["signature"] is None


# -- Sphinx 2.x: html5 writer, em.sig-param, dl.field-list without span.colon ---------------

SPHINX_2 = """
<div class="section" id="module-json"><h1>json</h1>
<dl class="function">
<dt id="json.dumps">
<code class="sig-prename descclassname">json.</code><code class="sig-name descname">dumps</code><span class="sig-paren">(</span><em class="sig-param">obj</em>, <em class="sig-param">*</em>, <em class="sig-param">skipkeys=False</em><span class="sig-paren">)</span><a class="headerlink" href="#json.dumps" title="Permalink to this definition">¶</a></dt>
<dd><p>Serialize it.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters</dt>
<dd class="field-odd"><ul class="simple"><li><p><strong>obj</strong> (<em>object</em>) – the object</p></li>
<li><p><strong>skipkeys</strong> (<a class="reference external" href="https://docs.python.org/3/library/functions.html#bool"><em>bool</em></a>) – skip keys</p></li></ul></dd>
<dt class="field-even">Raises</dt>
<dd class="field-even"><p><strong>TypeError</strong> – if obj is not serializable</p></dd>
</dl>
<div class="versionchanged"><p><span class="versionmodified changed">Changed in version 3.6: </span>All optional parameters are now keyword-only.</p></div>
</dd></dl>
</div>
"""


def test_sphinx2_fields_raises_and_versionchanged() -> None:
    out = one(page(SPHINX_2), "json.dumps", "json.dumps")
    assert out["signature"] == "json.dumps(obj, *, skipkeys=False)"
    assert [p["name"] for p in out["params"]] == ["obj", "skipkeys"]
    assert out["params"][1]["type"] == "bool"
    assert out["params"][1]["description"] == "skip keys"
    assert out["raises"] == [{"type": "TypeError", "description": "if obj is not serializable"}]
    assert out["versions"] == [
        {
            "kind": "changed",
            "version": "3.6",
            "text": "All optional parameters are now keyword-only.",
        }
    ]
    assert "**Parameters:**" in out["doc_markdown"]
    assert "[*bool*](https://docs.python.org/3/library/functions.html#bool)" in out["doc_markdown"]


# -- Sphinx 3.x: "py function" classes, n/o/default_value spans, span.target module ----------

SPHINX_3 = """
<section id="intro"><h1>Intro</h1>
<p>Before.</p>
<span class="target" id="module-rdf.rdf"></span><p>The rdf module text.</p>
<dl class="py class">
<dt id="rdf.rdf.Rdf"><span id="old_rdf.Rdf"></span><em class="property"><span class="pre">class</span> </em><code class="sig-prename descclassname"><span class="pre">rdf.rdf.</span></code><code class="sig-name descname"><span class="pre">Rdf</span></code><span class="sig-paren">(</span><em class="sig-param"><span class="n">a</span><span class="o">=</span><span class="default_value">1</span></em><span class="sig-paren">)</span></dt>
<dd><p>Class body.</p>
<dl class="py method">
<dt id="rdf.rdf.Rdf.get"><code class="sig-name descname"><span class="pre">get</span></code><span class="sig-paren">(</span><span class="sig-paren">)</span> &#x2192; int</dt>
<dd><p>Method body.</p></dd></dl>
</dd></dl>
<h2>Next heading</h2><p>After.</p>
</section>
"""


def test_sphinx3_span_target_module_takes_siblings_until_heading() -> None:
    out = one(page(SPHINX_3), "rdf.rdf", "module-rdf.rdf", role="module")
    assert out["doc"].startswith("The rdf module text.")
    assert "Method body" not in out["doc"] and "Class body" not in out["doc"]
    assert "After." not in out["doc"]
    assert out["title"] == "Intro"
    assert out["parent"] == "rdf"


def test_sphinx3_class_excludes_member_and_inner_span_id_resolves() -> None:
    out = one(page(SPHINX_3), "rdf.rdf.Rdf", "old_rdf.Rdf", role="class")
    assert out["signature"] == "class rdf.rdf.Rdf(a=1)"
    assert out["params"] == [
        {
            "name": "a",
            "kind": "positional-or-keyword",
            "type": None,
            "default": "1",
            "description": None,
        }
    ]
    assert out["doc"] == "Class body."
    assert "Method body" not in out["doc_markdown"]


def test_nested_member_parent_and_legacy_return_arrow() -> None:
    body = page(SPHINX_3)
    targets = [
        target("rdf.rdf.Rdf", "py", "class", "rdf.rdf.Rdf", "-"),
        target("rdf.rdf.Rdf.get", "py", "method", "rdf.rdf.Rdf.get", "-"),
    ]
    _, meth = extract_page(body, URL, targets)
    assert meth["parent"] == "rdf.rdf.Rdf"
    assert meth["signature"] == "get() → int"
    assert meth["returns"] == [{"name": None, "type": "int", "description": None}]
    assert meth["params"] == []


# -- Sphinx 4–6: span names, sig-return, [source] link, <section>, span.colon -----------------

SPHINX_5 = """
<section id="module-dogpile.cache.region">
<span id="region"></span><h2>Region<a class="headerlink" href="#module-dogpile.cache.region" title="Permalink to this heading">¶</a></h2>
<dl class="py class">
<dt class="sig sig-object py" id="dogpile.cache.region.CacheRegion">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">dogpile.cache.region.</span></span><span class="sig-name descname"><span class="pre">CacheRegion</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">name</span></span><span class="p"><span class="pre">:</span></span><span class="w"> </span><span class="n"><span class="pre">str</span></span><span class="w"> </span><span class="o"><span class="pre">=</span></span><span class="w"> </span><span class="default_value"><span class="pre">None</span></span></em><span class="sig-paren">)</span><a class="reference internal" href="../_modules/dogpile/cache/region.html#CacheRegion"><span class="viewcode-link"><span class="pre">[source]</span></span></a><a class="headerlink" href="#dogpile.cache.region.CacheRegion" title="Permalink to this definition">¶</a></dt>
<dd><p>A front end to a backend.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>name</strong> (<em>str</em>) – the region name</p></dd>
</dl>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span><span class="n">region</span> <span class="o">=</span> <span class="n">make_region</span><span class="p">()</span>
</pre></div></div>
<dl class="py method">
<dt class="sig sig-object py" id="dogpile.cache.region.CacheRegion.get">
<span class="sig-name descname"><span class="pre">get</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">key</span></span></em><span class="sig-paren">)</span> <span class="sig-return"><span class="sig-return-icon">&#x2192;</span> <span class="sig-return-typehint"><span class="pre">Any</span></span></span><a class="headerlink" href="#dogpile.cache.region.CacheRegion.get" title="Permalink to this definition">¶</a></dt>
<dd><p>Return a value.</p>
<div class="deprecated"><p><span class="versionmodified deprecated">Deprecated since version 1.1: </span>Use get_value.</p></div>
</dd></dl>
<dl class="py attribute">
<dt class="sig sig-object py" id="dogpile.cache.region.CacheRegion.backend">
<span class="sig-name descname"><span class="pre">backend</span></span></dt>
<dd></dd></dl>
</dd></dl>
</section>
"""


def test_sphinx5_class_signature_type_default_source_link_stripped() -> None:
    out = one(
        page(SPHINX_5),
        "dogpile.cache.region.CacheRegion",
        "dogpile.cache.region.CacheRegion",
        role="class",
    )
    assert out["signature"] == "class dogpile.cache.region.CacheRegion(name: str = None)"
    assert out["params"] == [
        {
            "name": "name",
            "kind": "positional-or-keyword",
            "type": "str",
            "default": "None",
            "description": "the region name",
        }
    ]
    assert out["doc"].startswith("A front end to a backend.")
    assert "Return a value" not in out["doc"]
    assert "```python\nregion = make_region()\n```" in out["doc_markdown"]
    assert "[source]" not in out["doc_markdown"]


def test_sphinx5_method_return_annotation_and_deprecation() -> None:
    out = one(
        page(SPHINX_5),
        "dogpile.cache.region.CacheRegion.get",
        "dogpile.cache.region.CacheRegion.get",
        role="method",
    )
    assert out["signature"] == "get(key) → Any"
    assert out["returns"] == [{"name": None, "type": "Any", "description": None}]
    assert out["versions"] == [{"kind": "deprecated", "version": "1.1", "text": "Use get_value."}]
    assert out["parent"] == "dogpile.cache.region.CacheRegion"


def test_empty_dd() -> None:
    out = one(
        page(SPHINX_5),
        "dogpile.cache.region.CacheRegion.backend",
        "dogpile.cache.region.CacheRegion.backend",
        role="attribute",
    )
    assert out["status"] == "ok"
    assert out["signature"] == "backend"
    assert out["doc"] == "" and out["doc_markdown"] == ""


def test_section_label_and_module_share_section() -> None:
    body = page(SPHINX_5)
    label, module = extract_page(
        body,
        URL,
        [
            target("region", "std", "label", "region", "Region"),
            target("dogpile.cache.region", "py", "module", "module-dogpile.cache.region", "-"),
        ],
    )
    assert label["title"] == module["title"] == "Region"
    assert "Return a value." in label["doc"]
    assert "Return a value." not in module["doc"]


# -- Sphinx 7.2+: multi-line signatures (dl inside dt), "Link to this definition" -------------

SPHINX_72 = """
<section id="api"><h1>API</h1>
<dl class="py function">
<dt class="sig sig-object py" id="mlopt">
<span class="sig-name descname"><span class="pre">mlopt</span></span><span class="sig-paren">(</span>

<dl>
<dd><em class="sig-param"><span class="n"><span class="pre">aaaa</span></span></em>,</dd>
<dd><em class="sig-param"><span class="n"><span class="pre">bbbb</span></span><span class="p"><span class="pre">:</span></span><span class="w"> </span><span class="n"><span class="pre">int</span></span><span class="w"> </span><span class="o"><span class="pre">=</span></span><span class="w"> </span><span class="default_value"><span class="pre">3</span></span></em>,</dd>
</dl>

<span class="sig-paren">)</span><a class="headerlink" href="#mlopt" title="Link to this definition">¶</a></dt>
<dd><p>The real body.</p>
<div class="versionadded"><p><span class="versionmodified added">Added in version 7.3.</span></p></div>
<div class="versionremoved"><p><span class="versionmodified removed">Removed in version 9.0: </span>Gone.</p></div>
</dd></dl>
</section>
"""


def test_sphinx72_nested_dl_signature_reattached() -> None:
    out = one(page(SPHINX_72), "mlopt", "mlopt")
    assert out["signature"] == "mlopt(aaaa, bbbb: int = 3)"
    assert out["params"] == [
        {
            "name": "aaaa",
            "kind": "positional-or-keyword",
            "type": None,
            "default": None,
            "description": None,
        },
        {
            "name": "bbbb",
            "kind": "positional-or-keyword",
            "type": "int",
            "default": "3",
            "description": None,
        },
    ]
    assert out["doc"].startswith("The real body.")
    assert "aaaa" not in out["doc"]
    assert out["versions"] == [
        {"kind": "added", "version": "7.3", "text": ""},
        {"kind": "removed", "version": "9.0", "text": "Gone."},
    ]


# -- Glossary synonyms, options sharing an anchor, C++ spans/<br>, C params ---------------------

STD_CPP = """
<section id="misc"><h1>Misc</h1>
<dl class="simple glossary">
<dt id="term-Banana">Banana<a class="headerlink" href="#term-Banana" title="Link to this term">¶</a></dt><dt id="term-Plantain">Plantain<a class="headerlink" href="#term-Plantain">¶</a></dt><dd><p>A fruit.</p></dd>
</dl>
<dl class="std option">
<dt class="sig sig-object std" id="cmdoption-prog-h">
<span id="cmdoption-prog-help"></span><span class="sig-name descname"><span class="pre">-h</span></span><span class="sig-prename descclassname"></span>, <span class="sig-name descname"><span class="pre">--help</span></span><span class="sig-prename descclassname"></span><a class="headerlink" href="#cmdoption-prog-h">¶</a></dt>
<dd><p>Show help.</p></dd></dl>
<dl class="cpp function">
<dt class="sig sig-object cpp" id="_CPPv4I0E1fv1T">
<span id="_CPPv3I0E1fv1T"></span><span id="_CPPv2I0E1fv1T"></span><span class="target" id="group__x"></span><span class="k"><span class="pre">template</span></span><span class="p"><span class="pre">&lt;</span></span><span class="k"><span class="pre">typename</span></span><span class="w"> </span><span class="sig-name descname"><span class="n"><span class="pre">T</span></span></span><span class="p"><span class="pre">&gt;</span></span><br /><span class="kt"><span class="pre">void</span></span><span class="w"> </span><span class="sig-name descname"><span class="n"><span class="pre">f</span></span></span><span class="sig-paren">(</span><span class="kt"><span class="pre">int</span></span><span class="w"> </span><span class="n sig-param"><span class="pre">x</span></span>, <span class="k"><span class="pre">const</span></span><span class="w"> </span><span class="kt"><span class="pre">char</span></span><span class="w"> </span><span class="p"><span class="pre">*</span></span><span class="n sig-param"><span class="pre">name</span></span><span class="sig-paren">)</span><a class="headerlink" href="#_CPPv4I0E1fv1T">¶</a><br /></dt>
<dd><p>Does f.</p></dd></dl>
<dl class="c function">
<dt class="sig sig-object c" id="c.PyObject_GetAttr">
<span class="n"><span class="pre">PyObject</span></span><span class="w"> </span><span class="p"><span class="pre">*</span></span><span class="sig-name descname"><span class="n"><span class="pre">PyObject_GetAttr</span></span></span><span class="sig-paren">(</span><span class="n"><span class="pre">PyObject</span></span><span class="w"> </span><span class="p"><span class="pre">*</span></span><span class="n"><span class="pre">o</span></span>, <span class="n"><span class="pre">PyObject</span></span><span class="w"> </span><span class="p"><span class="pre">*</span></span><span class="n"><span class="pre">attr_name</span></span><span class="sig-paren">)</span><a class="headerlink" href="#c.PyObject_GetAttr">¶</a><br /></dt>
<dd><em class="refcount">Return value: New reference.</em><em class="stableabi"> Part of the Stable ABI.</em><p>Retrieve an attribute.</p></dd></dl>
<p id="para-label">A labelled paragraph.</p>
</section>
"""


def test_glossary_synonyms_share_definition() -> None:
    body = page(STD_CPP)
    banana, plantain = extract_page(
        body,
        URL,
        [
            target("Banana", "std", "term", "term-Banana", "-"),
            target("Plantain", "std", "term", "term-Plantain", "-"),
        ],
    )
    assert banana["title"] == "Banana" and plantain["title"] == "Plantain"
    assert banana["doc"] == plantain["doc"] == "A fruit."


def test_option_names_share_one_anchor_and_inner_span() -> None:
    body = page(STD_CPP)
    outs = extract_page(
        body,
        URL,
        [
            target("prog.-h", "std", "cmdoption", "cmdoption-prog-h", "-"),
            target("prog.--help", "std", "cmdoption", "cmdoption-prog-h", "-"),
            target("prog.--help", "std", "cmdoption", "cmdoption-prog-help", "-"),
        ],
    )
    assert [o["signature"] for o in outs] == ["-h, --help"] * 3
    assert all(o["doc"] == "Show help." for o in outs)


def test_cpp_br_lines_joined_and_secondary_ids() -> None:
    body = page(STD_CPP)
    for anchor in ("_CPPv4I0E1fv1T", "_CPPv2I0E1fv1T", "group__x"):
        out = one(body, "f", anchor, "cpp", "function")
        assert out["signature"] == "template<typename T> void f(int x, const char *name)"
        assert out["doc"] == "Does f."
    out = one(body, "f", "_CPPv4I0E1fv1T", "cpp", "function")
    assert out["params"] == [
        {
            "name": "x",
            "kind": "positional-only",
            "type": "int",
            "default": None,
            "description": None,
        },
        {
            "name": "name",
            "kind": "positional-only",
            "type": "const char *",
            "default": None,
            "description": None,
        },
    ]


def test_cpp_template_param_points_at_function() -> None:
    out = one(page(STD_CPP), "f::T", "_CPPv4I0E1fv1T", "cpp", "templateParam")
    assert out["parent"] == "f"
    assert out["doc"] == "Does f."


def test_c_function_and_function_param() -> None:
    body = page(STD_CPP)
    func, param = extract_page(
        body,
        URL,
        [
            target("PyObject_GetAttr", "c", "function", "c.PyObject_GetAttr", "-"),
            target("PyObject_GetAttr.o", "c", "functionParam", "c.PyObject_GetAttr", "-"),
        ],
    )
    assert func["signature"] == "PyObject *PyObject_GetAttr(PyObject *o, PyObject *attr_name)"
    assert [(p["name"], p["type"]) for p in func["params"]] == [
        ("o", "PyObject *"),
        ("attr_name", "PyObject *"),
    ]
    # CPython's annotations are labels, not text (issue 49, 9); a parameter has none.
    assert func["doc"] == "Retrieve an attribute."
    assert func["labels"] == ["refcount:new", "stable-abi"]
    assert param["labels"] == [] and param["doc"] == func["doc"]
    assert param["parent"] == "PyObject_GetAttr"
    assert param["signature"] == func["signature"]


def test_label_on_arbitrary_block() -> None:
    out = one(page(STD_CPP), "para-label", "para-label", "std", "label")
    assert out["doc"] == "A labelled paragraph."
    assert out["title"] == "Misc"


# -- std:doc, anchors missing, themes ---------------------------------------------------------


def test_std_doc_is_whole_main_with_h1_title() -> None:
    out = one(page(SPHINX_5), "api/mod", "", "std", "doc")
    assert out["status"] == "ok"
    assert out["title"] == "Region"
    assert "Return a value." in out["doc"]
    assert "sidebar duplicate" not in out["doc"]


def test_anchor_missing_gets_the_page_introduction_never_the_page() -> None:
    """Nothing to fall back on: the prose before the first object or subsection, never
    the page (docs/items.md, size bounds); this page has none before its class."""
    out = one(page(SPHINX_5), "nope", "does-not-exist")
    assert out["status"] == "anchor_missing"
    assert "does-not-exist" in out["reason"] and "introduction" in out["reason"]
    assert out["doc"] == "" and out["doc_markdown"] == ""
    assert out["title"] == "Region"
    intro = page("<section id='m'><h1>M</h1><p>What M is for.</p>" + SPHINX_5 + "</section>")
    out = one(intro, "nope", "does-not-exist")
    assert out["doc"] == "What M is for." and out["doc_markdown"] == "What M is for."


def test_anchor_missing_case_insensitive_fallback() -> None:
    out = one(page(SPHINX_18), "Apical", "term-Apical", "std", "term")
    assert out["status"] == "anchor_missing"
    assert out["doc"] == "at the top of the plant."


def test_empty_page() -> None:
    [out] = extract_page(b"", URL, [target("x", "py", "function", "x", "-")])
    assert out["status"] == "anchor_missing" and out["doc"] == "" and out["doc_markdown"] == ""


@pytest.mark.parametrize(
    "wrapper",
    [
        # sphinx_rtd_theme: [role=main] also holds breadcrumbs/footer; articleBody is the content
        '<div role="navigation"><a href="#x">nav</a></div><div class="document" role="main" '
        'itemscope="itemscope"><div class="crumbs">Breadcrumbs</div>'
        '<div itemprop="articleBody">{}</div><footer>Footer text</footer></div>',
        # furo
        '<div class="page"><main class="main"><div class="content">'
        '<article role="main" id="furo-main-content">{}</article>'
        '<aside class="toc-drawer">Sidebar text</aside></div></main></div>',
        # pydata / sphinx-book-theme
        '<main id="main-content" class="bd-main" role="main"><div class="bd-sidebar">'
        'Sidebar text</div><article class="bd-article">{}</article></main>',
    ],
)
def test_theme_main_nodes(wrapper: str) -> None:
    body = page(SPHINX_5, wrapper)
    out = one(body, "api/mod", "", "std", "doc")
    assert out["doc"].startswith("Region")
    for noise in ("Breadcrumbs", "Footer text", "Sidebar text"):
        assert noise not in out["doc"]
    meth = one(body, "g", "dogpile.cache.region.CacheRegion.get", role="method")
    assert meth["signature"] == "get(key) → Any"


def test_no_theme_markers_uses_parent_of_first_h1() -> None:
    html = (
        '<html><body><div class="nav">Nav text</div><div class="x">'
        + SPHINX_18
        + "</div></body></html>"
    ).encode()
    out = one(html, "doc", "", "std", "doc")
    assert out["title"] == "json — JSON encoder and decoder"
    assert "Nav text" not in out["doc"]
    assert (
        one(html, "json.dumps", "json.dumps")["signature"] == "json.dumps(obj, *, skipkeys=False)"
    )


def test_furo_duplicate_wrapper_ids_first_match_wins() -> None:
    body = (
        '<div class="table-wrapper docutils container" id="tbl">'
        '<table class="docutils align-default" id="tbl"><tr><td>cell</td></tr></table>'
        "</div>"
    )
    out = one(page(f'<section id="s"><h1>S</h1>{body}</section>'), "tbl", "tbl", "std", "label")
    assert out["doc"] == "cell"
    assert out["doc_markdown"] == "| cell |\n|---|"


# -- numpydoc and napoleon field lists ----------------------------------------------------------

NUMPYDOC = """
<dl class="py function">
<dt class="sig sig-object py" id="np.add">
<span class="sig-prename descclassname"><span class="pre">np.</span></span><span class="sig-name descname"><span class="pre">add</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">x1</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">x2</span></span></em><span class="sig-paren">)</span></dt>
<dd><p>Add arguments element-wise.</p>
<dl class="field-list">
<dt class="field-odd">Paramètres<span class="colon">:</span></dt>
<dd class="field-odd"><dl>
<dt><strong>x1, x2</strong><span class="classifier">array_like</span></dt>
<dd><p>The arrays to be added.</p></dd>
</dl></dd>
<dt class="field-even">Renvoie<span class="colon">:</span></dt>
<dd class="field-even"><dl>
<dt><strong>add</strong><span class="classifier">ndarray or scalar</span></dt>
<dd><p>The sum of x1 and x2.</p></dd>
</dl></dd>
<dt class="field-odd">Lève<span class="colon">:</span></dt>
<dd class="field-odd"><dl>
<dt>ValueError</dt><dd><p>If shapes mismatch.</p></dd>
</dl></dd>
</dl>
<p class="rubric">Notes</p>
<p>Equivalent to x1 + x2.</p>
</dd></dl>
"""


def test_numpydoc_named_return_values_each_keep_their_type() -> None:
    """scipy's curve_fit: "Returns" lists popt and pcov; each is its own entry."""
    body = NUMPYDOC.replace(
        """<dt><strong>add</strong><span class="classifier">ndarray or scalar</span></dt>
<dd><p>The sum of x1 and x2.</p></dd>""",
        """<dt><strong>popt</strong><span class="classifier">array</span></dt>
<dd><p>Optimal values.</p></dd>
<dt><strong>pcov</strong><span class="classifier">2-D array</span></dt>
<dd><p>The estimated covariance.</p></dd>""",
    )
    assert body != NUMPYDOC
    out = one(page(body), "np.add", "np.add")
    assert out["returns"] == [
        {"name": "popt", "type": "array", "description": "Optimal values."},
        {"name": "pcov", "type": "2-D array", "description": "The estimated covariance."},
    ]


def test_numpydoc_nested_dl_fields_translated_labels() -> None:
    out = one(page(NUMPYDOC), "np.add", "np.add")
    assert out["params"] == [
        {
            "name": "x1",
            "kind": "positional-or-keyword",
            "type": "array_like",
            "default": None,
            "description": "The arrays to be added.",
        },
        {
            "name": "x2",
            "kind": "positional-or-keyword",
            "type": "array_like",
            "default": None,
            "description": "The arrays to be added.",
        },
    ]
    assert out["returns"] == [
        {"name": "add", "type": "ndarray or scalar", "description": "The sum of x1 and x2."}
    ]
    assert out["raises"] == [{"type": "ValueError", "description": "If shapes mismatch."}]
    assert "The arrays to be added." in out["doc"]  # numpydoc dls are body, not members
    assert out["doc"].endswith("Equivalent to x1 + x2.")


NAPOLEON_UNKNOWN_LABELS = """
<dl class="py function">
<dt class="sig sig-object py" id="m.f">
<span class="sig-name descname"><span class="pre">f</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">a</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">b</span></span></em><span class="sig-paren">)</span></dt>
<dd><p>Google style, labels in a language the table does not know.</p>
<dl class="field-list simple">
<dt class="field-odd">Parametry<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple">
<li><p><strong>a</strong> (<em>int</em>) – first</p></li>
<li><p><strong>b</strong> (<em>str</em>) – second</p></li></ul></dd>
<dt class="field-even">Zwraca<span class="colon">:</span></dt>
<dd class="field-even"><p>the result</p></dd>
<dt class="field-odd">Typ zwracany<span class="colon">:</span></dt>
<dd class="field-odd"><p><a class="reference external" href="https://x/bool.html"><em>bool</em></a></p></dd>
<dt class="field-even">Wyjątki<span class="colon">:</span></dt>
<dd class="field-even"><p><strong>KeyError</strong> – when missing</p></dd>
</dl>
</dd></dl>
"""


def test_napoleon_fields_detected_by_structure() -> None:
    out = one(page(NAPOLEON_UNKNOWN_LABELS), "m.f", "m.f")
    assert [(p["name"], p["type"], p["description"]) for p in out["params"]] == [
        ("a", "int", "first"),
        ("b", "str", "second"),
    ]
    assert out["returns"] == [{"name": None, "type": "bool", "description": "the result"}]
    assert out["raises"] == [{"type": "KeyError", "description": "when missing"}]


# -- Markdown details ------------------------------------------------------------------------


def test_markdown_lists_admonitions_tables_and_links() -> None:
    body = """<section id="s"><h1>S</h1>
<div class="admonition note"><p class="admonition-title">Note</p><p>Be <strong>careful</strong>.</p>
<p>Really.</p></div>
<ul class="simple"><li><p>one <a class="reference internal" href="../other.html#x"><code class="xref"><span class="pre">x()</span></code></a></p></li>
<li><p>two</p><ol><li>inner</li></ol></li></ul>
<table class="docutils"><thead><tr><th>A</th><th>B</th></tr></thead>
<tbody><tr><td><p>1</p></td><td><p>a|b</p></td></tr></tbody></table>
</section>"""
    md = one(page(body), "s", "s", "std", "label")["doc_markdown"]
    assert md == (
        "# S\n\n"
        "> **Note**\n>\n> Be **careful**.\n>\n> Really.\n\n"
        "- one [`x()`](https://docs.example.org/en/latest/other.html#x)\n"
        "- two\n  1. inner\n\n"
        "| A | B |\n|---|---|\n| 1 | a\\|b |"
    )


def test_encoding_from_meta_and_argument() -> None:
    body = (
        '<html><head><meta charset="iso-8859-1"></head><body><div role="main">'
        '<p id="p">caf\xe9</p></div></body></html>'
    ).encode("latin-1")
    assert one(body, "p", "p", "std", "label")["doc"] == "café"
    raw = '<html><body><div role="main"><p id="p">naïve</p></div></body></html>'.encode()
    assert one(raw, "p", "p", "std", "label")["doc"] == "naïve"  # no meta: UTF-8
    assert (
        extract_page(raw, URL, [target("p", "std", "label", "p", "-")], encoding="utf-8")[0]["doc"]
        == "naïve"
    )


def test_results_follow_target_order_and_share_one_rendering() -> None:
    """Entries at one anchor share its content's values (rendered once); each item gets
    lists of its own when it is built, bounded (tests/unit/test_page_memory.py)."""
    body = page(SPHINX_2)
    targets = [target("json.dumps", "py", "function", "json.dumps", "-")] * 2
    a, b = extract_page(body, URL, targets)
    assert a == b and a is not b
    assert a["params"] is b["params"]


# -- Fast paths (docs/extraction.md, Performance) give the same output as the slow ones -------


def test_anchor_shadowed_by_a_name_and_anchor_outside_main() -> None:
    body = page(
        '<section id="s"><h1>S</h1><p><a name="target">old anchor</a></p>'
        '<p id="target">The real one.</p></section>',
        wrapper='<div class="sphinxsidebar"><p id="side">Sidebar only.</p></div>'
        '<div class="body" role="main">{}</div>',
    )
    shadowed, outside = extract_page(
        body,
        URL,
        [
            target("target", "std", "label", "target", "-"),
            target("side", "std", "label", "side", "-"),
        ],
    )
    assert (shadowed["status"], shadowed["doc"], shadowed["title"]) == ("ok", "The real one.", "S")
    assert (outside["status"], outside["doc"]) == ("ok", "Sidebar only.")


def test_code_block_caption_permalink_stripped_when_sidebar_has_captions_too() -> None:
    body = page(
        '<section id="s"><h1>S</h1><div class="literal-block-wrapper docutils container" id="ex">'
        '<div class="code-block-caption"><span class="caption-text">example.py</span>'
        '<a class="headerlink" href="#ex" title="Link to this code">¶</a></div>'
        '<div class="highlight-python notranslate"><div class="highlight"><pre><span></span>'
        '<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</pre></div>'
        "</div></div></section>",
        wrapper='<div class="sphinxsidebar"><p class="caption" role="heading">'
        '<span class="caption-text">Contents</span></p></div><div class="body" role="main">{}</div>',
    )
    out = one(body, "ex", "ex", "std", "label")
    assert out["title"] == "example.py"
    assert out["doc_markdown"] == "example.py\n\n```python\nx = 1\n```"


BATCH_PARAGRAPHS = [
    'Use <code class="docutils literal"><span class="pre"> spaced </span></code> and '
    '<a class="reference external" href="https://example.org/a?b=1&amp;c=2">ext</a>.',
    'Role <code class="docutils literal"><span class="pre">:ref:`label`</span></code> with '
    "<code><em>nested</em></code> code.",
    'Empty <a class="reference internal" href="#e"></a> then <a href="#f">f</a>.',
    'Next <em>a</em><em>b</em> <a href="../up.html#g"><strong>g</strong></a>, '
    '<a href="mailto:x@y.org">mail</a>, <a href="https://">bare</a>.',
    "line one<br/>line two &amp; &lt;three&gt;",
    "Plain\n   text   only.",
]


def test_page_batch_conversion_matches_paragraph_by_paragraph() -> None:
    """With a std:doc entry every paragraph of the page is converted in one batch; a page
    without one converts each paragraph on its own. Both must give the same Markdown."""
    paragraphs = "".join(f'<p id="p{i}">{html}</p>' for i, html in enumerate(BATCH_PARAGRAPHS))
    body = page(f'<section id="s"><h1>Inline <code>x</code></h1>{paragraphs}</section>')
    labels = [target(f"p{i}", "std", "label", f"p{i}", "-") for i in range(len(BATCH_PARAGRAPHS))]
    alone = extract_page(body, URL, labels)
    doc, *batched = extract_page(body, URL, [target("mod", "std", "doc", "", "-"), *labels])
    assert batched == alone
    assert [p["doc_markdown"] for p in alone] == [
        "Use ` spaced ` and [ext](https://example.org/a?b=1&c=2).",
        "Role `` :ref:`label` `` with `nested` code.",
        "Empty [ then f](https://docs.example.org/en/latest/api/mod.html#e).",
        "Next *ab* [**g**](https://docs.example.org/en/latest/up.html#g), "
        "[mail](mailto:x@y.org), [bare](https://docs.example.org/en/latest/api/mod.html).",
        "line one  \nline two & <three>",
        "Plain text only.",
    ]
    assert doc["doc_markdown"] == "\n\n".join(["# Inline `x`", *(p["doc_markdown"] for p in alone)])


def test_object_doc_text_separates_glued_blocks_and_leaves_out_members() -> None:
    body = page(
        '<section id="m"><h1>M</h1>'
        '<dl class="c function"><dt class="sig" id="c.f"><span class="sig-name">f</span>()'
        '<a class="headerlink" href="#c.f">¶</a></dt>'
        '<dd><em class="refcount">Return value: New reference.</em><p>Does f.</p>\n'
        "<p>Second.</p>\n</dd></dl>\n"
        '<dl class="py class"><dt class="sig" id="m.K"><span class="sig-name">K</span></dt>'
        '<dd>\n<p>A class.</p>\n<dl class="py method"><dt class="sig" id="m.K.g">'
        '<span class="sig-name">g</span>()</dt><dd><p>Method g.</p></dd></dl>\n'
        "<p>Tail text.</p>\n</dd></dl></section>"
    )
    f, k, g, doc = extract_page(
        body,
        URL,
        [
            target("c.f", "c", "function", "c.f", "-"),
            target("m.K", "py", "class", "m.K", "-"),
            target("m.K.g", "py", "method", "m.K.g", "-"),
            target("m", "std", "doc", "", "-"),
        ],
    )
    assert f["doc"] == "Does f. Second." and f["labels"] == ["refcount:new"]
    assert (k["doc"], k["doc_markdown"]) == ("A class. Tail text.", "A class.\n\nTail text.")
    assert (g["doc"], g["parent"]) == ("Method g.", "m.K")
    assert doc["doc"] == ("Mf()Does f. Second. K A class. g()Method g. Tail text.")
    assert doc["doc_markdown"] == (
        "# M\n\n`f()`\n\nDoes f.\n\nSecond.\n\n`K`\n\nA class.\n\n`g()`\n\nMethod g.\n\nTail text."
    )


def test_markdown_toctree_list_with_code_block_and_ordered_start() -> None:
    body = page(
        '<section id="l"><h1>L</h1><div class="toctree-wrapper compound"><ul>\n'
        '<li class="toctree-l1"><a class="reference internal" href="a.html">A &amp; B</a><ul>\n'
        '<li class="toctree-l2"><a class="reference internal" href="a.html#x">X</a></li>\n</ul>\n'
        '</li>\n<li class="toctree-l1"><a class="reference internal" href="../b/c.html">C</a></li>\n'
        '</ul></div><ol start="3"><li><p>three</p></li><li><p>four <code>4</code></p>'
        '<div class="highlight-default notranslate"><div class="highlight"><pre>code\n</pre></div>'
        '</div></li></ol><ul class="simple"><li><p></p></li><li><p>kept</p></li></ul></section>'
    )
    assert one(body, "l", "l", "std", "label")["doc_markdown"] == (
        "# L\n\n- [A & B](https://docs.example.org/en/latest/api/a.html)\n"
        "  - [X](https://docs.example.org/en/latest/api/a.html#x)\n"
        "- [C](https://docs.example.org/en/latest/b/c.html)\n\n"
        "3. three\n4. four `4`\n\n   ```python\n   code\n   ```\n\n- kept"
    )
