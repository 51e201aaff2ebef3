"""The re-ranker's vectors are kept in the process (``common/search/rerank.py``): a warm
question embeds only what it has not seen, the oldest are dropped past CACHE_TEXTS; and
the order of ``fusion._rerank``: the head re-dealt its own scores, the rest untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from invcrawl.common.search import fusion, rerank
from invcrawl.common.search.fusion import Candidate, Result
from invcrawl.common.search.ranking import Tier, parse_query
from invcrawl.common.search.transformer import Transformer
from support.tiny_bert import write_model


@pytest.fixture
def reranker(tmp_path: Path) -> rerank.Reranker:
    topics = {"stop": 1, "suspend": 1, "pause": 1, "clock": 2}
    return rerank.Reranker(Transformer.load(write_model(tmp_path, topics)))


def test_a_warm_question_embeds_only_what_is_new(reranker: rerank.Reranker) -> None:
    texts = ["a.pause: Suspend the thread.", "a.clock: The clock."]
    first = reranker.similarities("stop now", texts)
    assert first[0] == pytest.approx(1.0) and first[1] == pytest.approx(0.0, abs=1e-6)
    assert reranker.embedded == 3
    assert reranker.similarities("stop it", texts) == pytest.approx(first)
    assert reranker.embedded == 4  # the new question alone


def test_the_oldest_vectors_are_dropped(
    reranker: rerank.Reranker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rerank, "CACHE_TEXTS", 3)
    reranker.similarities("stop", ["x1", "x2"])
    reranker.similarities("stop", ["x3"])  # 'x1' was the least recently used
    before = reranker.embedded
    reranker.similarities("stop", ["x2", "x3"])
    assert reranker.embedded == before
    reranker.similarities("stop", ["x1"])
    assert reranker.embedded == before + 1


def _result(name: str, summary: str, score: float, tier: Tier = Tier.TEXT) -> Result:
    item = {"key": f"py:function:{name}", "name": name, "role": "function", "domain": "py"}
    return Result(Candidate(item, summary, "P", 0, 0, "c"), tier, score, {})


def test_the_head_is_re_dealt_its_own_scores(reranker: rerank.Reranker) -> None:
    found = [
        _result("a.clock", "The clock.", 0.9),
        _result("a.pause", "Suspend the thread.", 0.8),
        _result("a.Stop", "", 5.5, Tier.LAST),  # a name tier: never re-ranked
    ]
    fusion._rerank(parse_query("stop the thread"), found, reranker)
    by_name = {r.candidate.item["name"]: r for r in found}
    assert by_name["a.pause"].score == 0.9 and by_name["a.clock"].score == 0.8
    assert by_name["a.pause"].why["rerank"]["rank"] == 1
    assert by_name["a.Stop"].score == 5.5 and "rerank" not in by_name["a.Stop"].why
