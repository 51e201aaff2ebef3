# ruff: noqa: E501  (the HTML snippets are shaped like Sphinx output, one line per element)
"""Sphinx patterns the held-out Debian sites showed (issue 49, bench/heldout_counts.py),
each on a small page written here in the markup Sphinx 5.3 writes:

* a module target (``span.target``) written before the section it labels (Werkzeug's
  middleware pages: ``automodule`` under a heading): the module's doc is that section's
  introduction, not empty;
* one anchor with two inventory names (SQLAlchemy lists ``pkg.sub.Maker`` and ``pkg.Maker``
  at one class): a member's parent is the name its own name is under;
* a description that begins with a version note (cryptography's functions and
  attributes): the note is in ``versions`` and the doc begins with the prose after it;
  a description that is nothing but the note (and members) keeps it as its text.
"""

from __future__ import annotations

from invcrawl.common.extract import extract_page
from support.targets import target

URL = "https://docs.example.org/api/widgets.html"


def page(body: str) -> bytes:
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta name="generator" content="Sphinx 5.3.0"><title>t</title></head><body>'
        '<div class="body" role="main">' + body + "</div></body></html>"
    ).encode("utf-8")


MODULE_BEFORE_SECTION = """
<span class="target" id="module-widgets.gears"></span><section id="gear-trains">
<h1>Gear trains<a class="headerlink" href="#gear-trains" title="Permalink to this heading">¶</a></h1>
<p>Couples two shafts so that each turns at its own rate.</p>
<p>Chain as many as the housing holds.</p>
<dl class="py class">
<dt class="sig sig-object py" id="widgets.gears.Train">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">widgets.gears.</span></span><span class="sig-name descname"><span class="pre">Train</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">ratio</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#widgets.gears.Train" title="Permalink to this definition">¶</a></dt>
<dd><p>One train of gears.</p></dd></dl>
</section>
"""


def test_module_target_before_its_section_gets_the_section_introduction() -> None:
    module, train = extract_page(
        page(MODULE_BEFORE_SECTION),
        URL,
        [
            target("widgets.gears", "py", "module", "module-widgets.gears", "-"),
            target("widgets.gears.Train", "py", "class", "widgets.gears.Train", "-"),
        ],
    )
    assert module["status"] == "ok"
    assert module["title"] == "Gear trains"
    assert module["doc"] == (
        "Couples two shafts so that each turns at its own rate. Chain as many as the housing holds."
    )
    assert "One train of gears" not in module["doc_markdown"]
    assert module["doc_markdown"].startswith("Couples two shafts")
    assert train["doc"] == "One train of gears."


MODULE_LEADING_SPAN = """
<section id="springs">
<span id="module-widgets.springs"></span><h1>Springs<a class="headerlink" href="#springs" title="Permalink to this heading">¶</a></h1>
<p>Stores energy until released.</p>
<dl class="py function">
<dt class="sig sig-object py" id="widgets.springs.wind">
<span class="sig-prename descclassname"><span class="pre">widgets.springs.</span></span><span class="sig-name descname"><span class="pre">wind</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Wind it.</p></dd></dl>
</section>
"""


def test_module_target_leading_its_section_gets_the_section_introduction() -> None:
    [module] = extract_page(
        page(MODULE_LEADING_SPAN),
        URL,
        [target("widgets.springs", "py", "module", "module-widgets.springs", "-")],
    )
    assert module["doc"] == "Stores energy until released."
    assert module["title"] == "Springs"


TWO_NAMES = """
<section id="makers">
<h1>Makers</h1>
<dl class="py class">
<dt class="sig sig-object py" id="widgets.Maker">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">Maker</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Makes widgets.</p>
<dl class="py method">
<dt class="sig sig-object py" id="widgets.Maker.make">
<span class="sig-name descname"><span class="pre">make</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Make one.</p></dd></dl>
</dd></dl>
</section>
"""


