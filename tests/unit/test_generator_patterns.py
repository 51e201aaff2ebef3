# ruff: noqa: E501  (the HTML snippets are verbatim generator output, one line per element)
"""Issue 49's markup patterns of mkdocstrings and pydoctor, each as the generator version
that writes it does (snippets from the pattern sites of tests/sites/patterns_build.py),
and the item fields they give: sections of older templates, no facts from prose, no
table chrome in the plain doc, inherited members and aliases, doc-only parameters; and
what show and diff make of the new fields."""

from __future__ import annotations

from typing import Any

from unit.test_mkdocstrings import URL, module, obj, one, page

from invcrawl.common.apidiff.diff import item_changes
from invcrawl.common.extract import extract_page
from support.targets import target

PD_HEAD = '<meta name="generator" content="pydoctor 23.9.1">'


def test_python_1_1_list_layout_and_no_facts_from_prose() -> None:
    """``<p>Parameters:</p>`` and ``li.field-body`` (mkdocstrings-python 1.1); a plain
    Markdown ``**Parameters:**`` list whose description names ``True`` and ``False``."""
    sections = """<p>The area.</p><p>Parameters:</p><ul>
      <li class="field-body"><b>shape</b> (<code><a class="autorefs autorefs-internal" href="#m.Shape">Shape</a></code>) – <div class="doc-md-description"><p>The shape.</p></div></li>
      <li class="field-body"><b>precision</b> – <div class="doc-md-description"><p>Digits.</p></div></li></ul>
      <p>Returns:</p><ul><li class="field-body"><code>float</code> – <div class="doc-md-description"><p>The area.</p></div></li></ul>
      <p><strong>Parameters:</strong></p><ul><li><strong>verify</strong> - <em>(optional)</em> Either <code>True</code> to use the default bundle, <code>False</code> to skip.</li></ul>"""
    heading = (
        '<code class="highlight language-python">area(shape: Shape, *, verify) -&gt; float</code>'
    )
    content = one(obj("m.area", heading, sections), "m.area")
    params = {p["name"]: p for p in content["params"]}
    assert params["shape"]["type"] == "Shape" and params["shape"]["description"] == "The shape."
    assert (params["verify"]["type"], params["verify"]["default"]) == (None, None)
    assert params["verify"]["description"].startswith("(optional) Either True")
    assert content["doc_only_params"] == [{"name": "precision", "description": "Digits."}]
    assert content["returns"] == [{"name": None, "type": "float", "description": "The area."}]


def test_separate_signature_in_a_plain_highlight_block() -> None:
    """mkdocstrings 0.22 with ``separate_signature``: a ``pre.highlight`` between the
    heading and the contents, no ``doc-signature`` class."""
    heading = '<span class="doc doc-object-name doc-function-name">naturaldate</span>'
    signature = '<pre class="highlight"><code class="language-python">naturaldate(value: dt.date | dt.datetime) -&gt; str</code></pre>'
    content = one(
        obj("m.naturaldate", heading, "<p>A date.</p>", signature=signature), "m.naturaldate"
    )
    assert content["signature"] == "naturaldate(value: dt.date | dt.datetime) -> str"
    assert [p["name"] for p in content["params"]] == ["value"]
    assert content["returns"][0]["type"] == "str"


def test_spacy_layout_of_python_1_8_and_no_column_headings_in_the_doc() -> None:
    spacy = """<p>Roll.</p><table><thead><tr><th><b>PARAMETER</b></th><th><b> DESCRIPTION</b></th></tr></thead><tbody>
      <tr><td><code>distance</code></td><td class="doc-param-details"><div class="doc-md-description"><p>How far.</p></div>
      <p><span class="doc-param-annotation"><b>TYPE:</b> <code>float</code></span></p></td></tr></tbody></table>"""
    heading = '<code class="highlight language-python">roll(distance)</code>'
    content = one(obj("m.roll", heading, spacy), "m.roll")
    assert content["params"][0]["type"] == "float"
    assert content["params"][0]["description"] == "How far."
    assert "DESCRIPTION" not in content["doc"] and content["doc"].startswith("Roll. PARAMETER")
    table = """<p>Describe.</p><p><span class="doc-section-title">Parameters:</span></p><table><thead><tr><th>Name</th> <th>Type</th> <th>Description</th> <th>Default</th></tr></thead>
      <tbody><tr><td><code>verbose</code></td> <td><code>bool</code></td> <td><div class="doc-md-description"><p>Say more.</p></div></td> <td><code>False</code></td></tr></tbody></table>"""
    content = one(
        obj("m.describe", '<code class="highlight">describe(verbose=False)</code>', table),
        "m.describe",
    )
    assert content["doc"] == "Describe. Parameters: verbose bool Say more. False"
    assert "| Name | Type |" in content["doc_markdown"]  # a Markdown table keeps its header


