"""One page's extraction measured in a child process of its own (tests/unit/
test_page_memory.py): a pydoctor page with one member of many parameters and many
inventory entries pointing at that member, extracted and bounded as the consumer does
(``bounded``: ``pageitems.page_items``) or as it did before issue 46 (``naive``: a full
copy of the content per entry, each serialised, the bounds applied after).

``python -m support.page_memory MODE PARAMS ENTRIES [FILLER]`` prints the page's size, the
output's, the process's resident set before the extraction and at its peak (``VmHWM``,
not ``ru_maxrss``: see ``hostile_pages.peak_rss_mb``), and the work done, counted as the
bytes orjson serialised (sizes and checksums) beyond the output itself: never a time."""

from __future__ import annotations

import json
import sys
from typing import Any

from support.hostile_pages import peak_rss_mb

HEAD = """<html><head><title>pkg.mod.Thing</title>
<meta name="generator" content="pydoctor 22.9.1"></meta></head><body>
<div class="container-fluid"><div id="main" class="">
<div class="page-header"><h1 class="class"><code>pkg.mod.Thing</code></h1></div>
<div class="moduleDocstring"><div><p>A thing.</p></div></div><div id="childList">"""
TAIL = "</div></div></div></body></html>"


def wide_page(params: int, filler: int) -> bytes:
    """A pydoctor 22 class page whose member ``many`` takes ``params`` parameters (its
    header, as pydoctor 22 writes it, plain text) and whose docstring holds ``filler``
    bytes of prose."""
    arglist = ", ".join(f"p{i}=0" for i in range(params))
    prose = "<p>" + "Many parameters, each documented nowhere. " * 20 + "</p>\n"
    member = f"""<div class="basemethod">
<a name="pkg.mod.Thing.many"></a><a name="many"></a>
<div class="functionHeader"><span class="py-keyword">def</span>
<span class="py-defname">many</span>(self, {arglist}):</div>
<div class="docstring functionBody"><div>{prose * max(1, filler // len(prose))}</div></div>
</div>"""
    return (HEAD + member + TAIL).encode()


