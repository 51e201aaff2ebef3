"""invcrawl.common.extract against the Debian CPython 3.11 docs (python3.11-doc: Sphinx 5.3 markup,
python-docs-theme). Skipped when the package is not installed."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.items import CrawlInfo, build_item
from invcrawl.common.tasks import Task, TaskEntry
from support.cli import REPO
from support.targets import target

ROOT = Path("/usr/share/doc/python3.11/html")
SKIP_PAGES = {"genindex.html", "search.html", "py-modindex.html"}
NO_SIGNATURE = {("std", "label"), ("std", "doc"), ("std", "term"), ("py", "module")}

pytestmark = [
    pytest.mark.realdocs,
    pytest.mark.skipif(not (ROOT / "objects.inv").exists(), reason="python3.11-doc not installed"),
]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str, str], dict[str, Any]]:
    sphobjinv = pytest.importorskip("sphobjinv")
    inv = sphobjinv.Inventory(str(ROOT / "objects.inv"))
    pages: dict[str, list[TaskEntry]] = collections.defaultdict(list)
    for obj in inv.objects:
        path, _, anchor = obj.uri_expanded.partition("#")
        pages[path].append(target(obj.name, obj.domain, obj.role, anchor, obj.dispname_expanded))
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path, targets in pages.items():
        if path in SKIP_PAGES or not (ROOT / path).exists():
            continue
        url = f"https://docs.python.org/3.11/{path}"
        for entry, content in zip(
            targets, extract_page((ROOT / path).read_bytes(), url, targets), strict=True
        ):
            out[(entry.domain, entry.role, entry.name)] = content
    return out


def test_ok_rate_and_signatures(results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    ok = sum(1 for r in results.values() if r["status"] == "ok")
    assert ok / len(results) >= 0.999
    missing_sig = [
        k for k, r in results.items() if (k[0], k[1]) not in NO_SIGNATURE and not r["signature"]
    ]
    assert missing_sig == []


def test_json_dumps(results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    r = results[("py", "function", "json.dumps")]
    assert r["signature"] == (
        "json.dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True, "
        "allow_nan=True, cls=None, indent=None, separators=None, default=None, "
        "sort_keys=False, **kw)"
    )
    assert [p["name"] for p in r["params"]][:3] == ["obj", "skipkeys", "ensure_ascii"]
    assert r["params"][1]["default"] == "False"
    assert r["parent"] == "json"
    assert r["doc"].startswith("Serialize obj to a JSON formatted str using this conversion table.")
    assert r["versions"] == []
    assert "(https://docs.python.org/3.11/library/stdtypes.html#str)" in r["doc_markdown"]


def test_json_dump_versionchanged(results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    versions = results[("py", "function", "json.dump")]["versions"]
    assert {
        "kind": "changed",
        "version": "3.6",
        "text": "All optional parameters are now keyword-only.",
    } in versions


def test_class_doc_excludes_members(results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    cls = results[("py", "class", "json.JSONEncoder")]
    method = results[("py", "method", "json.JSONEncoder.default")]
    assert method["parent"] == "json.JSONEncoder"
    assert method["doc"] and method["doc"][:80] not in cls["doc"]
    module = results[("py", "module", "json")]
    assert module["title"] == "json — JSON encoder and decoder"
    assert results[("py", "function", "json.dumps")]["doc"][:60] not in module["doc"]


def test_other_kinds(results: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    join = results[("py", "function", "os.path.join")]
    assert join["signature"] == "os.path.join(path, *paths)"
    assert join["versions"][0]["version"] == "3.6"
    c_func = results[("c", "function", "PyObject_GetAttr")]
    assert c_func["signature"] == "PyObject *PyObject_GetAttr(PyObject *o, PyObject *attr_name)"
    assert c_func["params"][0] == {
        "name": "o",
        "kind": "positional-only",
        "type": "PyObject *",
        "default": None,
        "description": None,
    }
    assert results[("c", "functionParam", "PyObject_GetAttr.o")]["parent"] == "PyObject_GetAttr"
    term = results[("std", "term", "BDFL")]
    assert term["title"] == "BDFL" and term["doc"].startswith("Benevolent Dictator For Life")
    assert results[("std", "label", "typesseq-list")]["title"] == "Lists"
    assert results[("std", "cmdoption", "-c")]["signature"] == "-c <command>"
    assert results[("std", "doc", "library/json")]["title"] == "json — JSON encoder and decoder"
    assert results[("py", "class", "str")]["signature"].splitlines() == [
        "class str(object='')",
        "class str(object=b'', encoding='utf-8', errors='strict')",
    ]


def _shown(value: Any, real: Any) -> bool:
    """A README value stands for the real one: equal, or cut at "..." (a string's pieces
    in order, the first at its start; a list's first elements, then "...")."""
    if isinstance(value, str) and "..." in value:
        pieces = value.split("...")
        at = 0
        for i, piece in enumerate(pieces):
            found = real.find(piece, at) if isinstance(real, str) else -1
            if found < 0 or (i == 0 and found != 0):
                return False
            at = found + len(piece)
        return True
    if isinstance(value, list) and value[-1:] == ["..."]:
        return isinstance(real, list) and real[: len(value) - 1] == value[:-1]
    return bool(value == real)


def test_the_readme_example_is_json_dumps_as_crawled() -> None:
    """README's JSON example is the item `invcrawl crawl /usr/share/doc/python3.11/html`
    writes for json.dumps (its fields in order, long values cut at "..."): it once showed
    a version note of json.dump."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("Each line of the output is one inventory entry", 1)[1]
    shown = json.loads(block.split("```json", 1)[1].split("```", 1)[0])
    url = f"file://{ROOT}/library/json.html"
    entry = TaskEntry("json.dumps", "py", "function", 1, "json.dumps", "json.dumps")
    (content,) = extract_page((ROOT / "library" / "json.html").read_bytes(), url, [entry])
    task = Task("json-page", url, (entry,))
    real = build_item(CrawlInfo("python3.11-html", "Python", "3.11"), task, entry, content)
    assert list(shown) == list(real)
    wrong = {k: (v, real[k]) for k, v in shown.items() if not _shown(v, real[k])}
    assert not wrong, wrong
