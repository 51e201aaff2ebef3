"""Inventory parsing on real corpus files and on crafted edge cases."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import sphobjinv
import sphobjinv.re
from hypothesis import given, settings
from hypothesis import strategies as st

from invcrawl.common.bounds import CLIPPED, HEADER_FIELD_CHARS
from invcrawl.common.inventory import (
    LINE_PATTERN,
    Entry,
    InventoryError,
    inventory_to_dict,
    parse_inventory,
)


def _find_corpus() -> Path:
    """``shared/corpus/inventories`` beside the checkout or beside any folder above it
    (a clone in a temporary folder under the work directory finds it too)."""
    tail = Path("shared", "corpus", "inventories")
    repo = Path(__file__).resolve().parents[2]
    for folder in repo.parents:
        if (folder / tail).is_dir():
            return folder / tail
    return repo.parent / tail  # absent: test_corpus_is_present names where it looked


CORPUS = _find_corpus()
CORPUS_FILES = sorted(CORPUS.glob("*.inv"))
HEADER = b"# Sphinx inventory version 2\n# Project: P\n# Version: 1.0\n"
ZLIB_LINE = b"# The remainder of this file is compressed using zlib.\n"


def make_inv(body: str, header: bytes = HEADER + ZLIB_LINE, level: int = 9) -> bytes:
    return header + zlib.compress(body.encode("utf-8"), level)


# CI sets this (.ci/run): there a missing corpus fails instead of skipping silently.
REQUIRE_SHARED = os.environ.get("INVCRAWL_TESTS_REQUIRE_SHARED", "") not in ("", "0")


def test_corpus_is_present() -> None:
    """The corpus lives outside the repository (``shared/`` beside the checkout): a clone
    elsewhere skips the corpus tests, naming the folder; CI turns that skip into a failure."""
    if len(CORPUS_FILES) >= 40:
        return
    message = f"corpus not found: no folder {CORPUS} (shared/corpus/inventories)"
    if REQUIRE_SHARED:
        pytest.fail(message + "; INVCRAWL_TESTS_REQUIRE_SHARED is set, so this is an error")
    pytest.skip(message)


def corpus_params(files: list[Path]) -> list[object]:
    """The corpus files as parameters; none: one parameter skipped (or failed in CI) with
    the missing folder as its reason, rather than pytest's anonymous empty-set skip."""
    if files:
        return [pytest.param(p, id=p.name) for p in files]
    reason = f"corpus not found: no folder {CORPUS} (test_corpus_is_present fails in CI)"
    return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]


@pytest.mark.parametrize("path", corpus_params(CORPUS_FILES))
def test_every_corpus_file_loads_or_is_rejected_clearly(path: Path) -> None:
    data = path.read_bytes()
    if not data:
        with pytest.raises(InventoryError, match="empty"):
            parse_inventory(data)
        return
    inv = parse_inventory(data)
    # Every line of the body is accounted for.
    assert len(inv.entries) + len(inv.malformed) == inv.body_lines
    summary = inventory_to_dict(inv)
    assert summary["parsed"] + summary["malformed"] == summary["body_lines"]
    assert sum(summary["types"].values()) == len(inv.entries)
    for entry in inv.entries:
        assert entry.name and entry.domain and entry.role
        assert not entry.uri.endswith("$"), entry
        assert entry.dispname != "-"


