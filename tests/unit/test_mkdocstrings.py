# ruff: noqa: E501  (the HTML snippets are verbatim mkdocstrings output, one line per element)
"""mkdocstrings pages (common/extract/mkdocstrings/): each markup shape of the Python
handler's templates, as mkdocstrings 1.x / mkdocstrings-python 2.x and the legacy handler
write it (snippets copied from pages built by tests/sites/mkbuild.py), into every field."""

from __future__ import annotations

from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.extract.generators import Generator, detect_generator
from invcrawl.common.extract.parsing import parse
from support.markdown_check import stray_markers
from support.targets import target

URL = "https://mk.test/api/core/"
HEAD = '<meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.6.23">'


def page(body: str, head: str = HEAD) -> bytes:
    return (
        f"<!DOCTYPE html><html><head>{head}</head><body>"
        '<nav class="md-nav"><a href="/">Home</a> Cannot search</nav>'
        f'<main class="md-main"><article class="md-content__inner md-typeset">{body}</article>'
        "</main></body></html>"
    ).encode()


def one(body: str, name: str, role: str = "function", anchor: str | None = None) -> dict[str, Any]:
    (content,) = extract_page(
        page(body), URL, [target(name, "py", role, name if anchor is None else anchor)]
    )
    assert content["generator"] == "mkdocstrings"
    return content


def obj(
    ident: str,
    heading: str,
    contents: str,
    *,
    kind: str = "function",
    level: int = 2,
    signature: str = "",
) -> str:
    return (
        f'<div class="doc doc-object doc-{kind}"><h{level} id="{ident}" class="doc doc-heading">'
        f'<code class="doc-symbol doc-symbol-heading doc-symbol-{kind}"></code>{heading}'
        f'<a href="#{ident}" class="headerlink" title="Permanent link">&para;</a></h{level}>'
        f'{signature}<div class="doc doc-contents ">{contents}</div></div>'
    )


def module(ident: str, contents: str, children: str) -> str:
    return (
        f'<h1 id="core-api">Core API</h1><div class="doc doc-object doc-module">'
        f'<a id="{ident}"></a><div class="doc doc-contents first">{contents}'
        f'<div class="doc doc-children">{children}</div></div></div>'
    )


TABLE_PARAMS = """
<p><span class="doc-section-title">Parameters:</span></p>
<table><thead><tr><th>Name</th><th>Type</th><th>Description</th><th>Default</th></tr></thead>
<tbody>
<tr class="doc-section-item"><td><code>a</code></td><td><code><span title="int">int</span></code></td>
<td><div class="doc-md-description"><p>The first operand.</p></div></td><td><em>required</em></td></tr>
<tr class="doc-section-item"><td><code>b</code></td><td><code>int</code></td>
<td><div class="doc-md-description"><p>The second operand.</p></div></td><td><code>2</code></td></tr>
</tbody></table>
<p><span class="doc-section-title">Returns:</span></p>
<table><thead><tr><th>Type</th><th>Description</th></tr></thead><tbody>
<tr class="doc-section-item"><td><code>int</code></td><td><div class="doc-md-description"><p>The sum.</p></div></td></tr>
</tbody></table>
<p><span class="doc-section-title">Raises:</span></p>
<table><thead><tr><th>Type</th><th>Description</th></tr></thead><tbody>
<tr class="doc-section-item"><td><code>OverflowError</code></td><td><div class="doc-md-description"><p>Too big.</p></div></td></tr>
</tbody></table>
"""
HIGHLIGHTED = (
    '<code class="highlight language-python"><span class="n">add</span><span class="p">(</span>'
    '<span class="n">a</span><span class="p">:</span> <span class="nb">int</span>, '
    '<span class="n">b</span>: int <span class="o">=</span> <span class="mi">2</span>'
    '<span class="p">)</span> <span class="o">-&gt;</span> int</code>'
)


