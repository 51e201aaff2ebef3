"""Generate a synthetic Sphinx-like site: N pages of K documented functions each, in the
markup Sphinx 5 writes, plus its ``objects.inv``. Every symbol is known by construction,
so fault runs can count exactly what must come out.

    python tests/support/synthsite.py OUT_DIR --pages 300 --per-page 8
"""

from __future__ import annotations

import argparse
import zlib
from pathlib import Path

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{mod}</title></head>
<body><div class="document"><div class="body" role="main">
<section id="module-{mod}"><span id="{mod}-label"></span>
<h1>{mod} — synthetic module {n}<a class="headerlink" href="#module-{mod}">¶</a></h1>
<p>Module {mod} exists so that fault runs have {k} functions per page to account for.</p>
{functions}
<p>{filler}</p>
</section></div></div></body></html>
"""

FUNCTION = """<dl class="py function">
<dt class="sig sig-object py" id="{mod}.f{i}"><span class="sig-prename descclassname"><span class="pre">{mod}.</span></span><span class="sig-name descname"><span class="pre">f{i}</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">x</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">y</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">{i}</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#{mod}.f{i}" title="Permalink to this definition">¶</a></dt>
<dd><p>Return <em>x</em> combined with <em>y</em>, variant {i} of {mod}.</p></dd></dl>
"""


def module_name(n: int) -> str:
    return f"synth{n:04d}"


def generate(out: Path, pages: int, per_page: int, filler_bytes: int = 4000) -> int:
    """Write the site; returns the number of inventory entries."""
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    filler = ("lorem ipsum dolor sit amet " * (filler_bytes // 27 + 1))[:filler_bytes]
    for n in range(pages):
        mod = module_name(n)
        functions = "".join(FUNCTION.format(mod=mod, i=i) for i in range(per_page))
        html = PAGE.format(mod=mod, n=n, k=per_page, functions=functions, filler=filler)
        (out / f"{mod}.html").write_text(html, encoding="utf-8")
        lines.append(f"{mod} py:module 0 {mod}.html#module-$ -")
        lines.append(f"{mod}-label std:label -1 {mod}.html#$ Synthetic {n}")
        lines.append(f"{mod} std:doc -1 {mod}.html {mod} — synthetic module {n}")
        lines += [f"{mod}.f{i} py:function 1 {mod}.html#$ -" for i in range(per_page)]
    lines.append("genindex std:label -1 genindex.html Index")
    header = (
        b"# Sphinx inventory version 2\n# Project: Synth\n# Version: 1.0\n"
        b"# The remainder of this file is compressed using zlib.\n"
    )
    body = ("\n".join(lines) + "\n").encode("utf-8")
    (out / "objects.inv").write_bytes(header + zlib.compress(body, 9))
    (out / "index.html").write_text("<html><body><div role='main'>synth</div></body></html>")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--per-page", type=int, default=8)
    args = parser.parse_args()
    entries = generate(args.out, args.pages, args.per_page)
    print(f"{args.pages} pages, {entries} entries in {args.out}")


if __name__ == "__main__":
    main()