def test_consecutive_version_directives_and_category_headings() -> None:
    notes = "<p>Noted.</p><p>.. versionadded:: 1.0\n.. versionchanged:: 1.1\nFaster.\n.. deprecated:: 2.0</p>"
    member = obj("m.noted", '<code class="highlight">noted()</code>', notes, level=3)
    body = module("m", "<p>The module.</p>", '<h2 id="m-functions">Functions</h2>' + member)
    (mod, noted) = extract_page(
        page(body),
        URL,
        [target("m", "py", "module", "m"), target("m.noted", "py", "function", "m.noted")],
    )
    assert mod["doc"] == "The module."
    assert [(v["kind"], v["version"], v["text"]) for v in noted["versions"]] == [
        ("added", "1.0", ""), ("changed", "1.1", "Faster."), ("deprecated", "2.0", "")
    ]  # fmt: skip


def _class_page(members: str) -> str:
    return obj(
        "pkg.Shape",
        "<code>Shape</code>",
        f'<p>A shape.</p><div class="doc doc-children">{members}</div>',
        kind="class",
    )


def test_inherited_members_under_the_class_asked_for_and_aliases() -> None:
    """``pkg.Circle.describe`` listed at ``#pkg.Shape.describe`` (mkdocstrings 0.24 to 1.x);
    ``pkg.area`` at ``#pkg.shapes.area``."""
    member = obj(
        "pkg.Shape.describe",
        '<code class="highlight">describe()</code>',
        "<p>Describe.</p>",
        level=3,
    )
    area = obj("pkg.shapes.area", '<code class="highlight">area()</code>', "<p>The area.</p>")
    entries = [
        target("pkg.Shape.describe", "py", "function", "pkg.Shape.describe"),
        target("pkg.Circle.describe", "py", "function", "pkg.Shape.describe"),
        target("pkg.area", "py", "function", "pkg.shapes.area"),
        target("pkg.shapes.area", "py", "function", "pkg.shapes.area"),
    ]
    own, inherited, alias, target_ = extract_page(page(_class_page(member) + area), URL, entries)
    assert (own["parent"], "inherited_from" in own) == ("pkg.Shape", False)
    assert (inherited["parent"], inherited["inherited_from"]) == ("pkg.Circle", "pkg.Shape")
    assert inherited["doc"] == own["doc"] == "Describe."
    assert (alias["parent"], alias["alias_of"]) == ("pkg", "pkg.shapes.area")
    assert "alias_of" not in target_ and "inherited_from" not in target_


def _pydoctor(body: str) -> bytes:
    return f"<html><head>{PD_HEAD}</head><body><main>{body}</main></body></html>".encode()