def test_lines_are_the_same_whatever_the_split_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body is split into lines a chunk at a time (bounded memory): chunk boundaries
    (here every few characters, on blank lines and CRLF too) change nothing."""
    bodies = [
        zlib.decompress(path.read_bytes().split(ZLIB_LINE.rstrip(b"\n"), 1)[1].lstrip(b"\n"))
        for path in CORPUS_FILES
        if ZLIB_LINE.rstrip(b"\n") in path.read_bytes()
    ][:12]
    crafted = "a py:function 1 x.html#$ -\r\n\n\nb py:class 1 y.html -\n \nbroken line\n"
    datas = [make_inv(crafted), make_inv(crafted.rstrip("\n"))]
    datas += [HEADER + ZLIB_LINE + zlib.compress(b) for b in bodies if b]
    assert len(datas) > (5 if CORPUS_FILES else 1)
    for data in datas:
        whole = parse_inventory(data)
        for chunk in (1, 7, 64):
            monkeypatch.setattr("invcrawl.common.inventory._CHUNK", chunk)
            split = parse_inventory(data)
            assert (split.entries, split.malformed) == (whole.entries, whole.malformed)
            assert split.body_lines == whole.body_lines
        monkeypatch.undo()
    crafted_inv = parse_inventory(datas[0])
    assert crafted_inv.body_lines == 6 and len(crafted_inv.entries) == 2


@pytest.mark.parametrize("path", corpus_params([p for p in CORPUS_FILES if p.stat().st_size]))
def test_corpus_entries_match_sphobjinv_where_it_can_read_them(path: Path) -> None:
    data = path.read_bytes()
    try:
        reference = sphobjinv.Inventory(data)
    except UnicodeDecodeError:
        pytest.skip("sphobjinv cannot decode this file (invcrawl can)")
    ours = parse_inventory(data)
    expected = [
        (o.name, o.domain, o.role, int(o.priority), o.uri_expanded, o.dispname_expanded)
        for o in reference.objects
    ]
    got = [(e.name, e.domain, e.role, e.priority, e.uri, e.dispname) for e in ours.entries]
    assert got == expected
    assert ours.project == (reference.project or None)


def test_project_and_version_and_counts() -> None:
    inv = parse_inventory(make_inv("a py:function 1 m.html#$ -\n\nb std:label -1 x.html#b B\n"))
    assert (inv.project, inv.version, inv.format) == ("P", "1.0", "v2")
    assert inv.body_lines == 3
    assert [m.reason for m in inv.malformed] == ["blank line"]
    assert inv.entries[0] == Entry("a", "py", "function", 1, "m.html#a", "a")
    assert inv.entries[1].dispname == "B"


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_header_fields_are_bounded_where_they_are_read(fmt: str) -> None:
    """Project and Version go into every item: a 2 MB one is cut to the documented bound
    (docs/items.md), whitespace collapsed; a real one is kept whole."""
    huge = b"P" * 2_000_000
    first = b"# Sphinx inventory version 1\n" if fmt == "v1" else b"# Sphinx inventory version 2\n"
    header = first + b"# Project: " + huge + b"\n# Version: 1.0  \t" + b"9" * 5000 + b"\n"
    if fmt == "v1":
        inv = parse_inventory(header + b"json mod library/json.html\n")
    else:
        inv = parse_inventory(make_inv("a py:function 1 m.html#$ -\n", header=header + ZLIB_LINE))
    assert inv.project is not None and inv.version is not None
    assert len(inv.project) == HEADER_FIELD_CHARS and inv.project.endswith(CLIPPED)
    assert len(inv.version) == HEADER_FIELD_CHARS and inv.version.startswith("1.0 999")
    assert [e.name for e in inv.entries] == ["a" if fmt == "v2" else "json"]
    real = parse_inventory(make_inv("a py:function 1 m.html#$ -\n", header=HEADER.replace(
        b"P\n", b"Jupyter   Qt Console\n") + ZLIB_LINE))  # fmt: skip
    assert real.project == "Jupyter Qt Console"


def test_dollar_is_expanded_only_at_the_end_and_dash_only_whole() -> None:
    body = (
        "x.$y py:data 1 p.html#x.$y -\n"  # '$' inside: kept
        "f py:function 1 p.html#module-$ -\n"
        "g py:function 1 p.html#g a-b\n"
    )
    e = parse_inventory(make_inv(body)).entries
    assert e[0].uri == "p.html#x.$y"
    assert e[1].uri == "p.html#module-f"
    assert e[2].dispname == "a-b"


def test_names_with_spaces_and_digit_tokens_are_kept() -> None:
    # Sphinx's own regex parses this with type 'part' and drops it.
    line = (
        "intro/tutorial01:writing your first django app, part 1 std:label -1 "
        "intro/tutorial01/#writing-your-first-django-app-part-1 Writing part 1\n"
    )
    (entry,) = parse_inventory(make_inv(line)).entries
    assert entry.name == "intro/tutorial01:writing your first django app, part 1"
    assert (entry.domain, entry.role) == ("std", "label")


def test_malformed_lines_are_counted_with_reasons() -> None:
    body = "good py:function 1 a.html#good -\nno fields here\n js:class 1 d.html#$ -\n"
    inv = parse_inventory(make_inv(body))
    assert len(inv.entries) == 1
    assert len(inv.malformed) == 2
    assert all(m.reason for m in inv.malformed)
    assert inv.malformed[0].lineno == 2


def test_old_header_with_blank_line_and_zlib_level_0() -> None:
    header = b"# Sphinx inventory version 2\n# Project: P\n# Version: 1.0\n\n" + ZLIB_LINE
    inv = parse_inventory(make_inv("a py:function 1 m.html#$ -\n", header=header, level=0))
    assert [e.name for e in inv.entries] == ["a"]


def test_version_1_inventory() -> None:
    data = (
        b"# Sphinx inventory version 1\n# Project: Old\n# Version: 0.1\n"
        b"json mod library/json.html\njson.dumps function library/json.html\n"
    )
    inv = parse_inventory(data)
    assert inv.format == "v1" and inv.project == "Old"
    assert [(e.key, e.uri) for e in inv.entries] == [
        ("py:module:json", "library/json.html#module-json"),
        ("py:function:json.dumps", "library/json.html#json.dumps"),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"<!DOCTYPE html><html><body>Not found</body></html>", "HTML page"),
        (b"PK\x03\x04 zip", "not a Sphinx inventory"),
        (HEADER + b"# no compression line\nxx", "zlib"),
        (HEADER + ZLIB_LINE + b"definitely not zlib", "not valid zlib"),
    ],
)
def test_bad_input_gives_one_line_errors(data: bytes, message: str) -> None:
    with pytest.raises(InventoryError, match=message) as info:
        parse_inventory(data)
    assert "\n" not in str(info.value)


def test_decompression_bomb_fails_fast_with_bounded_memory() -> None:
    # 200 MiB of zeros compress to ~200 KiB; the cap stops inflation at 1 MiB.
    bomb = HEADER + ZLIB_LINE + zlib.compress(b"\0" * (200 * 1024 * 1024), 9)
    with pytest.raises(InventoryError, match="decompression bomb"):
        parse_inventory(bomb, max_inflated=1024 * 1024)


def test_just_under_the_cap_is_accepted() -> None:
    body = "a py:function 1 m.html#$ -\n" * 1000
    data = make_inv(body)
    inv = parse_inventory(data, max_inflated=len(body.encode()))
    assert len(inv.entries) == 1000


names = st.text(
    alphabet=st.characters(
        blacklist_categories=["Cs", "Cc", "Zs", "Zl", "Zp"], blacklist_characters="#$"
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            names,
            st.sampled_from(["py", "c", "std", "cpp"]),
            st.sampled_from(["function", "label", "class", "doc"]),
            st.integers(-1, 2),
            st.booleans(),
            st.booleans(),
        ),
        min_size=0,
        max_size=30,
    )
)
def test_roundtrip_of_written_inventories(
    rows: list[tuple[str, str, str, int, bool, bool]],
) -> None:
    """What Sphinx's writer produces (with both abbreviations) parses back exactly."""
    lines = []
    expected = []
    for name, domain, role, prio, abbreviate_uri, abbreviate_disp in rows:
        anchor = name.replace(" ", "-")
        uri = "page.html#" + ("$" if abbreviate_uri and anchor == name else anchor)
        disp = "-" if abbreviate_disp else f"Title {name}"
        lines.append(f"{name} {domain}:{role} {prio} {uri} {disp}")
        expected.append(
            (
                name,
                domain,
                role,
                prio,
                f"page.html#{anchor}",
                name if abbreviate_disp else f"Title {name}",
            )
        )
    inv = parse_inventory(make_inv("\n".join(lines) + ("\n" if lines else "")))
    got = [(e.name, e.domain, e.role, e.priority, e.uri, e.dispname) for e in inv.entries]
    assert got == expected
    assert inv.body_lines == len(rows)


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.99])
def test_a_cut_zlib_stream_is_an_error_not_a_short_inventory(cut: float) -> None:
    """A download cut short with a consistent Content-Length: zlib inflates the part it
    has without complaint; the inventory must be refused (one line), never read as the
    subset of entries before the cut."""
    body = "".join(f"mod.f{i} py:function 1 api.html#$ -\n" for i in range(400))
    whole = make_inv(body)
    assert len(parse_inventory(whole).entries) == 400
    stream = whole[len(HEADER + ZLIB_LINE) :]
    cut_data = HEADER + ZLIB_LINE + stream[: int(len(stream) * cut)]
    with pytest.raises(InventoryError, match="truncated") as info:
        parse_inventory(cut_data)
    assert "\n" not in str(info.value)


