"""pydoctor sites, end to end: the fixture package ``pdfixture`` (tests/sites/pysrc)
documented by pydoctor 25.x and 22.x (pinned, each in a build venv of its own:
tests/sites/pydoctor_build.py), served over loopback HTTP and crawled by ``invcrawl
crawl``; every item compared with the ground truth read from the sources with ``ast``
(tests/sites/pydoctor_oracle.py), and the issue's targets counted on the items by the
pages' own reading (tests/support/doc_targets.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sites.build import BuildError, PipUnreachable
from sites.pydoctor_build import SITES_BY_ID, BuiltPydoctor, build_site
from sites.pydoctor_oracle import Symbol, expected_versions, read_sources

from invcrawl.localredis.server import RedisServer
from support.cli import invcrawl
from support.doc_targets import count_targets
from support.httpserver import serve
from support.markdown_check import stray_markers
from support.pattern_sites import pattern_items, pattern_site

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

SITE_IDS = list(SITES_BY_ID)


def _built(site_id: str) -> BuiltPydoctor:
    try:
        return build_site(SITES_BY_ID[site_id], log=lambda _m: None)
    except PipUnreachable as exc:
        pytest.skip(f"pydoctor cannot be installed, no package index: {str(exc).splitlines()[0]}")
    except BuildError as exc:
        pytest.fail(f"pydoctor site {site_id} failed to build:\n{exc}", pytrace=False)


def _norm(s: Any) -> str:
    return " ".join(str(s or "").split())


def _value(s: str | None) -> str | None:
    """A default or annotation compared with quotes and spacing made alike."""
    if s is None:
        return None
    return re.sub(r"\s+", "", s.replace('"', "'"))


def _compare(sym: Symbol, got: dict[str, Any], site_id: str) -> list[str]:
    out: list[str] = []
    key = sym.name

    def bad(what: str, expected: Any, value: Any) -> None:
        out.append(f"{key} [{what}]\n    expected: {expected!r}\n    got:      {value!r}")

    if got["status"] != "ok":
        bad("status", "ok", (got["status"], got.get("reason")))
        return out
    if got.get("generator") != "pydoctor":
        bad("generator", "pydoctor", got.get("generator"))
    if _norm(got.get("parent")) != _norm(sym.parent):
        bad("parent", sym.parent, got.get("parent"))
    doc = _norm(got.get("doc"))
    # (a deprecation note of the decorator is written before the docstring)
    starts = doc.startswith(_norm(sym.doc)) or bool(sym.decorator_deprecation)
    if sym.doc and not (starts and _norm(sym.doc) in doc):
        bad("doc starts with", sym.doc, doc[:120])
    if sym.doc and not _norm(got.get("doc_markdown")):
        bad("doc_markdown", "<non-empty>", got.get("doc_markdown"))
    if sym.doc is None and doc:
        bad("doc of an undocumented symbol", "", doc[:120])
    if set(got.get("labels") or []) != sym.labels:
        bad("labels", sorted(sym.labels), got.get("labels"))
    want_versions = expected_versions(sym, SITES_BY_ID[site_id].decorator_deprecations)
    got_versions = [(v["kind"], v["version"]) for v in got.get("versions") or []]
    if got_versions != want_versions:
        bad("versions", want_versions, got_versions)
    if sym.role in ("function", "method") or (sym.role == "class" and sym.params):
        if sym.role != "class" and not got.get("signature"):
            bad("signature", "<non-empty>", got.get("signature"))
        params = got.get("params") or []
        names = [p["name"] for p in params]
        if names != [p.name for p in sym.params]:
            bad("param names", [p.name for p in sym.params], names)
        else:
            for want, have in zip(sym.params, params, strict=True):
                if have["kind"] != want.kind:
                    bad(f"param {want.name}.kind", want.kind, have["kind"])
                if _value(have["default"]) != _value(want.default):
                    bad(f"param {want.name}.default", want.default, have["default"])
                types = {_value(want.annotation), _value(want.field_type)} - {None}
                if types and _value(have["type"]) not in types:
                    bad(f"param {want.name}.type", sorted(t or "" for t in types), have["type"])
                if not types and have["type"] is not None:
                    bad(f"param {want.name}.type", None, have["type"])
                if want.description and not _norm(have["description"]).startswith(
                    _norm(want.description)
                ):
                    bad(f"param {want.name}.description", want.description, have["description"])
                if not want.description and have["description"]:
                    bad(f"param {want.name}.description", None, have["description"])
    if sym.role in ("function", "method"):
        returns = got.get("returns") or []
        want_type = _value(sym.return_type)
        if sym.returns or sym.return_type:
            if len(returns) != 1:
                bad("returns", (sym.return_type, sym.returns), returns)
            else:
                if want_type and _value(returns[0]["type"]) != want_type:
                    bad("returns.type", sym.return_type, returns[0]["type"])
                if sym.returns and not _norm(returns[0]["description"]).startswith(
                    _norm(sym.returns)
                ):
                    bad("returns.description", sym.returns, returns[0]["description"])
        raises = [r["type"] for r in got.get("raises") or []]
        if raises != sym.raises:
            bad("raises", sym.raises, raises)
    if sym.role == "class":
        bases = ", ".join(sym.bases)
        want_sig = f"class {sym.name.rsplit('.', 1)[-1]}" + (f"({bases})" if bases else "")
        if _norm(got.get("signature")) != want_sig:
            bad("class signature", want_sig, got.get("signature"))
    return out


def _crawl(built: BuiltPydoctor, tmp_path: Path) -> tuple[list[dict[str, Any]], str]:
    out = tmp_path / "items.jsonl"
    with RedisServer(tmp_path / "redis") as server, serve(built.html) as http:
        result = invcrawl(
            "crawl", http.url, "--redis", server.url, "--crawl-id", "pd",
            "--consumers", "1", "-o", str(out), "--progress", "lines",
            cwd=tmp_path,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        report = invcrawl("report", "--redis", server.url, "--crawl-id", "pd", cwd=tmp_path)
        assert report.code == 0, report.stderr
    items = [json.loads(line) for line in out.read_text().splitlines() if line]
    return items, result.stdout + result.stderr + report.stdout


@pytest.mark.parametrize("site_id", SITE_IDS)
def test_pydoctor_site_matches_the_sources(site_id: str, tmp_path: Path) -> None:
    built = _built(site_id)
    oracle = read_sources()
    items, output = _crawl(built, tmp_path)
    by_name = {i["name"]: i for i in items}
    assert sorted(by_name) == sorted(oracle), "the inventory is the package's symbols"
    mismatches: list[str] = []
    for name, sym in oracle.items():
        mismatches += _compare(sym, by_name[name], site_id)
    # A container's doc never holds a member's doc (ground truth: the sources' parents).
    for name, sym in oracle.items():
        container = _norm(by_name[name]["doc"])
        for member in sym.members:
            text = oracle[member].doc
            if text and sym.doc and _norm(text) in container and _norm(text) not in _norm(sym.doc):
                mismatches.append(f"{name} [doc holds member {member}]: {text!r}")
    header = f"{len(mismatches)} mismatch(es) on {site_id} (html in {built.html}):"
    assert not mismatches, "\n".join([header, *mismatches])

    def page(url: str) -> bytes | None:
        path = built.html / url.rsplit("/", 1)[-1]
        return path.read_bytes() if path.is_file() else None

    targets, bad = count_targets(items, len(oracle), page)
    c = targets.counts
    assert (c["accounting"], c["anchor"], c["empty_signature"], c["params"]) == (0, 0, 0, 0), bad
    assert (c["heading"], c["member_body"], c["parent"], c["page_doc"]) == (0, 0, 0, 0), bad
    assert c["calls"] >= 15 and c["pages"] >= 9 and c["members"] >= 30, targets.line()
    # the crawl's summary and the report count the items per generator
    assert re.search(r"pydoctor\s+42\b", output), output


# ------------------------------------------------------------ the pattern sites (issue 49)

PATTERN_SITES = ["pdpat-21", "pdpat-22", "pdpat-23", "pdpat-24", "pdpat-25"]


def pattern_mismatches(site_id: str) -> tuple[list[str], int]:
    """(mismatches, entries checked) of one pdpat site against the oracle."""
    from sites.patterns_oracle import compare, pd_truth

    truth = pd_truth(int(site_id.rsplit("-", 1)[1]))
    out: list[str] = []
    checked = 0
    for entry, item in pattern_items(pattern_site(site_id)):
        if item["status"] != "ok":
            out.append(f"{entry.name}: status {item['status']} ({item['reason']})")
        markdown = item["doc_markdown"]
        if "`[" in markdown or "](" in "".join(re.findall(r"`[^`]*`", markdown)):
            out.append(f"{entry.name}: a link inside a code span: {markdown!r}")
        stray = stray_markers(item["doc"], markdown)
        if stray:
            out.append(f"{entry.name}: doc_markdown renders stray markers {stray}")
        sym = truth.get(entry.name)
        if sym is None:
            continue
        checked += 1
        out.extend(f"{entry.name}: {bad}" for bad in compare(sym, item))
    return out, checked


@pytest.mark.parametrize("site_id", PATTERN_SITES)
def test_pattern_sites_match_the_oracle(site_id: str) -> None:
    """Issue 49's pydoctor patterns on every release since 21: class pages merged with the
    class docstring's fields, linked types rendering, documented names no signature has
    in doc_only_params, overloads."""
    mismatches, checked = pattern_mismatches(site_id)
    assert checked == 5
    assert not mismatches, "\n".join(mismatches)