def test_signature_in_the_heading_and_the_section_tables() -> None:
    content = one(obj("m.add", HIGHLIGHTED, "<p>Add two integers.</p>" + TABLE_PARAMS), "m.add")
    assert content["signature"] == "add(a: int, b: int = 2) -> int"
    assert content["params"] == [
        {"name": "a", "kind": "positional-or-keyword", "type": "int", "default": None,
         "description": "The first operand."},
        {"name": "b", "kind": "positional-or-keyword", "type": "int", "default": "2",
         "description": "The second operand."},
    ]  # fmt: skip
    assert content["returns"] == [{"name": None, "type": "int", "description": "The sum."}]
    assert content["raises"] == [{"type": "OverflowError", "description": "Too big."}]
    assert content["doc"].startswith("Add two integers. Parameters:")
    assert "add(" not in content["doc"] and "\u00b6" not in content["doc_markdown"]
    assert "| `a` | `int` | The first operand. | *required* |" in content["doc_markdown"]
    assert content["parent"] == "m" and content["title"] is None and content["labels"] == []


def test_separate_signature_over_several_lines_and_the_list_layout() -> None:
    signature = (
        '<div class="doc-signature highlight"><pre><span></span><code>every_kind(\n'
        "    source: str,\n    /,\n    target: str,\n    *extra: int,\n"
        "    strict: bool = False,\n    **options: Any,\n) -&gt; dict[str, Any]\n</code></pre></div>"
    )
    sections = """<p><span class="doc-section-title">Parameters:</span></p><ul>
    <li class="doc-section-item field-body"><b><code>source</code></b> (<code>str</code>) –
      <div class="doc-md-description"><p>Where from.</p></div></li>
    <li class="doc-section-item field-body"><b><code>*extra</code></b>
      (<code>int</code>, default: <code>()</code>) – <div class="doc-md-description"><p>More.</p></div></li>
    <li class="doc-section-item field-body"><b><code>strict</code></b>
      (<code>bool</code>, default: <code>False</code>) – <div class="doc-md-description"><p>Fail.</p></div></li>
    <li class="doc-section-item field-body"><b><code>undocumented_in_signature</code></b>
      (<code>int</code>) – <div class="doc-md-description"><p>Extra.</p></div></li>
    </ul><p><span class="doc-section-title">Returns:</span></p><ul>
    <li class="doc-section-item field-body"><code>dict</code> – <div class="doc-md-description"><p>Done.</p></div></li></ul>"""
    heading = '<span class="doc doc-object-name doc-function-name">every_kind</span>'
    content = one(obj("m.every_kind", heading, "<p>Take all.</p>" + sections, signature=signature),
                  "m.every_kind")  # fmt: skip
    assert content["signature"] == (
        "every_kind(source: str, /, target: str, *extra: int, strict: bool = False, "
        "**options: Any) -> dict[str, Any]"
    )
    kinds = [(p["name"], p["kind"]) for p in content["params"]]
    assert kinds == [
        ("source", "positional-only"),
        ("target", "positional-or-keyword"),
        ("*extra", "var-positional"),
        ("strict", "keyword-only"),
        ("**options", "var-keyword"),
    ]
    # a documented name the signature lacks is no parameter of the call (issue 49, 7)
    assert content["doc_only_params"] == [
        {"name": "undocumented_in_signature", "description": "Extra."}
    ]
    by_name = {p["name"]: p for p in content["params"]}
    assert by_name["*extra"]["default"] is None  # griffe's "()" is no default
    assert (
        by_name["strict"]["default"] == "False"
        and by_name["source"]["description"] == "Where from."
    )
    assert content["returns"] == [{"name": None, "type": "dict", "description": "Done."}]


def test_spacy_layout() -> None:
    sections = """<table><thead><tr><th><span class="doc-section-title">PARAMETER</span></th>
    <th><span>DESCRIPTION</span></th></tr></thead><tbody><tr class="doc-section-item">
    <td><code>limit</code></td><td class="doc-param-details"><div class="doc-md-description">
    <p>At most this many.</p></div><p><span class="doc-param-annotation"><b>TYPE:</b>
    <code>int | None</code></span><span class="doc-param-default"><b>DEFAULT:</b>
    <code>None</code></span></p></td></tr></tbody></table>
    <table><thead><tr><th><span class="doc-section-title">RAISES</span></th><th>DESCRIPTION</th>
    </tr></thead><tbody><tr class="doc-section-item"><td><span class="doc-raises-annotation">
    <code>PermissionError</code></span></td><td class="doc-raises-details">
    <div class="doc-md-description"><p>Cannot read.</p></div></td></tr></tbody></table>"""
    signature = '<pre class="highlight"><code class="language-python doc-signature">read(limit=None)</code></pre>'
    content = one(obj("m.read", '<span class="doc-object-name">read</span>', "<p>Read.</p>" + sections,
                      signature=signature), "m.read")  # fmt: skip
    assert content["signature"] == "read(limit=None)"
    assert content["params"] == [
        {"name": "limit", "kind": "positional-or-keyword", "type": "int | None",
         "default": "None", "description": "At most this many."}
    ]  # fmt: skip
    assert content["raises"] == [{"type": "PermissionError", "description": "Cannot read."}]


