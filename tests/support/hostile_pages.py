"""Pages that amplify: a large page that many inventory entries point at, and structures
nested to any depth, for the size bound tests (tests/unit/test_bounds.py, tests/e2e/
test_output_bounds.py) and ``python -m support.hostile_pages`` (the peak memory of one
extraction, run in a child so that its peak RSS is its own)."""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path
from typing import Any

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body><div class="body" role="main"><section id="top"><h1>{title}</h1>
<p>The introduction of {title}: what it is for.</p>
{body}
</section></div></body></html>
"""

FUNCTION = """<dl class="py function"><dt class="sig sig-object py" id="{fq}"><span
class="sig-name descname"><span class="pre">{fq}</span></span><span class="sig-paren">(</span>
<span class="sig-paren">)</span></dt><dd><p>Function {fq}.</p>{doc}</dd></dl>
"""

# Every nesting kind: (open, close) around one level.
NESTS: dict[str, tuple[str, str]] = {
    "table": ("<table><tr><td>x", "</td></tr></table>"),
    "tbody": ("<table><tbody><tr><th>h</th><td>x", "</td></tr></tbody></table>"),
    "ul": ("<ul><li>x", "</li></ul>"),
    "ol": ("<ol><li>x", "</li></ol>"),
    "blockquote": ("<blockquote><p>x</p>", "</blockquote>"),
    "admonition": (
        '<div class="admonition note"><p class="admonition-title">N</p><p>x</p>',
        "</div>",
    ),
    "dl": ("<dl><dt>t</dt><dd><p>x</p>", "</dd></dl>"),
    "numpydoc": ('<dl><dt>a<span class="classifier">int</span></dt><dd><p>x</p>', "</dd></dl>"),
    "section": ('<section id="s{n}"><h2>S</h2><p>x</p>', "</section>"),
    "div": ("<div><p>x</p>", "</div>"),
    "table-list": ("<table><tr><td><ul><li>x", "</li></ul></td></tr></table>"),
}


def nested(kinds: list[str], text: str = "deep") -> str:
    """The nesting kinds, outermost first, around ``text``."""
    opens = "".join(NESTS[k][0].replace("{n}", str(i)) for i, k in enumerate(kinds))
    closes = "".join(NESTS[k][1] for k in reversed(kinds))
    return opens + text + closes


def page_with(doc: str, title: str = "demo.hostile") -> bytes:
    """A page with one documented function ``demo.hostile.f`` whose body holds ``doc``."""
    body = FUNCTION.format(fq=f"{title}.f", doc=doc)
    return PAGE.format(title=title, body=body).encode()


def big_page(size: int, title: str = "demo.big") -> bytes:
    """About ``size`` bytes: an introduction, then one long section of prose and three
    functions."""
    paragraph = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 20 + "</p>\n"
    filler = paragraph * max(1, size // len(paragraph))
    body = filler + "".join(FUNCTION.format(fq=f"{title}.f{i}", doc="") for i in range(3))
    return PAGE.format(title=title, body=body).encode()


def measure(kind: str, argument: int, entries: int) -> dict[str, Any]:
    """Extract and bound the items of one hostile page, as the consumer does; the output
    size and the process's peak RSS."""
    import orjson

    from invcrawl.common.bounds import SizeLimits, bound_items
    from invcrawl.common.extract import extract_page
    from invcrawl.common.items import checksum
    from support.targets import target

    if kind == "missing":  # `entries` entries pointing at missing anchors of a big page
        body = big_page(argument)
        targets = [target(f"x{i}", "py", "function", f"gone-{i}", "-") for i in range(entries)]
    else:  # a docstring nested `argument` levels deep
        body = page_with(nested([kind] * argument))
        targets = [target("demo.hostile.f", "py", "function", "demo.hostile.f", "-")] * entries
    contents = extract_page(body, "https://h.test/api/page.html", targets)
    items = [dict(c, key=f"k{i}", checksum="") for i, c in enumerate(contents)]
    bound_items(items, SizeLimits(), len(body), checksum)
    sizes = [len(orjson.dumps(item)) for item in items]
    return {
        "page_bytes": len(body),
        "output_bytes": sum(sizes),
        "largest_item": max(sizes),
        "statuses": sorted({i["status"] for i in items}),
        "peak_rss_mb": peak_rss_mb(),
    }


def peak_rss_mb() -> float:
    """This process's own peak resident set (``VmHWM``). Not ``getrusage``'s
    ``ru_maxrss``: Linux carries it over ``execve`` from the process that started this
    one, so under a test session that grew to 873 MB every child reported 873 MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


if __name__ == "__main__":  # python -m support.hostile_pages KIND ARGUMENT ENTRIES
    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
