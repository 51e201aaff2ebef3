"""Symbol search's pure logic (issue 38): the terms of names and summaries, the first
sentence, queries of any characters, limits, the ranking tiers, and the choice of a
project and a version that never substitutes one."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from invcrawl.common.search import terms as t
from invcrawl.common.search.ranking import (
    MAX_QUERY_CHARS,
    SearchInputError,
    Tier,
    check_limit,
    is_deprecated,
    lookup_terms,
    parse_query,
    rank,
)
from invcrawl.common.search.selection import (
    AmbiguousVersion,
    SelectionError,
    UnknownProject,
    UnknownVersion,
    match_project,
    select_version,
)
from invcrawl.common.search.summary import SUMMARY_CHARS, first_sentence


def test_name_tokens_split_dots_camel_and_underscores() -> None:
    tokens = t.name_tokens("http.server.BaseHTTPRequestHandler.send_error")
    for token in ("http", "server", "base", "request", "handler", "send", "error"):
        assert token in tokens
    assert "send_error" in tokens and "basehttprequesthandler" in tokens
    assert t.name_tokens("getHTTPResponse2") == ["gethttpresponse2", "get", "http", "response"]


def test_last_component() -> None:
    assert t.last_component("requests.sessions.Session") == "Session"
    assert t.last_component("json") == "json"
    assert t.last_component("...") == "..."


def test_summary_words_skip_stopwords_and_repeat() -> None:
    assert t.words("Serialize obj to a JSON formatted str, a JSON string.") == [
        "serialize",
        "obj",
        "json",
        "formatted",
        "str",
        "string",
    ]


def test_stems_join_forms_of_a_word() -> None:
    forms = ["parse", "parses", "parsed", "parsing"]
    assert {t.stem(w) for w in forms} == {"pars"}
    assert t.stem("directories") == t.stem("directory") == "directory"
    assert t.stem("strings") == t.stem("string") == "string"
    assert t.stem("process") == t.stem("processes") == "process"
    assert t.stem("utf8") == "utf8" and t.stem("is") == "is"
    assert t.summary_words("Parses the directories.") == ["pars", "directory"]


def test_index_terms_are_short_and_of_their_kind() -> None:
    terms = t.index_terms("json.dumps", "Serialize obj to a JSON formatted str.")
    assert terms[0].startswith(t.FULL_NAME) and len(terms[0]) == 9
    assert ".dumps" in terms and ">dum" in terms and "~json" in terms and "+serializ" in terms
    assert "~dumps" not in terms  # the last component is its own term
    long = t.index_terms("a." + "x" * 500, "")
    assert all(len(term.encode()) <= t.TERM_BYTES for term in long)


def defined_terms(name: str, summary: str) -> list[str]:
    """index_terms as its docstring defines it, from the public tokenizers."""
    out: dict[str, None] = {}
    if "." in name.strip("."):
        out[t.full_name_term(name)] = None
    last = t.last_component(name)
    out[t.last_term(name)] = None
    prefix = t.prefix_term(last)
    if prefix is not None and len(last) > t.PREFIX_CHARS:
        out[prefix] = None
    for token in t.name_tokens(name):
        if token != last.lower():
            out[t.cut(t.NAME_PART + token)] = None
    for word in t.summary_words(summary, t.SUMMARY_WORDS):
        out[t.cut(t.WORD + word)] = None
    return list(out)


NAMEISH = st.text(st.sampled_from("abcXYZ09_.-é" + "x" * 3), max_size=80)


SUMMARYISH = st.lists(st.text(st.sampled_from("abcdeingsXé"), min_size=1, max_size=9), max_size=24)


@given(NAMEISH, SUMMARYISH.map(" ".join))
def test_index_terms_as_defined(name: str, summary: str) -> None:
    """index_terms over its cached component and stem terms (what every commit
    computes) gives exactly the terms its definition gives, in the same order."""
    assert t.index_terms(name, summary) == defined_terms(name, summary)


@pytest.mark.parametrize(
    ("doc", "summary"),
    [
        ("Serialize obj to a JSON str. More text here.", "Serialize obj to a JSON str."),
        ("Use e.g. this one. Then that.", "Use e.g. this one."),
        ("First line without a period\n\nSecond paragraph.", "First line without a period"),
        ("Is it? Yes.", "Is it?"),
        ("", ""),
        (None, ""),
        ("Version 3.11 added it. More.", "Version 3.11 added it."),
    ],
)
def test_first_sentence(doc: str | None, summary: str) -> None:
    assert first_sentence(doc) == summary


def test_first_sentence_is_bounded() -> None:
    summary = first_sentence("word " * 10_000)
    assert len(summary) <= SUMMARY_CHARS + 1 and summary.endswith("…")


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_query_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(SearchInputError, match="empty query"):
        parse_query(text)


def test_long_query_is_refused_in_one_line() -> None:
    with pytest.raises(SearchInputError, match="at most") as raised:
        parse_query("x" * 10_240)
    assert "\n" not in str(raised.value)
    assert parse_query("x" * MAX_QUERY_CHARS).text


@given(st.text(max_size=300))
def test_any_characters_parse_or_refuse_cleanly(text: str) -> None:
    try:
        query = parse_query(text)
    except SearchInputError:
        assert not text.strip()
        return
    terms = lookup_terms(query)
    assert all(len(term.term.encode()) <= t.TERM_BYTES + 4 for term in terms)
    rank(query, "json.dumps", "Serialize obj to a JSON formatted str.", "function", "py")


@pytest.mark.parametrize("query", ["*", "%a+", "[a-z]+$", "(.*)", "%", "?", "\\", "json.*"])
def test_pattern_characters_are_plain_text(query: str) -> None:
    ranked = rank(parse_query(query), "json.dumps", "Serialize obj.", "function")
    # "json.*" is no glob: it finds json.dumps by its token json only
    assert ranked is None or ranked.tier is Tier.TEXT


@pytest.mark.parametrize("limit", [0, -1, 101, 10**9, True, "5", 2.5])
def test_limits_out_of_range(limit: object) -> None:
    with pytest.raises(SearchInputError, match="limit must be"):
        check_limit(limit)  # type: ignore[arg-type]


def test_limits_in_range() -> None:
    assert check_limit(1) == 1 and check_limit(100) == 100


def _tier(query: str, name: str, summary: str = "", role: str = "function") -> Tier | None:
    ranked = rank(parse_query(query), name, summary, role, "py")
    return None if ranked is None else ranked.tier


def test_tiers() -> None:
    assert _tier("requests.Session", "requests.Session") is Tier.EXACT
    assert _tier("REQUESTS.session", "requests.Session") is Tier.EXACT
    assert _tier("Session", "requests.Session") is Tier.LAST
    assert _tier("sessions.Session", "requests.sessions.Session") is Tier.LAST
    assert _tier("Sess", "requests.Session") is Tier.PREFIX
    assert _tier("requests.Sess", "requests.Session") is Tier.PREFIX
    assert _tier("setting", "requests.sessions.merge_setting") is Tier.TEXT
    assert _tier("serialize json", "json.dumps", "Serialize obj to JSON.") is Tier.TEXT
    assert _tier("serialize object", "json.dumps", "Serialize obj to JSON.") is Tier.TEXT
    assert _tier("nothing", "json.dumps", "Serialize obj to JSON.") is None
    # a typo of a last component (one edit, two from 8 letters on; none under 4)
    assert _tier("Sesion", "requests.Session") is Tier.FUZZY
    assert _tier("Sesison", "requests.Session") is Tier.FUZZY  # a swap is one edit
    assert _tier("Sessoinx", "requests.Session") is Tier.FUZZY
    assert _tier("Sxsxon", "requests.Session") is None
    assert _tier("Sesn", "requests.Session") is None
    # a dotted query's typo, in the last component of a symbol of the parent it names
    assert _tier("json.lods", "json.loads") is Tier.FUZZY
    assert _tier("path.joinn", "os.path.join") is Tier.FUZZY
    assert _tier("JSON.Lods", "json.loads") is Tier.FUZZY
    assert _tier("json.lods", "pickle.loads") is None
    assert _tier("son.lods", "json.loads") is None  # a dotted tail, not any suffix


def test_exact_case_and_current_symbols_first_within_a_tier() -> None:
    def score(query: str, name: str, role: str = "class", deprecated: bool = False) -> float:
        ranked = rank(parse_query(query), name, "", role, "py", deprecated=deprecated)
        assert ranked is not None
        return ranked.score

    assert score("Decimal", "decimal.Decimal") > score("Decimal", "decimal", "module")
    assert score("Popen", "subprocess.Popen") > score("Popen", "os.popen", "function")
    assert score("OrderedDict", "collections.OrderedDict") > score(
        "OrderedDict", "typing.OrderedDict", deprecated=True
    )
    assert is_deprecated({"versions": [{"kind": "deprecated", "version": "3.9"}]})
    assert not is_deprecated({"versions": [{"kind": "added"}], "doc": "Deprecated."})


def test_tiers_order_scores_and_shorter_names_win_a_tie() -> None:
    query = parse_query("Session")
    short = rank(query, "requests.Session", "", "class", "py")
    deep = rank(query, "requests.sessions.Session", "", "class", "py")
    prefix = rank(query, "requests.SessionRedirectMixin", "", "class", "py")
    assert short and deep and prefix
    assert short.score > deep.score > prefix.score


@dataclass(frozen=True)
class Version:
    version: str
    crawl_id: str
    state: str = "finished"
    crawled_at: int | None = 1


VERSIONS = [
    Version("2.0", "p-2.0"),
    Version("1.9", "p-1.9"),
    Version("2.1.3", "p-2.1.3"),
    Version("2.1.10", "p-2.1.10"),
    Version("3.0", "p-3.0", "running", None),
    Version("4.0", "p-4.0", "failed", None),
]


def test_select_version_exact_range_and_latest_finished() -> None:
    assert select_version("2.0", VERSIONS).crawl_id == "p-2.0"
    assert select_version("2.x", VERSIONS).crawl_id == "p-2.1.10"
    assert select_version("2.1.x", VERSIONS).crawl_id == "p-2.1.10"
    assert select_version("1.X", VERSIONS).crawl_id == "p-1.9"
    assert select_version("3.0", VERSIONS).crawl_id == "p-3.0"  # asked for: given as is
    assert select_version(None, VERSIONS).crawl_id == "p-2.1.10"  # 3.0 is not finished


def test_a_crawl_id_goes_where_a_version_does_and_twins_are_never_picked() -> None:
    """Issue 47.3: the same version crawled from two paths made `show` and `api_diff`
    pick one silently (and `diff` refuse): ambiguous everywhere, each crawl id taken."""
    assert select_version("p-1.9", VERSIONS).version == "1.9"
    twins = [*VERSIONS, Version("2.1.10", "p-2.1.10-again")]
    for requested in ("2.1.10", "2.x"):
        with pytest.raises(AmbiguousVersion) as raised:
            select_version(requested, twins)
        assert str(raised.value) == (
            "version '2.1.10' is 2 crawls ('p-2.1.10', 'p-2.1.10-again'): give one crawl id "
            "in its place"
        )
        assert isinstance(raised.value, SelectionError)
    assert select_version("p-2.1.10-again", twins).crawl_id == "p-2.1.10-again"
    assert select_version("2.0", twins).crawl_id == "p-2.0"  # other versions: as before


@pytest.mark.parametrize("requested", ["2.2", "5.x", "4.0", "2", "", "*"])
def test_a_version_is_never_substituted(requested: str) -> None:
    with pytest.raises(UnknownVersion) as raised:
        select_version(requested, VERSIONS)
    message = str(raised.value)
    listed = message.split("versions: ", 1)[1]
    assert "'1.9'" in listed and "'2.1.10'" in listed and "'4.0'" not in listed
    assert isinstance(raised.value, SelectionError) and "\n" not in message


def test_no_finished_version() -> None:
    with pytest.raises(UnknownVersion, match="no finished version"):
        select_version(None, [Version("1.0", "x", "running", None)])


def test_match_project_case_insensitively() -> None:
    assert match_project("requests", ["Requests", "Flask"]) == "Requests"
    assert match_project("Flask", ["Requests", "Flask"]) == "Flask"
    with pytest.raises(UnknownProject, match="'Flask', 'Requests'"):
        match_project("django", ["Requests", "Flask"])
    with pytest.raises(UnknownProject, match="ambiguous"):
        match_project("ab", ["AB", "Ab"])