def test_pydoctor_class_page_merges_the_class_docstring_and_links_in_types() -> None:
    page_ = _pydoctor(
        '<div class="page-header"><h1>pdpat.bars.Bar</h1></div><div class="extrasDocstring"></div>'
        '<div class="moduleDocstring"><div><p>A bar.</p><table class="fieldTable">'
        '<tr class="fieldStart"><td class="fieldName" colspan="2">Parameters</td></tr>'
        '<tr><td class="fieldArgContainer"><span class="fieldArg">size</span></td><td class="fieldArgDesc">The size.</td></tr>'
        '<tr><td class="fieldArgContainer"><span class="fieldArg">colour</span></td><td class="fieldArgDesc">Gone.</td></tr>'
        '<tr class="fieldStart"><td class="fieldName" colspan="2">Raises</td></tr>'
        '<tr><td class="fieldArgContainer"><code>ValueError</code></td><td class="fieldArgDesc">When negative.</td></tr></table></div></div>'
        '<div class="baseMethod"><a name="pdpat.bars.Bar.__init__"></a><a name="__init__"></a>'
        '<div class="functionHeader"><span class="py-keyword">def</span> <span class="py-defname">__init__</span>(self, size: <code>int</code>, seg: <code>Optional[<a href="x.html">Segment</a>]</code>):</div>'
        '<div class="docstring functionBody"><div><table class="fieldTable"><tr class="fieldStart"><td class="fieldName" colspan="2">Parameters</td></tr>'
        '<tr><td class="fieldArgContainer"><span class="fieldArg">seg:</span><code>Optional[<a href="x.html">Segment</a>]</code></td><td class="fieldArgDesc"><span class="undocumented">Undocumented</span></td></tr></table></div></div></div>'
    )
    bar, init = extract_page(
        page_, "https://pd.test/pdpat.bars.Bar.html",
        [target("pdpat.bars.Bar", "py", "class", ""), target("pdpat.bars.Bar.__init__", "py", "method", "__init__")],
    )  # fmt: skip
    assert [(p["name"], p["description"]) for p in bar["params"]] == [
        ("size", "The size."),
        ("seg", None),
    ]
    assert bar["doc_only_params"] == [{"name": "colour", "description": "Gone."}]
    assert bar["raises"] == [{"type": "ValueError", "description": "When negative."}]
    assert (
        "`Optional[Segment]`" in init["doc_markdown"] and "[Segment](" not in init["doc_markdown"]
    )


def _item(params: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {"status": "ok", "signature": "f(a)", "params": params, "returns": [], "raises": [],
            "versions": [], "doc": "", "labels": [], **more}  # fmt: skip


def test_diff_reads_a_doc_only_parameter_of_an_older_crawl_as_no_change() -> None:
    a = {
        "name": "a",
        "kind": "positional-or-keyword",
        "type": None,
        "default": None,
        "description": None,
    }
    ghost = {"name": "b", "kind": None, "type": None, "default": None, "description": "Gone."}
    old = _item([a, ghost])
    new = _item([a], doc_only_params=[{"name": "b", "description": "Gone."}])
    assert item_changes(old, new) == []  # type: ignore[arg-type]
    assert item_changes(old, _item([a])) != []  # type: ignore[arg-type]  (a real removal)


def test_show_says_inherited_from_alias_of_and_doc_only_names() -> None:
    from invcrawl.symbol_cmds import _item_text

    item = _item([], name="pkg.Circle.describe", key="py:method:pkg.Circle.describe",
                 inherited_from="pkg.Shape", doc_only_params=[{"name": "b", "description": None}])  # fmt: skip
    text = _item_text(item, "P 1")
    assert "  inherited from pkg.Shape" in text.splitlines()
    assert "  documented, not in the signature: b" in text.splitlines()
    assert "alias of" not in text


def test_matlab_handler_sections() -> None:
    """mkdocstrings-matlab: "Input arguments:" and "Output arguments:" sections; a root
    object shown without a heading has no signature, so its arguments are its params."""
    contents = """<p>ADDTWO Add two numbers.</p>
      <p><span class="doc-section-title">Input arguments:</span></p><table><thead><tr><th>Name</th> <th>Type</th> <th>Description</th> <th>Default</th></tr></thead>
      <tbody><tr class="doc-section-item"><td><code>a</code></td> <td></td> <td><div class="doc-md-description"><p>The first.</p></div></td> <td><em>required</em></td></tr></tbody></table>
      <p><span class="doc-section-title">Output arguments:</span></p><table><thead><tr><th>Name</th> <th>Type</th> <th>Description</th></tr></thead>
      <tbody><tr class="doc-section-item"><td><code>c</code></td> <td></td> <td><div class="doc-md-description"><p>The sum.</p></div></td></tr></tbody></table>"""
    body = f'<div class="doc doc-object doc-function"><a id="addtwo"></a><div class="doc doc-contents first">{contents}</div></div>'
    content = one(body, "addtwo")
    assert [(p["name"], p["kind"], p["description"]) for p in content["params"]] == [
        ("a", None, "The first.")
    ]
    assert content["returns"] == [{"name": "c", "type": None, "description": "The sum."}]
    assert content["doc"] == (
        "ADDTWO Add two numbers. Input arguments: a The first. required Output arguments: c The sum."
    )