def test_readthedocs_field_list_layout() -> None:
    sections = """<table class="field-list"><tbody><tr class="field"><th class="field-name">Parameters:</th>
    <td class="field-body"><ul class="first simple"><li><b><code>a</code></b> (<code>int</code>) –
    <div class="doc-md-description"><p>First.</p></div></li></ul></td></tr></tbody></table>"""
    heading = '<code class="highlight language-python">f(a: int)</code>'
    content = one(obj("m.f", heading, "<p>F.</p>" + sections), "m.f")
    assert content["params"][0] == {"name": "a", "kind": "positional-or-keyword", "type": "int",
                                    "default": None, "description": "First."}  # fmt: skip


def test_legacy_templates() -> None:
    """mkdocstrings-python-legacy: the class heading's code holds its bases, labels are
    ``doc-property`` badges, sections are ``dl``s."""
    method = """<div class="doc doc-object doc-method"><h3 id="m.W.resize" class="doc doc-heading">
    <code class="highlight language-python">resize(self, width, *, keep=False)</code>
    <span class="doc doc-properties"><small class="doc doc-property doc-property-async"><code>async</code></small></span>
    </h3><div class="doc doc-contents "><p>Resize.</p>
    <dl><dt>Parameters:</dt><dd><p><strong>width:</strong> <code>int</code> – The width.</p></dd>
    <dd><p><strong>keep:</strong> <code>bool</code> – Keep it.</p></dd></dl>
    <dl><dt>Exceptions:</dt><dd><p><code>ValueError</code>: If negative.</p></dd></dl>
    </div></div>"""
    klass = f"""<div class="doc doc-object doc-class"><h2 id="m.W" class="doc doc-heading">
    <code>\nW            (<span title="m.Base">Base</span>)\n</code></h2>
    <div class="doc doc-contents "><p>A widget.</p><div class="doc doc-children">{method}</div></div></div>"""
    body = page(klass)
    targets = [
        target("m.W", "py", "class", "m.W"),
        target("m.W.resize", "py", "method", "m.W.resize"),
    ]
    cls, meth = extract_page(body, URL, targets)
    assert cls["signature"] == "W(Base)" and cls["params"] == []
    assert cls["doc"] == "A widget." and "Resize" not in cls["doc_markdown"]
    assert meth["signature"] == "resize(self, width, *, keep=False)"
    assert meth["labels"] == ["async"] and meth["parent"] == "m.W"
    assert [(p["name"], p["kind"], p["type"]) for p in meth["params"]] == [
        ("self", "positional-or-keyword", None),
        ("width", "positional-or-keyword", "int"),
        ("keep", "keyword-only", "bool"),
    ]
    assert meth["raises"] == [{"type": "ValueError", "description": "If negative."}]


def test_labels_are_facts_not_signature_text() -> None:
    heading = (
        '<code class="highlight language-python">label: str</code><span class="doc doc-labels">'
        '<small class="doc doc-label doc-label-property"><code>property</code></small>'
        '<small class="doc doc-label doc-label-writable"><code>writable</code></small>'
        '<small class="doc doc-label doc-label-cached"><code>cached</code></small></span>'
    )
    content = one(obj("m.W.label", heading, "<p>The label.</p>", kind="attribute"), "m.W.label",
                  "property")  # fmt: skip
    assert content["signature"] == "label: str"
    assert content["labels"] == ["property", "writable", "cached_property"]
    assert content["params"] == [] and content["returns"] == []


