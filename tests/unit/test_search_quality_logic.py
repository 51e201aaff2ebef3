"""The scoring logic of ``bench/search_quality.py`` on small known data: ranks of symbol
and page answers, the held-out split, the metrics, the FTS5 baseline's query and ranking,
the CoNaLa mapping by page and anchor. Never a quality number of a real site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.quality_eval import Answer, score
from bench.quality_fts import Baseline, Row, fts_query, summary_of
from bench.quality_misses import miss_class
from bench.quality_sets import Hit, Level, Question, map_conala, own_set


def hit(key: str, project: str = "P", page: str = "a.html") -> Hit:
    return Hit(project, key, page)


def test_a_symbol_answer_counts_where_it_first_appears_in_its_project() -> None:
    q = Question("q", "P", ("py:function:p.b", "py:function:p.c"))
    hits = [hit("py:function:p.a"), hit("py:function:p.b", "Other"), hit("py:function:p.c")]
    assert q.rank(hits) == 3  # another project's p.b is not the answer, but takes a place
    assert q.rank(hits[:2]) is None


def test_a_page_answer_counts_distinct_pages_of_every_project() -> None:
    q = Question("q", "P", ("b.html",), level=Level.PAGE)
    hits = [
        hit("k1", page="a.html"),
        hit("k2", page="a.html"),  # the same page again: no new place
        hit("k3", "Other", page="b.html"),  # another project's b.html: a place, not the answer
        hit("k4", page="b.html"),
    ]
    assert q.rank(hits) == 3


def test_metrics_of_known_ranks() -> None:
    q = Question("q", "P", ("k",))
    answers = [Answer(q, r, []) for r in (1, 2, 5, None)]
    s = score(answers, set="s", split="all", scope="within", system="x")
    assert (s.n, s.hit1, s.hit5) == (4, 0.25, 0.75)
    assert s.mrr10 == pytest.approx((1 + 0.5 + 0.2) / 4)


def test_every_fourth_question_is_held_out(tmp_path: Path) -> None:
    questions = [{"q": f"q{i}", "project": "P", "answers": ["k"]} for i in range(8)]
    (tmp_path / "q.json").write_text(json.dumps({"questions": questions}))
    held = [q.text for q in own_set(tmp_path / "q.json").questions if q.held_out]
    assert held == ["q3", "q7"]


def test_the_baseline_query_quotes_every_word_and_ors_them() -> None:
    assert fts_query('check "if" a-file') == '"check if a-file" OR "check" OR "if" OR "a-file"'
    assert fts_query("one") == '"one"'
    assert fts_query('  " ') == '""'


def test_the_baseline_ranks_by_bm25_within_a_project_or_across() -> None:
    rows = [
        Row("P", "py:function:p.exists", "p.exists", "Return True if path exists.", "a.html"),
        Row("P", "py:function:p.size", "p.size", "Return the size of a file.", "a.html"),
        Row("Q", "py:function:q.exists", "q.exists", "Whether the file exists.", "b.html"),
    ]
    baseline = Baseline(rows)
    try:
        assert baseline.count == 3
        within = baseline.search("file exists", "P", 10)
        assert [h.key for h in within] == ["py:function:p.exists", "py:function:p.size"]
        across = baseline.search("file exists", None, 10)
        assert across[0].key == "py:function:q.exists"  # both words, in the short doc
        assert baseline.search("nothing-like-this", None, 10) == []
    finally:
        baseline.close()


def test_the_summary_is_the_first_sentence() -> None:
    assert summary_of("Return the size.  Raise OSError if not.") == "Return the size."
    assert summary_of("Use e.g. this one. More") == "Use e.g. this one."  # e.g.: lowercase next


def test_conala_ids_map_to_items_by_page_and_anchor(tmp_path: Path) -> None:
    root = "file:///docs/"
    items = [
        {"key": "py:function:os.path.exists", "domain": "py", "name": "os.path.exists",
         "page_url": root + "library/os.path.html", "anchor": "os.path.exists"},
        {"key": "py:class:list", "domain": "py", "name": "list",
         "page_url": root + "library/stdtypes.html", "anchor": "list"},
    ]  # fmt: skip
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    upstream = [
        {"nl": "file there?", "question_id": "1-1",
         "oracle_man": ["python.library.os.path#os.path.exists", "pandas.reference.x"]},
        {"nl": "make a list", "question_id": "2-1",
         "oracle_man": ["python.library.functions#list"]},
        {"nl": "pandas only", "question_id": "3-1", "oracle_man": ["pandas.reference.y"]},
    ]  # fmt: skip
    (tmp_path / "dev.json").write_text(json.dumps(upstream))
    mapped = map_conala(tmp_path / "dev.json", tmp_path / "items.jsonl", root)["questions"]
    assert [(q["id"], q["answers"]) for q in mapped] == [
        ("1-1", ["py:function:os.path.exists"]),
        ("2-1", ["py:class:list"]),  # functions.html#list: the object of that name
    ]


def test_a_miss_is_classed_by_what_took_rank_1() -> None:
    q = Question("flatten a list of lists", "P", ("py:method:itertools.chain.from_iterable",))

    def first(key: str, project: str = "P") -> str:
        return miss_class(Answer(q, None, [hit(key, project)]))

    assert miss_class(Answer(q, None, [])) == "nothing"
    assert first("py:function:x.y", "Other") == "other-project"
    assert first("c:function:PyList_Check") == "c-api"
    assert first("std:label:lists") == "prose"
    assert first("py:class:list") == "name-word"
    assert first("py:function:os.walk") == "other"
    assert first("py:method:itertools.chain.other") == "sibling"
