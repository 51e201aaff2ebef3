"""pydoctor pages (common/extract/pydoctor/): the markup of pydoctor 22 (Twisted's API
docs) and 25, hand-made after the real pages: members found by their ``<a name>``
(never pydoctor 22's ``div#main`` for a member named ``main``), headers, field tables,
labels, version notes, and class and module entries that take the page's docstring and
none of its chrome."""

from __future__ import annotations

from typing import Any

from invcrawl.common.extract import extract_page
from support.targets import target

URL = "https://docs.example.org/api/pkg.mod.Thing.html"

CHROME = """
<nav class="navbar"><div class="navlinks"><a href="index.html">API Documentation</a>
<div id="search-box-container"><input id="search-box" type="search"/></div></div></nav>
<div class="sidebarcontainer"><nav class="sidebar"><div class="thingTitle"><span>Class</span>
<code><a href="#main">main</a></code></div></nav></div>
"""

SEARCH = """<div id="search-results-container" style="display: none;">
<noscript><h1>Cannot search: JavaScript is not supported/enabled in your browser.</h1></noscript>
<table id="search-results"></table></div>"""


def page22(members: str, doc: str = "<p>A thing that does things.</p>") -> bytes:
    return f"""<html><head><title>pkg.mod.Thing</title>
<meta name="generator" content="pydoctor 22.9.1"></meta></head><body>{CHROME}
<div class="container-fluid"><div id="main" class="">{SEARCH}
<div class="page-header"><h1 class="class"><code><code><a href="pkg.html">pkg</a></code><wbr/>.
<code><a href="pkg.mod.html">mod</a></code><wbr/>.<code><a href="#">Thing</a></code></code></h1>
<div id="showPrivate"><button class="btn btn-link">Toggle Private API</button></div></div>
<div class="categoryHeader">class documentation</div>
<div class="extrasDocstring"><p><code><span class="py-keyword">class</span>
<span class="py-defname">Thing</span>(<a href="pkg.Base.html" class="internal-link">Base</a>):
<a href="https://x/src.py#L1" class="sourceLink">(source)</a></code></p>
<p>Known subclasses: <code><a href="pkg.Sub.html">pkg.Sub</a></code></p>
<p><a href="classIndex.html#pkg.mod.Thing">View In Hierarchy</a></p></div>
<div class="moduleDocstring"><div>{doc}</div></div>
<div id="splitTables"><table class="children sortable"><tr class="method"><td>Method</td>
<td><code><a href="#run">run</a></code></td><td>Run the thing (summary).</td></tr></table></div>
<div id="childList">{members}</div></div></div></body></html>""".encode()


def member22(kind: str, name: str, header: str, body: str, pre: str = "") -> str:
    return f"""<div class="base{kind}">
<a name="pkg.mod.Thing.{name}"></a><a name="{name}"></a>
<div class="functionHeader">{pre}
<span class="py-keyword">def</span> <span class="py-defname">{name}</span>{header}
<a class="sourceLink" href="https://x/src.py#L9">(source)</a>
<a class="headerLink" href="#{name}" title="pkg.mod.Thing.{name}">&#182;</a></div>
<div class="docstring functionBody">
<div class="interfaceinfo">overridden in <code><a href="pkg.Sub.html">pkg.Sub</a></code></div>
<div>{body}</div></div></div>"""


FIELDS22 = """<table class="fieldTable"><tr class="fieldStart"><td class="fieldName" colspan="2">
Parameters</td></tr><tr><td class="fieldArgContainer"><span class="fieldArg">when:</span>
<code>float</code></td><td class="fieldArgDesc">Seconds from now.</td></tr>
<tr><td class="fieldArgContainer"><span class="fieldArg">kw:</span></td>
<td class="fieldArgDesc"><span class="undocumented">Undocumented</span></td></tr>
<tr class="fieldStart"><td class="fieldName" colspan="2">Returns</td></tr><tr>
<td class="fieldArgContainer"><code><a href="pkg.Deferred.html">Deferred</a></code></td>
<td class="fieldArgDesc">Fires when done.</td></tr>
<tr class="fieldStart"><td class="fieldName" colspan="2">Raises</td></tr><tr>
<td class="fieldArgContainer"><code>ValueError</code></td>
<td>If <tt>when</tt> is negative.</td></tr>
<tr class="fieldStart"><td class="fieldName" colspan="2">Present Since</td></tr>
<tr><td colspan="2">Twisted 21.2.0</td></tr></table>"""


