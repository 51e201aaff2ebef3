"""Extraction against the fixture site built with several Sphinx versions and themes.

For each combo of ``sites.build.COMBOS`` this reads the built ``objects.inv``, groups the
entries by page, runs ``invcrawl.common.extract.extract_page`` on every content page and
compares the result with the hand-written ground truth in ``sites.expected``. All
mismatches of a combo are collected and reported in one assertion.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sphobjinv

if __name__ == "__main__":  # run as a script: make tests/ and the repo importable
    _here = Path(__file__).resolve()
    sys.path[:0] = [str(_here.parents[1]), str(_here.parents[2])]

from sites.build import COMBOS, BuiltSite
from sites.expected import (
    ANY,
    CONTAINER_ROLES,
    EXPECTED,
    NO_SIGNATURE_ROLES,
    NON_CONTENT_PAGES,
    norm_sig,
    norm_ws,
)
from sites.fixtures import built_sites_or_skip

from support.markdown_check import stray_markers
from support.targets import target

pytestmark = [pytest.mark.matrix, pytest.mark.e2e, pytest.mark.timeout(900)]

COMBO_IDS = [c.id for c in COMBOS]
BASE_URL = "https://fixture.invcrawl.test"
# Permalink glyphs (Sphinx's pilcrow, sphinx-rtd-theme's U+F0C1 icon) and viewcode links are
# never content.
NOISE = ("\u00b6", "\uf0c1", "[source]")
BUILTIN_LABELS = {
    "std:label:genindex",
    "std:label:modindex",
    "std:label:py-modindex",
    "std:label:search",
}


@dataclass(frozen=True)
class Entry:
    key: str
    name: str
    domain: str
    role: str
    page: str
    anchor: str
    dispname: str


def load_entries(site: BuiltSite) -> list[Entry]:
    inv = sphobjinv.Inventory(fname_zlib=str(site.inventory))
    entries = []
    for obj in inv.objects:
        uri = obj.uri_expanded
        page = uri.split("#", 1)[0]
        anchor = uri.rsplit("#", 1)[1] if "#" in uri else ""
        entries.append(
            Entry(
                f"{obj.domain}:{obj.role}:{obj.name}",
                obj.name,
                obj.domain,
                obj.role,
                page,
                anchor,
                obj.dispname_expanded,
            )
        )
    return entries


def _extract_api() -> tuple[Any, Any]:
    try:
        from invcrawl.common.extract import extract_page
    except ModuleNotFoundError as exc:
        if exc.name in ("invcrawl.common.extract", "invcrawl.common"):
            pytest.skip("invcrawl.common.extract is not available yet")
        raise
    return target, extract_page


_extracted: dict[str, dict[str, tuple[Entry, dict[str, Any]]]] = {}


def extract_site(site: BuiltSite) -> tuple[dict[str, tuple[Entry, dict[str, Any]]], list[str]]:
    """Run the extractor on every content page. Returns key -> (entry, content) and the
    problems met while extracting (exceptions, wrong result counts)."""
    target_cls, extract_page = _extract_api()
    by_page: dict[str, list[Entry]] = defaultdict(list)
    for entry in load_entries(site):
        if entry.page not in NON_CONTENT_PAGES:
            by_page[entry.page].append(entry)
    results: dict[str, tuple[Entry, dict[str, Any]]] = {}
    problems: list[str] = []
    for page, entries in sorted(by_page.items()):
        body = (site.html / page).read_bytes()
        targets = [target_cls(e.name, e.domain, e.role, e.anchor, e.dispname) for e in entries]
        try:
            contents = extract_page(body, f"{BASE_URL}/{site.combo.id}/{page}", targets)
        except Exception as exc:
            problems.append(f"{page}: extract_page raised {type(exc).__name__}: {exc}")
            continue
        if len(contents) != len(targets):
            problems.append(f"{page}: {len(targets)} targets but {len(contents)} results")
        for entry, content in zip(entries, contents, strict=False):
            results[entry.key] = (entry, dict(content))
    return results, problems


# ------------------------------------------------------------------------------ comparison


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"


def _mismatch(out: list[str], key: str, what: str, expected: Any, got: Any) -> None:
    out.append(f"{key}  [{what}]\n      expected: {_show(expected)}\n      got:      {_show(got)}")


def _match_text(expected: Any, got: Any, *, prefix: bool = False) -> bool:
    """ANY matches everything; None means empty; a tuple lists alternatives."""
    if expected is ANY:
        return True
    if expected is None:
        return not norm_ws(got if isinstance(got, str) else (str(got) if got else ""))
    got_text = norm_ws(got if isinstance(got, str) else ("" if got is None else str(got)))
    options = expected if isinstance(expected, tuple) else (expected,)
    return any(
        got_text.startswith(norm_ws(o)) if prefix else got_text == norm_ws(o) for o in options
    )


def _param_name(name: Any) -> str:
    return str(name or "").lstrip("*")


def _check_doc(out: list[str], key: str, role: str, expected: str, got_doc: str) -> None:
    doc = norm_ws(got_doc)
    exp = norm_ws(expected)
    if doc.startswith(exp):
        return
    # Section-like entries may start with their section title ("Core API Core helpers ...").
    idx = doc.find(exp)
    if role in ("py:module", "std:label", "std:doc") and 0 < idx <= 80 and "." not in doc[:idx]:
        return
    _mismatch(out, key, "doc starts with", exp, doc[: len(exp) + 60])


def compare(key: str, exp: dict[str, Any], got: dict[str, Any]) -> list[str]:
    out: list[str] = []
    role = ":".join(key.split(":", 2)[:2])
    if "signature" in exp and norm_sig(got.get("signature")) != norm_sig(exp["signature"]):
        _mismatch(out, key, "signature", norm_sig(exp["signature"]), norm_sig(got.get("signature")))
    for part in exp.get("signature_contains", []):
        if norm_sig(part) not in norm_sig(got.get("signature")):
            _mismatch(
                out, key, "signature contains", norm_sig(part), norm_sig(got.get("signature"))
            )
    if "doc" in exp:
        _check_doc(out, key, role, exp["doc"], got.get("doc") or "")
        if not norm_ws(got.get("doc_markdown")):
            _mismatch(out, key, "doc_markdown non-empty", "<non-empty>", got.get("doc_markdown"))
    for text in exp.get("doc_excludes", []):
        if norm_ws(text) in norm_ws(got.get("doc")):
            _mismatch(out, key, "doc must not contain", text, norm_ws(got.get("doc")))
    if "labels" in exp and got.get("labels") != exp["labels"]:
        _mismatch(out, key, "labels", exp["labels"], got.get("labels"))
    for field in ("title", "parent"):
        if field in exp and not _match_text(exp[field], got.get(field)):
            _mismatch(out, key, field, exp[field], got.get(field))
    if "params" in exp:
        got_params = [
            p
            for p in (got.get("params") or [])
            if norm_ws(str(p.get("name") or "")) not in ("", "*", "/")
        ]
        exp_names = [p["name"] for p in exp["params"]]
        got_names = [_param_name(p.get("name")) for p in got_params]
        if got_names != exp_names:
            _mismatch(out, key, "param names", exp_names, got_names)
        by_name = {_param_name(p.get("name")): p for p in got_params}
        for p in exp["params"]:
            gp = by_name.get(p["name"])
            if gp is None:
                continue
            for field in ("type", "default", "description", "kind"):
                if not _match_text(p[field], gp.get(field), prefix=field == "description"):
                    _mismatch(out, key, f"param {p['name']}.{field}", p[field], gp.get(field))
    if "returns" in exp:
        # ``returns`` is a list of return values; the ground truth here has one at most
        er, values = exp["returns"], got.get("returns")
        gr = values[0] if isinstance(values, list) and len(values) == 1 else None
        if er is None:
            if values and any(
                norm_ws(v.get("type")) or norm_ws(v.get("description")) for v in values
            ):
                _mismatch(out, key, "returns", None, values)
        elif gr is None:
            _mismatch(out, key, "returns", er, values)
        else:
            if not _match_text(er["type"], gr.get("type")):
                _mismatch(out, key, "returns.type", er["type"], gr.get("type"))
            if not _match_text(er["description"], gr.get("description"), prefix=True):
                _mismatch(out, key, "returns.description", er["description"], gr.get("description"))
    if "raises" in exp:
        got_raises = got.get("raises") or []
        exp_types = [r["type"] for r in exp["raises"]]
        got_types = [norm_ws(r.get("type")) for r in got_raises]
        if got_types != exp_types:
            _mismatch(out, key, "raises types", exp_types, got_types)
        else:
            for er, gr in zip(exp["raises"], got_raises, strict=True):
                if not _match_text(er["description"], gr.get("description"), prefix=True):
                    _mismatch(
                        out,
                        key,
                        f"raises {er['type']}.description",
                        er["description"],
                        gr.get("description"),
                    )
    if "versions" in exp:
        got_versions = got.get("versions") or []
        exp_kv = [(v["kind"], v["version"]) for v in exp["versions"]]
        got_kv = [(v.get("kind"), v.get("version")) for v in got_versions]
        if got_kv != exp_kv:
            _mismatch(out, key, "versions (kind, version)", exp_kv, got_kv)
        else:
            for ev, gv in zip(exp["versions"], got_versions, strict=True):
                if not _match_text(ev["text"], gv.get("text"), prefix=True):
                    _mismatch(
                        out,
                        key,
                        f"versions {ev['kind']} {ev['version']} text",
                        ev["text"],
                        gv.get("text"),
                    )
    return out


def check_site(site: BuiltSite) -> tuple[list[str], int]:
    """All mismatches for one combo, and how many symbols were compared to ground truth."""
    results, problems = extract_site(site)
    out = list(problems)
    for key, (entry, got) in sorted(results.items()):
        if got.get("status") != "ok":
            out.append(
                f"{key}  [status] expected ok, got {got.get('status')!r} "
                f"(reason {got.get('reason')!r}, anchor {entry.anchor!r} on {entry.page})"
            )
        role = f"{entry.domain}:{entry.role}"
        if role not in NO_SIGNATURE_ROLES and not norm_ws(got.get("signature")):
            out.append(f"{key}  [signature] empty for an object description")
        stray = stray_markers(got.get("doc") or "", got.get("doc_markdown") or "")
        if stray:
            _mismatch(out, key, "doc_markdown renders (CommonMark)", "<no stray>", stray)
        for field in ("signature", "title", "doc", "doc_markdown"):
            value = got.get(field) or ""
            noise = [n for n in NOISE if n in value]
            if noise:
                _mismatch(
                    out,
                    key,
                    f"{field} without permalink/[source] noise",
                    "<none>",
                    f"{noise} in {norm_ws(value)}",
                )
    compared = 0
    for key, exp in EXPECTED.items():
        if key not in results:
            out.append(f"{key}  [missing] no extraction result for this inventory entry")
            continue
        compared += 1
        out.extend(compare(key, exp, results[key][1]))
    # A container's doc never contains the doc of one of its members (ground-truth parents).
    for key in EXPECTED:
        role, name = ":".join(key.split(":", 2)[:2]), key.split(":", 2)[2]
        if role not in CONTAINER_ROLES or key not in results:
            continue
        container_doc = norm_ws(results[key][1].get("doc"))
        for member_key, member in EXPECTED.items():
            if (
                member.get("parent") == name
                and member.get("doc")
                and norm_ws(member["doc"]) in container_doc
            ):
                _mismatch(
                    out,
                    key,
                    f"doc contains member {member_key}",
                    "<not contained>",
                    norm_ws(member["doc"]),
                )
    return out, compared


# ----------------------------------------------------------------------------------- tests


@pytest.fixture(scope="session")
def built_sites() -> dict[str, BuiltSite]:
    return built_sites_or_skip()


@pytest.mark.parametrize("combo_id", COMBO_IDS)
def test_inventory_matches_ground_truth(built_sites: dict[str, BuiltSite], combo_id: str) -> None:
    """The built inventory has exactly the entries the ground truth covers (so every entry
    of the fixture site is asserted at least for its status)."""
    keys = {e.key for e in load_entries(built_sites[combo_id])}
    missing = sorted(set(EXPECTED) - keys)
    unexpected = sorted(keys - set(EXPECTED) - BUILTIN_LABELS)
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {unexpected}"


@pytest.mark.parametrize("combo_id", COMBO_IDS)
def test_fixture_markup(built_sites: dict[str, BuiltSite], combo_id: str) -> None:
    """The site exercises the markup it is meant to exercise."""
    site = built_sites[combo_id]
    api = (site.html / "api.html").read_text(encoding="utf-8")
    assert "viewcode-link" in api, "sphinx.ext.viewcode [source] links are missing"
    dt = re.search(r'<dt[^>]*id="fixturepkg\.core\.configure_everything".*?</dt>', api, re.S)
    assert dt, "configure_everything dt not found"
    wrapped = "<dl>" in dt.group(0)
    major, minor = (int(x) for x in site.combo.sphinx.split(".")[:2])
    assert wrapped == ((major, minor) >= (7, 1)), (
        f"nested <dl> in the long signature's dt: {wrapped} on Sphinx {site.combo.sphinx}"
    )
    usage = (site.html / "usage.html").read_text(encoding="utf-8")
    assert re.search(r'<dt id="term-widget">.*?</dt>\s*<dt id="term-gadget">', usage, re.S), (
        "glossary synonyms should be two dts sharing one dd"
    )


@pytest.mark.parametrize("combo_id", COMBO_IDS)
def test_extraction_matches_ground_truth(built_sites: dict[str, BuiltSite], combo_id: str) -> None:
    site = built_sites[combo_id]
    mismatches, compared = check_site(site)
    assert compared >= 40
    header = (
        f"{len(mismatches)} mismatch(es) on {combo_id} (Sphinx {site.combo.sphinx}, "
        f"{site.combo.theme}; {compared} symbols compared; html in {site.html}):"
    )
    assert not mismatches, "\n".join([header, *("  " + m for m in mismatches)])


def main() -> None:  # pragma: no cover - manual helper
    """``python tests/e2e/test_matrix.py [combo...]``: print every mismatch per combo."""
    from sites.build import build_all

    for cid, site in build_all(sys.argv[1:] or None).items():
        mismatches, compared = check_site(site)
        print(f"== {cid}: {len(mismatches)} mismatches, {compared} symbols compared")
        for m in mismatches:
            print("  " + m)


if __name__ == "__main__":  # pragma: no cover
    main()