def test_a_container_holds_neither_its_members_nor_their_headings() -> None:
    member = obj("m.W.area", '<code class="highlight">area() -&gt; int</code>',
                 "<p>The area in square pixels.</p>", level=3)  # fmt: skip
    klass = (
        '<div class="doc doc-object doc-class"><h2 id="m.W" class="doc doc-heading"><code>W</code></h2>'
        '<div class="doc doc-contents "><p class="doc doc-class-bases">Bases: <code>Base</code></p>'
        "<p>A widget.</p>"
        '<details class="quote"><summary>Source code in <code>m.py</code></summary><pre>class W: ...</pre></details>'
        f'<div class="doc doc-children">{member}</div></div></div>'
    )
    body = page(module("m", "<p>The module.</p>", klass))
    targets = [
        target("m", "py", "module", "m"),
        target("m.W", "py", "class", "m.W"),
        target("m.W.area", "py", "method", "m.W.area"),
    ]
    mod, cls, area = extract_page(body, URL, targets)
    assert mod["doc"] == "The module." and mod["title"] == "Core API" and mod["signature"] is None
    assert cls["doc"] == "A widget." and cls["doc_markdown"] == "A widget."
    assert cls["parent"] == "m" and area["parent"] == "m.W"
    assert area["doc"] == "The area in square pixels." and area["returns"][0]["type"] == "int"


def test_version_admonitions_and_directives() -> None:
    contents = (
        "<p>Sum the old way.</p>"
        '<details class="deprecated" open><summary>Deprecated</summary>'
        "<p>Deprecated since version 1.4: call add instead.</p></details>"
        '<div class="admonition note"><p class="admonition-title">Added in version 1.2</p>'
        "<p>The start parameter.</p></div>"
        '<div class="admonition warning"><p class="admonition-title">Changed the defaults</p>'
        "<p>No version here.</p></div>"
        "<p>.. versionchanged:: 2.0\n    Faster.</p>"
    )
    content = one(obj("m.old", '<code class="highlight">old()</code>', contents), "m.old")
    assert content["versions"] == [
        {"kind": "deprecated", "version": "1.4", "text": "call add instead."},
        {"kind": "added", "version": "1.2", "text": "The start parameter."},
        {"kind": "changed", "version": "2.0", "text": "Faster."},
    ]
    assert "> **Deprecated**" in content["doc_markdown"]
    assert not stray_markers(content["doc"], content["doc_markdown"])


def test_a_cross_reference_in_a_code_span_renders_as_a_link() -> None:
    contents = (
        '<p>Returns: <code><a class="autorefs autorefs-internal" href="#m.Options">Options</a></code>'
        ' or <code>dict[<a href="#m.K">K</a>, int]</code></p>'
    )
    content = one(obj("m.f", '<code class="highlight">f()</code>', contents), "m.f")
    assert "[`Options`](https://mk.test/api/core/#m.Options)" in content["doc_markdown"]
    assert "`dict[K, int]`" in content["doc_markdown"]


def test_plain_markdown_pages_headings_and_the_whole_page() -> None:
    body = page(
        '<h1 id="guide">User guide</h1><p>Intro.</p>'
        '<h2 id="widgets">Widgets<a class="headerlink" href="#widgets">&para;</a></h2>'
        '<p>Widgets are rectangles.</p><h3 id="sizes">Sizes</h3><p>In pixels.</p>'
        '<h2 id="matrices">Matrices</h2><p>Numbers.</p>'
    )
    targets = [
        target("guide", "std", "doc", ""),
        target("widgets", "std", "label", "widgets"),
        target("gone", "std", "label", "gone"),
    ]
    whole, widgets, gone = extract_page(body, "https://mk.test/guide/", targets)
    assert whole["title"] == "User guide" and "Numbers." in whole["doc"]
    assert "Cannot search" not in whole["doc"]  # never the navigation
    assert widgets["title"] == "Widgets"
    assert widgets["doc"] == "Widgets are rectangles. Sizes In pixels."
    assert gone["status"] == "anchor_missing" and gone["doc"] == "Intro."


@pytest.mark.parametrize(
    ("head", "body"),
    [
        ('<link href="../assets/_mkdocstrings.css" rel="stylesheet">', "<h1>Guide</h1>"),
        ('<script>var mkdocs_page_name = "Guide";</script>', "<h1>Guide</h1>"),
        (
            "<title>t</title>",
            '<a href="#" class="nav-link" data-bs-toggle="modal" '
            'data-bs-target="#mkdocs_search_modal">Search</a><div role="main"><h1 id="g">G'
            '<a class="headerlink" href="#g">#</a></h1></div>',
        ),
    ],
)
def test_mkdocs_themes_without_a_generator_meta(head: str, body: str) -> None:
    root = parse(f"<html><head>{head}</head><body>{body}</body></html>".encode())
    assert detect_generator(root) is Generator.MKDOCSTRINGS