def _extract(body: bytes, *entries: tuple[str, str, str]) -> list[dict[str, Any]]:
    targets = [target(name, "py", role, anchor, "-") for name, role, anchor in entries]
    return extract_page(body, URL, targets)


def test_pydoctor22_member_header_fields_labels_and_no_chrome() -> None:
    members = member22(
        "classmethod",
        "run",
        "(cls, when, *args, msg='don\\'t', **kw):",
        "<p>Run the thing later.</p>" + FIELDS22,
        pre="@classmethod<br />",
    ) + member22("method", "main", "(self):", '<p class="undocumented">Undocumented</p>')
    full, short, main = _extract(
        page22(members),
        ("pkg.mod.Thing.run", "method", "pkg.mod.Thing.run"),
        ("pkg.mod.Thing.run", "method", "run"),
        ("pkg.mod.Thing.main", "method", "main"),
    )
    assert full == short
    assert full["generator"] == "pydoctor" and full["status"] == "ok"
    assert full["signature"] == "run(cls, when, *args, msg='don\\'t', **kw)"
    assert full["labels"] == ["classmethod"]
    assert [
        (p["name"], p["kind"], p["type"], p["default"], p["description"]) for p in full["params"]
    ] == [
        ("cls", "positional-or-keyword", None, None, None),
        ("when", "positional-or-keyword", "float", None, "Seconds from now."),
        ("*args", "var-positional", None, None, None),
        ("msg", "keyword-only", None, "'don\\'t'", None),
        ("**kw", "var-keyword", None, None, None),
    ]
    assert full["returns"] == [
        {"name": None, "type": "Deferred", "description": "Fires when done."}
    ]
    assert full["raises"] == [{"type": "ValueError", "description": "If when is negative."}]
    assert full["versions"] == [{"kind": "added", "version": "21.2.0", "text": "Twisted"}]
    assert full["parent"] == "pkg.mod.Thing" and full["title"] is None
    assert full["doc"].startswith("Run the thing later. Parameters: when (float) – Seconds")
    for noise in ("overridden in", "(source)", "¶", "Undocumented", "Cannot search"):
        assert noise not in full["doc"] and noise not in full["doc_markdown"]
    assert "- **when** (`float`) – Seconds from now." in full["doc_markdown"]
    # pydoctor 22's layout has a div#main: the member named main is its <a name>
    assert main["signature"] == "main(self)" and main["doc"] == ""


def test_pydoctor22_class_entry_takes_the_page_docstring_signature_and_constructor() -> None:
    init = member22(
        "method",
        "__init__",
        "(self, size=3):",
        '<p>Make one.</p><table class="fieldTable"><tr class="fieldStart"><td class="fieldName"'
        ' colspan="2">Parameters</td></tr><tr><td class="fieldArgContainer"><span class="fieldArg">'
        'size:</span><code>int</code></td><td class="fieldArgDesc">How big.</td></tr></table>',
    )
    (cls,) = _extract(page22(init), ("pkg.mod.Thing", "class", ""))
    assert cls["doc"] == "A thing that does things."
    assert cls["signature"] == "class Thing(Base)"
    assert cls["title"] == "pkg.mod.Thing" and cls["parent"] == "pkg.mod"
    assert [(p["name"], p["type"], p["default"]) for p in cls["params"]] == [("size", "int", "3")]
    for chrome in ("Cannot search", "Toggle Private", "View In Hierarchy", "Known subclasses"):
        assert chrome not in cls["doc"]