def test_member_parent_is_the_name_of_the_owner_its_name_is_under() -> None:
    # The inventory names the class twice at one anchor, its defining module's path first.
    canonical, public, member = extract_page(
        page(TWO_NAMES),
        URL,
        [
            target("widgets.core.Maker", "py", "class", "widgets.Maker", "-"),
            target("widgets.Maker", "py", "class", "widgets.Maker", "-"),
            target("widgets.Maker.make", "py", "method", "widgets.Maker.make", "-"),
        ],
    )
    assert member["parent"] == "widgets.Maker"
    assert canonical["doc"] == public["doc"] == "Makes widgets."


NOTE_FIRST = """
<section id="seals">
<h1>Seals</h1>
<dl class="py function">
<dt class="sig sig-object py" id="widgets.seal">
<span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">seal</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">lid</span></span></em><span class="sig-paren">)</span></dt>
<dd><div class="versionadded">
<p><span class="versionmodified added">New in version 1.4.</span></p>
</div>
<div class="versionchanged">
<p><span class="versionmodified changed">Changed in version 2.0: </span>Takes any lid.</p>
</div>
<p>Presses the <code class="docutils literal notranslate"><span class="pre">lid</span></code> shut.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>lid</strong> – what to press.</p></dd>
</dl>
</dd></dl>
<dl class="py class">
<dt class="sig sig-object py" id="widgets.Gasket">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">Gasket</span></span></dt>
<dd><div class="versionadded">
<p><span class="versionmodified added">New in version 0.3.</span></p>
</div>
<dl class="py method">
<dt class="sig sig-object py" id="widgets.Gasket.fit">
<span class="sig-name descname"><span class="pre">fit</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Fit it.</p></dd></dl>
</dd></dl>
</section>
"""


def test_version_notes_before_the_prose_leave_the_doc() -> None:
    seal, gasket, section = extract_page(
        page(NOTE_FIRST),
        URL,
        [
            target("widgets.seal", "py", "function", "widgets.seal", "-"),
            target("widgets.Gasket", "py", "class", "widgets.Gasket", "-"),
            target("seals", "std", "label", "seals", "Seals"),
        ],
    )
    assert seal["doc"].startswith("Presses the lid shut.")
    assert seal["doc_markdown"].startswith("Presses the `lid` shut.")
    assert "New in version" not in seal["doc"] and "Changed in version" not in seal["doc"]
    assert seal["versions"] == [
        {"kind": "added", "version": "1.4", "text": ""},
        {"kind": "changed", "version": "2.0", "text": "Takes any lid."},
    ]
    assert seal["params"][0]["description"] == "what to press."
    # Nothing but a note and members: the note is the class's own text.
    assert gasket["doc"] == "New in version 0.3."
    assert gasket["versions"] == [{"kind": "added", "version": "0.3", "text": ""}]
    # The section around them reads as the page does, notes included.
    assert "New in version 1.4." in section["doc"]


FIELDS_BEYOND_SIGNATURE = """
<section id="valves">
<h1>Valves</h1>
<dl class="py function">
<dt class="sig sig-object py" id="widgets.open_valve">
<span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">open_valve</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">valve</span></span></em>, <em class="sig-param"><span class="o"><span class="pre">**</span></span><span class="n"><span class="pre">options</span></span></em><span class="sig-paren">)</span></dt>
<dd><p>Open a valve.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple">
<li><p><strong>v</strong> – the valve (the argument's old name).</p></li>
<li><p><strong>options</strong> – passed on.</p></li>
<li><p><strong>rate</strong> (<em>float</em>) – one of the options: litres a second.</p></li>
</ul></dd>
</dl>
</dd></dl>
<dl class="py function">
<dt class="sig sig-object py" id="widgets.close_valve">
<span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">close_valve</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">valve</span></span></em><span class="sig-paren">)</span></dt>
<dt class="sig sig-object py">
<span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">close_valve</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">valves</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">slowly</span></span></em><span class="sig-paren">)</span></dt>
<dd><p>Close one valve or several.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><ul class="simple">
<li><p><strong>valve</strong> – one valve.</p></li>
<li><p><strong>valves</strong> – several.</p></li>
<li><p><strong>force</strong> – not in any signature.</p></li>
</ul></dd>
</dl>
</dd></dl>
<dl class="py class">
<dt class="sig sig-object py" id="widgets.Valve">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">widgets.</span></span><span class="sig-name descname"><span class="pre">Valve</span></span></dt>
<dd><p>A valve.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>size</strong> – its bore.</p></dd>
</dl>
</dd></dl>
</section>
"""