def test_deeply_nested_members_stay_linear_and_whole() -> None:
    """80 classes nested in each other (libxml2 keeps 256 levels of elements, three a
    class): each doc its own text, each parent the class around it."""
    html = ""
    for depth in reversed(range(80)):
        html = obj(f"m.C{depth}", f"<code>C{depth}</code>",
                   f'<p>Class {depth}.</p><div class="doc doc-children">{html}</div>',
                   kind="class", level=min(6, 2 + depth))  # fmt: skip
    targets = [target(f"m.C{d}", "py", "class", f"m.C{d}") for d in range(80)]
    contents = extract_page(page(html), URL, targets)
    assert [c["doc"] for c in contents] == [f"Class {d}." for d in range(80)]
    assert contents[79]["parent"] == "m.C78"


def test_parameter_headings_and_their_own_entries() -> None:
    """``parameter_headings: true`` (griffe's own docs): each parameter's name is a heading
    inside its list item, with an inventory entry of its own."""
    sections = """<p><span class="doc-section-title">Parameters:</span></p><ul>
    <li class="doc-section-item field-body">
    <h3 id="m.parse(docstring)" class="doc doc-heading doc-heading-parameter"><b><code>docstring</code></b>
    <a href="#m.parse(docstring)" class="headerlink" title="Permanent link">¤</a></h3>
    (<code><a class="autorefs autorefs-internal" href="#m.Docstring">Docstring</a></code>) –
    <div class="doc-md-description"><p>The docstring to parse.</p></div></li></ul>"""
    signature = '<div class="doc-signature highlight"><pre><code>parse(docstring: Docstring) -&gt; list</code></pre></div>'
    body = page(obj("m.parse", '<span class="doc doc-object-name">parse</span>', "<p>Parse.</p>" + sections,
                    signature=signature))  # fmt: skip
    targets = [
        target("m.parse", "py", "function", "m.parse"),
        target("m.parse(docstring)", "py", "parameter", "m.parse(docstring)"),
    ]
    function, parameter = extract_page(body, URL, targets)
    assert function["params"][0]["description"] == "The docstring to parse."
    assert "###" not in function["doc_markdown"]
    assert (
        "- **`docstring`** ([`Docstring`](https://mk.test/api/core/#m.Docstring))"
        in function["doc_markdown"]
    )
    assert parameter["parent"] == "m.parse" and parameter["title"] == "docstring"
    assert parameter["doc"] == "The docstring to parse."
    assert parameter["params"] == [function["params"][0]] and parameter["signature"] is None


def test_missing_anchors_share_one_introduction() -> None:
    """Every missing anchor of a page gets the page's introduction, rendered once: the
    contents are equal and share their values (the items' lists are made their own, bounded,
    by common/pageitems.py)."""
    body = page('<h1 id="g">Guide</h1><p>Intro.</p><h2 id="a">A</h2><p>Text.</p>')
    targets = [target(f"gone{i}", "std", "label", f"gone{i}") for i in range(300)]
    contents = extract_page(body, "https://mk.test/guide/", targets)
    assert {c["doc"] for c in contents} == {"Intro."}
    assert all(c["status"] == "anchor_missing" and "gone" in c["reason"] for c in contents)
    assert len({id(c["params"]) for c in contents}) == 1


def test_two_versions_give_typed_changes() -> None:
    """``params`` are typed as Sphinx items' are, so the typed diff reads an mkdocstrings
    site's versions alike: a parameter added with a default, a required keyword-only one
    (breaking), a new deprecation."""
    from invcrawl.common.apidiff import item_changes

    def version(heading: str, extra: str) -> dict[str, Any]:
        content = one(obj("m.f", f'<code class="highlight">{heading}</code>',
                          "<p>Do it.</p>" + extra), "m.f")  # fmt: skip
        return {"key": "py:function:m.f", **content}

    old = version("f(a: int) -&gt; int", "")
    new = version(
        "f(a: int, b: int = 2, *, strict: bool) -&gt; int",
        '<details class="deprecated"><summary>Deprecated since 2.0</summary><p>Use g.</p></details>',
    )
    changes = {(c["kind"], c.get("param") or c.get("version"), c["breaking"])
               for c in (c.to_json() for c in item_changes(old, new))}  # fmt: skip
    assert ("param_added", "b", False) in changes
    assert ("param_added", "strict", True) in changes
    assert ("deprecated", "2.0", False) in changes