def heading_page(size: int) -> bytes:
    """A page of no generator invcrawl knows: one heading ``#f`` over ``size`` bytes of
    prose (the generic rules read an entry there as the heading and what follows it)."""
    para = "<p>" + "Words under one heading, many entries pointing at it. " * 20 + "</p>\n"
    prose = para * (size // len(para))
    return f"<html><body><div><h2 id='f'>f</h2>{prose}</div></body></html>".encode()


class Work:
    """Bytes serialised by orjson, counted through its module attribute (the consumer's
    modules call ``orjson.dumps``)."""

    def __init__(self) -> None:
        import orjson

        self.serialised = 0
        real = orjson.dumps

        def dumps(value: Any, *args: Any, **kwargs: Any) -> bytes:
            out = real(value, *args, **kwargs)
            self.serialised += len(out)
            return out

        orjson.dumps = dumps  # type: ignore[assignment]


def measure(mode: str, params: int, entries: int, filler: int) -> dict[str, Any]:
    """``params`` 0: the heading page of ``filler`` bytes, its entries at ``#f``."""
    from invcrawl.common.bounds import SizeLimits, bound_items, page_budget
    from invcrawl.common.extract import extract_page
    from invcrawl.common.items import CrawlInfo, build_sized_item, checksum
    from invcrawl.common.pageitems import page_items
    from invcrawl.common.tasks import Task, TaskEntry

    body = wide_page(params, filler) if params else heading_page(2 * filler)
    url = "https://h.test/api/pkg.mod.Thing.html"
    names = [f"pkg.mod.Thing.many{'' if i == 0 else f'_alias{i}'}" for i in range(entries)]
    anchor = "many" if params else "f"
    task = Task("t", url, tuple(TaskEntry(n, "py", "method", 1, anchor, "-") for n in names))
    crawl = CrawlInfo("c", "Demo", "1.0")
    limits = SizeLimits()
    work = Work()
    before = peak_rss_mb()
    contents = extract_page(body, url, task.entries)
    if mode == "bounded":
        items = page_items(crawl, task, contents, limits, len(body))
    else:  # issue 46's consumer: a content of its own per entry, serialised, then cut
        own = [dict(c, params=[dict(p) for p in c["params"]]) for c in contents]
        sized = [
            build_sized_item(crawl, task, e, c) for e, c in zip(task.entries, own, strict=True)
        ]
        built, measured = [i for i, _ in sized], [s for _, s in sized]
        items = bound_items(built, limits, len(body), checksum, measured)
    peak = peak_rss_mb()
    import orjson

    sizes = [len(orjson.dumps(item)) for item in items]
    return {
        "page_bytes": len(body),
        "budget": page_budget(limits, len(body)),
        "output_bytes": sum(sizes),
        "largest_item": max(sizes),
        "params": len(contents[0]["params"]),
        "generator": contents[0]["generator"],
        "statuses": sorted({i["status"] for i in items}),
        "before_mb": before,
        "peak_mb": peak,
        "serialised": work.serialised - sum(sizes),
    }


# The nestings of ``nested_page``: (opening of level i, closing), each level's own prose
# written after its opening. ``dt``: object descriptions that libxml2 closes late (a dl
# after a dt is moved into it, page.py), each dt holding all those after it.
NESTINGS: dict[str, tuple[str, str]] = {
    "section": ('<section id="s{i}"><h2>Section {i}</h2>\n{prose}', "</section>"),
    "div": ('<div id="s{i}">\n{prose}', "</div>"),
    "span": ('<span id="s{i}">{words}', "</span>"),
    "dt": (
        '<dl class="py function"><dt class="sig" id="s{i}"><span class="sig-name descname">'
        "f{i}</span>(a, b)</dt><dl><dd>{words}</dd></dl>",
        "</dl>",
    ),
}
GENERATORS = {
    "sphinx": '<meta name="generator" content="Docutils 0.19: https://docutils.sourceforge.io/" />',
    "mkdocs": '<meta name="generator" content="mkdocs-1.5.3, mkdocs-material-9.4.0" />',
    "unknown": "",
}


def nested_page(
    sections: int, section_bytes: int, kind: str = "section", generator: str = "sphinx"
) -> bytes:
    """A page of ``sections`` nested elements with ids, each holding its own
    ``section_bytes`` of prose and then all the following ones (``kind``: a key of
    NESTINGS: docutils sections with headings, plain divs, spans of text, object
    descriptions), as entries at each and one at the page point into
    (``nested_entries``)."""
    para = "<p>" + "Words of a section that holds every section after it. " * 20 + "</p>\n"
    prose = para * max(1, section_bytes // len(para))
    words = "Words of a span that holds every span after it. " * max(1, section_bytes // 49)
    opening, closing = NESTINGS[kind]
    levels = "".join(opening.format(i=i, prose=prose, words=words) for i in range(sections))
    inner = levels + closing * sections
    if kind == "span":
        inner = f"<p>{inner}</p>"
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>Nested</title>'
        f'{GENERATORS[generator]}</head><body><div class="body" role="main">'
        f'<article class="md-content__inner md-typeset">{inner}</article></div></body></html>'
    ).encode()


def nested_entries(sections: int, kind: str = "section") -> tuple[Any, ...]:
    """An entry at each nested element of ``nested_page`` (std:label, py:function at
    object descriptions), then its std:doc."""
    from invcrawl.common.tasks import TaskEntry

    domain, role = ("py", "function") if kind == "dt" else ("std", "label")
    at = [TaskEntry(f"s{i}", domain, role, 1, f"s{i}", "-") for i in range(sections)]
    return (*at, TaskEntry("nested", "std", "doc", -1, "", "Nested"))


def measure_nested(kind: str, generator: str, sections: int, section_bytes: int) -> dict[str, Any]:
    """``nested_page`` extracted and bounded as the consumer does (its long texts as
    ropes where the extraction has them), and the process's peak resident set."""
    import inspect

    from invcrawl.common.bounds import SizeLimits, page_budget
    from invcrawl.common.extract import extract_page
    from invcrawl.common.items import CrawlInfo
    from invcrawl.common.pageitems import page_items
    from invcrawl.common.tasks import Task

    body = nested_page(sections, section_bytes, kind, generator)
    url = "https://h.test/nested.html"
    task = Task("t", url, nested_entries(sections, kind))
    lazy = {"lazy": True} if "lazy" in inspect.signature(extract_page).parameters else {}
    before = peak_rss_mb()
    contents = extract_page(body, url, task.entries, **lazy)
    items = page_items(CrawlInfo("c", "Demo", "1.0"), task, contents, SizeLimits(), len(body))
    peak = peak_rss_mb()
    import orjson

    return {
        "page_bytes": len(body),
        "budget": page_budget(SizeLimits(), len(body)),
        "output_bytes": sum(len(orjson.dumps(item)) for item in items),
        "generator": contents[0]["generator"],
        "statuses": sorted({i["status"] for i in items}),
        "before_mb": before,
        "peak_mb": peak,
    }


if __name__ == "__main__":
    if sys.argv[1] == "nested":  # nested KIND GENERATOR SECTIONS SECTION_BYTES
        kind, generator, n, size = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        print(json.dumps(measure_nested(kind, generator, n, size)))
        sys.exit(0)
    mode, params, entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    filler = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4].isdigit() else 1_000_000
    print(json.dumps(measure(mode, params, entries, filler)))