def test_names_only_the_field_list_has_are_doc_only_where_the_signature_shows_its_list() -> None:
    opened, closed, valve = extract_page(
        page(FIELDS_BEYOND_SIGNATURE),
        URL,
        [
            target("widgets.open_valve", "py", "function", "widgets.open_valve", "-"),
            target("widgets.close_valve", "py", "function", "widgets.close_valve", "-"),
            target("widgets.Valve", "py", "class", "widgets.Valve", "-"),
        ],
    )
    assert [(p["name"], p["kind"], p["description"]) for p in opened["params"]] == [
        ("valve", "positional-or-keyword", None),
        ("**options", "var-keyword", "passed on."),
    ]
    assert opened["doc_only_params"] == [
        {"name": "v", "description": "the valve (the argument's old name)."},
        {"name": "rate", "description": "one of the options: litres a second."},
    ]
    # An overload's own name stays a parameter; a name of none of them is doc-only.
    assert [(p["name"], p["kind"]) for p in closed["params"]] == [
        ("valve", "positional-or-keyword"),
        ("valves", None),
    ]
    assert closed["doc_only_params"] == [{"name": "force", "description": "not in any signature."}]
    # No parameter list shown (a class without its constructor's): the documented names
    # are its parameters.
    assert valve["params"] == [
        {"name": "size", "kind": None, "type": None, "default": None, "description": "its bore."}
    ]
    assert "doc_only_params" not in valve


OWNER_ELSEWHERE = """
<section id="groups">
<h1>Groups</h1>
<dl class="py class">
<dt class="sig sig-object py">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><code class="sig-prename descclassname"><span class="pre">models.</span></code><code class="sig-name descname"><span class="pre">Crew</span></code></dt>
<dd><dl class="py attribute">
<dt class="sig sig-object py" id="widgets.models.Crew.size">
<code class="sig-name descname"><span class="pre">size</span></code></dt>
<dd><p>How many.</p></dd></dl>
<dl class="py method">
<dt class="sig sig-object py" id="widgets.models.Crew.check">
<code class="sig-name descname"><span class="pre">check</span></code><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Checks.</p>
<dl class="py method">
<dt class="sig sig-object py" id="widgets.models.Crew.finish">
<code class="sig-name descname"><span class="pre">finish</span></code><span class="sig-paren">(</span><span class="sig-paren">)</span></dt>
<dd><p>Indented one level too deep in its source.</p></dd></dl>
</dd></dl>
</dd></dl>
</section>
"""


def test_parent_is_what_the_name_says_where_the_enclosing_description_names_another() -> None:
    size, check, finish = extract_page(
        page(OWNER_ELSEWHERE),
        URL,
        [
            target("widgets.models.Crew.size", "py", "attribute", "widgets.models.Crew.size", "-"),
            target("widgets.models.Crew.check", "py", "method", "widgets.models.Crew.check", "-"),
            target("widgets.models.Crew.finish", "py", "method", "widgets.models.Crew.finish", "-"),
        ],
    )
    # The class is written as "models.Crew", without an id: not the name's prefix.
    assert size["parent"] == check["parent"] == "widgets.models.Crew"
    # Nested in check's description, named under the class.
    assert finish["parent"] == "widgets.models.Crew"
    assert finish["doc"] == "Indented one level too deep in its source."