def test_an_overlong_line_is_malformed() -> None:
    long_name = "x" * 20_000
    inv = parse_inventory(
        make_inv(f"{long_name} py:function 1 a.html#$ -\nok py:function 1 a.html#$ -\n")
    )
    assert [e.name for e in inv.entries] == ["ok"]
    assert inv.malformed[0].reason.startswith("longer than")


def test_the_line_pattern_is_sphobjinvs() -> None:
    """invcrawl writes sphobjinv's pattern out (importing it costs a producer 0.1 s of
    jsonschema): it must stay the same pattern."""
    assert LINE_PATTERN.pattern == sphobjinv.re.p_data.pattern
    assert LINE_PATTERN.flags == sphobjinv.re.p_data.flags


def test_parsing_does_not_import_sphobjinv() -> None:
    """What the pattern was written out for: a producer parses without sphobjinv."""
    code = (
        "import sys, zlib; from invcrawl.common.inventory import parse_inventory; "
        "parse_inventory(b'# Sphinx inventory version 2\\n# Project: P\\n# Version: 1\\n"
        "# The remainder of this file is compressed using zlib.\\n' + "
        "zlib.compress(b'a b py:function 1 x.html -\\n')); "
        "assert 'sphobjinv' not in sys.modules, 'sphobjinv imported'"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


@pytest.mark.parametrize("priority", ["9223372036854775808", "-9223372036854775809", "9" * 5000])
def test_a_priority_beyond_64_bits_is_a_malformed_line(priority: str) -> None:
    """Every item of an entry carries its priority into JSON, whose encoder stops at 64
    bits (and ``int`` refuses 4,300 digits): such a line is malformed, not a crash of the
    parser or of every consumer that reads the page."""
    inv = parse_inventory(
        make_inv(
            f"big py:function {priority} a.html#$ -\n"
            "max py:function 9223372036854775807 a.html#$ -\n"
            "min py:function -9223372036854775808 a.html#$ -\n"
        )
    )
    assert [e.name for e in inv.entries] == ["max", "min"]
    assert [m.reason for m in inv.malformed] == ["priority out of range (a 64-bit integer)"]
