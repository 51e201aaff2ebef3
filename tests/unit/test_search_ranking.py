"""The new engine's pure parts (issues 48, 46.3, 46.6): the index terms of a huge name are
bounded, candidates proposed by the index do not depend on the order postings were
written, aliases are one result, full-width queries are their ASCII, BM25F weighs a
rare word more, and the static model embeds in batch what it embeds one by one."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from invcrawl.common.search import fusion, lexical, semantic
from invcrawl.common.search import terms as t
from invcrawl.common.search.fusion import Candidate
from invcrawl.common.search.postings import score_postings
from invcrawl.common.search.ranking import Tier, parse_query


def test_name_tokens_are_capped() -> None:
    """46.6: a 16,000-character name was indexed under every token it has."""
    name = ".".join(f"Part{n}Word{n}" for n in range(2000))[:16_000]
    terms = t.index_terms(name, "A summary of a few words.")
    assert sum(term.startswith(t.NAME_PART) for term in terms) <= t.NAME_TOKENS
    assert len(terms) <= t.NAME_TOKENS + 3 + t.SUMMARY_WORDS
    assert len(t.name_tokens(name)) <= t.NAME_TOKENS


@given(st.lists(st.binary(min_size=6, max_size=6), min_size=1, max_size=60, unique=True))
def test_candidates_do_not_depend_on_the_order_of_postings(postings: list[bytes]) -> None:
    rare = postings[: max(1, len(postings) // 4)]
    shuffled = list(postings)
    random.Random(len(postings)).shuffle(shuffled)
    one = score_postings([b"".join(postings), b"".join(rare)], [1000, 3000], 10, 500, 20)
    two = score_postings([b"".join(shuffled), b"".join(reversed(rare))], [1000, 3000], 10, 500, 20)
    assert one == two


def test_a_common_term_only_adds_to_what_rarer_terms_found() -> None:
    common = [bytes([n]) * 6 for n in range(50)]
    rare = [b"\x07" * 6]
    found = score_postings([b"".join(common), b"".join(rare)], [1000, 1000], 10, 1000, 20)
    assert found.fields == ["070707070707"] and found.counts == [50, 1]


def _candidate(name: str, url: str, crawl: int = 0, project: str = "P") -> Candidate:
    item = {"key": f"py:function:{name}", "name": name, "role": "function", "domain": "py"}
    item["url"] = url
    return Candidate(item, "Load a thing.", project, crawl, crawl, f"c{crawl}")


def test_aliases_are_one_result_listing_the_others() -> None:
    query = parse_query("load")
    cands = [
        _candidate("pkg.load", "http://x/a.html#pkg.load"),
        _candidate("pkg.api.load", "http://x/a.html#pkg.load"),
        _candidate("other.load", "http://x/b.html#other.load"),
    ]
    ordered = fusion.order(query, cands, {}, None, spread=False)
    assert [r.key for r in ordered] == ["py:function:pkg.load", "py:function:other.load"]
    assert ordered[0].also == ["pkg.api.load"] and ordered[0].tier is Tier.LAST


def test_full_width_queries_are_normalised() -> None:
    assert parse_query("ｓｅｓｓｉｏｎ").folded == "session"


def test_question_words_are_left_out_of_a_phrase() -> None:
    assert parse_query("how do I check if a file exists").words == ("check", "file", "exists")
    assert parse_query("how").words == ("how",)


def test_bm25f_weighs_rare_words_and_the_name_more() -> None:
    item = {"name": "os.path.exists", "doc": "Return True if path refers to an existing path."}
    text = lexical.item_text(item, "Return True if path refers to an existing path.")
    rare = lexical.bm25f(["exists", "path"], {"exists": 5.0, "path": 1.0}, text)
    common = lexical.bm25f(["exists", "path"], {"exists": 1.0, "path": 5.0}, text)
    assert rare.matched == ("exists", "path") and rare.coverage == 1.0
    assert lexical.bm25f(["tree"], {}, text).score == 0.0 < common.score


def test_batch_embedding_equals_one_by_one() -> None:
    model = semantic.load()
    if model is None:
        pytest.skip(semantic.unavailable())
    texts = [["delete", "directory", "tree"], [], ["zzzqqqxxx"], ["\u2603"], ["json", "loads"]]
    many = model.embed_many(texts)
    for words, vector in zip(texts, many, strict=True):
        single = model.embed(words)
        assert (vector is None) == (single is None)
        if vector is not None:
            assert float(vector @ single) == pytest.approx(1.0, abs=1e-5)
