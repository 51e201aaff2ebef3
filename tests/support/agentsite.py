"""A small Sphinx-like site in two versions (the markup Sphinx 5 writes, as
``synthsite.py``), whose symbols, summaries and differences are known: the fixture crawl
of the MCP server's tests (``tests/integration/test_mcp_server.py``) and of the example
answers in docs/agents.md.

1.0 -> 2.0: ``connect`` gains ``ssl=False`` (not breaking), ``Session.get``'s ``timeout``
default goes from 10 to 30, ``legacy`` is removed (breaking), ``Pool`` is added."""

from __future__ import annotations

import zlib
from pathlib import Path

PROJECT = "Fixlib"
VERSIONS = ("1.0", "2.0")

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fixlib</title></head>
<body><div class="document"><div class="body" role="main">
<section id="module-fixlib">
<h1>fixlib — a fixture library<a class="headerlink" href="#module-fixlib">¶</a></h1>
<p>The fixture library: connections, sessions and JSON.</p>
{body}
</section></div></div></body></html>
"""


def _param(name: str, default: str | None) -> str:
    out = f'<em class="sig-param"><span class="n"><span class="pre">{name}</span></span>'
    if default is not None:
        out += (
            '<span class="o"><span class="pre">=</span></span>'
            f'<span class="default_value"><span class="pre">{default}</span></span>'
        )
    return out + "</em>"


def _object(
    role: str,
    full: str,
    params: list[tuple[str, str | None]],
    doc: str,
    *,
    inner: str = "",
    prefix: bool = True,
) -> str:
    module, _, name = full.rpartition(".")
    keyword = (
        '<em class="property"><span class="pre">class</span><span class="w"> </span></em>'
        if role == "class"
        else ""
    )
    prename = (
        f'<span class="sig-prename descclassname"><span class="pre">{module}.</span></span>'
        if prefix
        else ""
    )
    signature = ", ".join(_param(n, d) for n, d in params)
    return (
        f'<dl class="py {role}">\n<dt class="sig sig-object py" id="{full}">{keyword}{prename}'
        f'<span class="sig-name descname"><span class="pre">{name}</span></span>'
        f'<span class="sig-paren">(</span>{signature}<span class="sig-paren">)</span>'
        f'<a class="headerlink" href="#{full}" title="Permalink to this definition">¶</a></dt>\n'
        f"<dd><p>{doc}</p>\n{inner}</dd></dl>\n"
    )


def symbols(version: str) -> list[tuple[str, str, str]]:
    """(role, name, html) of each documented object of ``version``."""
    v2 = version != "1.0"
    get = _object(
        "method",
        "fixlib.Session.get",
        [("url", None), ("timeout", "30" if v2 else "10")],
        "Send a GET request and return the response.",
        prefix=False,
    )
    out = [
        ("class", "fixlib.Session", _object("class", "fixlib.Session", [("host", None)],
         "A session that keeps connections to one host open.", inner=get)),
        ("function", "fixlib.connect", _object(
            "function", "fixlib.connect",
            [("host", None), ("port", "80"), *([("ssl", "False")] if v2 else [])],
            "Open a connection to a host.")),
        ("function", "fixlib.parse_json", _object(
            "function", "fixlib.parse_json", [("text", None)],
            "Parse a JSON string into Python objects. Raises ValueError on bad input.")),
    ]  # fmt: skip
    if v2:
        out.append(
            ("class", "fixlib.Pool", _object("class", "fixlib.Pool", [],
             "Connections shared between callers."))
        )  # fmt: skip
    else:
        out.append(
            ("function", "fixlib.legacy", _object("function", "fixlib.legacy", [("x", None)],
             "An old helper."))
        )  # fmt: skip
    return out


def write_site(out: Path, version: str) -> Path:
    """The site of ``version`` in ``out`` (an ``objects.inv`` and one page)."""
    out.mkdir(parents=True, exist_ok=True)
    objects = symbols(version)
    body = "".join(html for role, _, html in objects)
    (out / "api.html").write_text(PAGE.format(body=body), encoding="utf-8")
    lines = ["fixlib py:module 0 api.html#module-$ -"]
    lines += [f"{name} py:{role} 1 api.html#$ -" for role, name, _ in objects]
    lines.append("fixlib.Session.get py:method 1 api.html#$ -")
    header = (
        f"# Sphinx inventory version 2\n# Project: {PROJECT}\n# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body_bytes = ("\n".join(sorted(lines)) + "\n").encode("utf-8")
    (out / "objects.inv").write_bytes(header + zlib.compress(body_bytes, 9))
    (out / "index.html").write_text("<html><body><div role='main'>fixlib</div></body></html>")
    return out