def test_pydoctor25_sig_params_decorators_async_and_value() -> None:
    header = (
        '<div><span class="decorator">@staticmethod<br /></span></div>'
        '<span class="py-keyword">async&#160;def</span>&#160;<span class="py-defname">go</span>'
        '<span class="function-signature">(<span class="rst-sig-param">a: <code>int</code>, </span>'
        '<span class="rst-sig-symbol">/, </span><span class="rst-sig-param">b: <code>str</code> = '
        '<span class="rst-variable-quote">\'</span>x<span class="rst-variable-quote">\'</span>, '
        '</span><span class="rst-sig-symbol">*, </span>'
        '<span class="rst-sig-param">c=1</span>) -&gt; '
        "<code>bool</code>:</span>"
    )
    const = '<span class="py-defname">LIMIT</span>: <code>int</code> ='
    body = f"""<html><head><meta name="generator" content="pydoctor 25.10.1"></meta></head>
<body>{CHROME}<main><div class="page-header"><h1>pkg.mod</h1></div>
<div class="moduleDocstring"><div><p>The module.</p></div></div><div id="child-list">
<div class="basestaticmethod"><a name="pkg.mod.go"></a><a name="go"></a>
<div class="functionHeader">{header}<a class="headerLink" href="#go">&#182;</a></div>
<div class="docstring functionBody"><p><div class="rst-deprecated"><span class="rst-deprecated
 rst-versionmodified">Deprecated since version 2.0: </span><span>Use stop.</span></div></p>
<div><p>Go.</p></div></div></div>
<div class="baseconstant"><a name="pkg.mod.LIMIT"></a><a name="LIMIT"></a>
<div class="functionHeader">{const}</div><div class="functionBody"><div><p>The limit.</p></div>
<table class="valueTable"><tr class="fieldStart"><td class="fieldName">Value</td></tr><tr><td>
<pre class="constant-value"><code>10</code></pre></td></tr></table></div></div>
</div></main><footer>generated by pydoctor</footer></body></html>""".encode()
    go, limit, module = extract_page(
        body,
        "https://docs.example.org/api/pkg.mod.html",
        [
            target("pkg.mod.go", "py", "function", "go", "-"),
            target("pkg.mod.LIMIT", "py", "attribute", "LIMIT", "-"),
            target("pkg.mod", "py", "module", "", "-"),
        ],
    )
    assert go["signature"] == "go(a: int, /, b: str = 'x', *, c=1) -> bool"
    assert go["labels"] == ["staticmethod", "async"]
    assert [(p["name"], p["kind"]) for p in go["params"]] == [
        ("a", "positional-only"),
        ("b", "positional-or-keyword"),
        ("c", "keyword-only"),
    ]
    assert go["returns"] == [{"name": None, "type": "bool", "description": None}]
    assert go["versions"] == [{"kind": "deprecated", "version": "2.0", "text": "Use stop."}]
    assert limit["signature"] == "LIMIT: int = 10" and limit["doc"] == "The limit."
    assert module["doc"] == "The module." and module["signature"] is None


def test_missing_member_is_anchor_missing_with_the_page_docstring() -> None:
    (gone,) = _extract(page22(""), ("pkg.mod.Thing.gone", "method", "gone"))
    assert gone["status"] == "anchor_missing" and gone["doc"] == "A thing that does things."


def test_pydoctor25_overloads_are_one_signature_per_line_params_of_the_first() -> None:
    def overload(arg: str) -> str:
        return (
            '<div class="function-overload"><div><span class="decorator">@overload<br /></span>'
            '</div><div><span class="py-keyword">def</span>&#160;<span class="py-defname">mro'
            '</span><span class="function-signature">(<span class="rst-sig-param">self, </span>'
            f'<span class="rst-sig-param">{arg}</span>) -&gt; <code>int</code>:</span></div></div>'
        )

    body = f"""<html><head><meta name="generator" content="pydoctor 25.10.1"></meta></head>
<body><main><div class="page-header"><h1>pkg.C</h1></div><div id="child-list">
<div class="basemethod"><a name="pkg.C.mro"></a><a name="mro"></a>
<div class="functionHeader">{overload("a: bool")}{overload("a: int = 0")}</div>
<div class="docstring functionBody"><div><p>Order.</p></div></div></div></div></main>
</body></html>""".encode()
    [mro] = extract_page(body, URL, [target("pkg.C.mro", "py", "method", "mro", "-")])
    assert mro["signature"] == "mro(self, a: bool) -> int\nmro(self, a: int = 0) -> int"
    assert [p["name"] for p in mro["params"]] == ["self", "a"]  # not each overload's again
    assert mro["labels"] == ["overload"] and mro["doc"] == "Order."
