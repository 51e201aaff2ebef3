"""The order of a search's results (pure): name tiers first, then the lexical and the
semantic rankers fused, the priors users expect, aliases once, projects spread.

* A candidate in a name tier (``ranking.name_tier``) ranks by tier, then by
  ``ranking.name_fine``.
* Any other is ranked by BM25F (``lexical.py``) and by the cosine of its vector to the
  query's (``semantic.py``); the two ranks are fused by reciprocal rank fusion
  (RRF_K), then multiplied by its priors: a label, a document or a glossary term below
  an API object, a deprecated symbol below a current one, CPython's C API below Python
  unless the query is about C, an exception below the rest unless it is about errors.
  Where no re-ranker runs, it is also multiplied by the inbound-link prior
  (FUSED_LINK_WEIGHT: the pages of its crawl linking to it); where one runs, the
  re-ranker's blend takes it (``_rerank``).
  It must clear the relevance floor: at least MIN_COVERAGE of the query's rarity among
  its words, or a cosine of MIN_SIMILARITY;
  the rest is no good match, said as such.
* The same symbol under several names (aliases, re-exports: one page anchor in one
  crawl) is one result, its other names listed.
* Across projects, each further result of a project counts SPREAD less in a name tier
  (TEXT_SPREAD of its score by words), so one site cannot fill the first ten with its
  own names when others match; ties fall to the
  key, then to the crawl this Redis opened first: never to a value the site chose.

Nothing here depends on the limit: the caller cuts the order this gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.search import lexical, link_log, ranking, semantic
from invcrawl.common.search.ranking import Query, Tier
from invcrawl.common.search.rerank import RERANK_K, WEIGHT, Reranker, candidate_text
from invcrawl.common.search.semantic import StaticModel

RRF_K = 30
LEXICAL_WEIGHT = 1.0  # of the lexical ranker's rank in the fusion
SEMANTIC_WEIGHT = 1.0  # of the semantic ranker's
MIN_COVERAGE = 0.25
MIN_SIMILARITY = 0.4
SPREAD = 0.3
TEXT_SPREAD = 0.1
# priors of what a query finds by its words (a name tier orders by the name's own)
LABEL_PRIOR = 0.6  # std:label, std:doc, std:term, ...: a page or a section, not an API
MEMBER_PRIOR = 0.92  # a method or an attribute before the class or function it belongs to
DEPRECATED_PRIOR = 0.8
C_API_PRIOR = 0.35
EXCEPTION_PRIOR = 0.75  # an exception, for a question not about errors
_ERROR_WORDS = frozenset(
    {"error", "errors", "exception", "exceptions", "raise", "raises", "raised", "catch", "fail"}
)
PACKAGE_PRIOR = 1.05
# the inbound-link prior in the fusion itself, where no re-ranker runs (the CLI): a
# result by words is multiplied by 1 + FUSED_LINK_WEIGHT ln(1 + pages linking to it); where
# the re-ranker runs, its blend takes the prior instead (link_log.WEIGHT)
FUSED_LINK_WEIGHT = 0.1
SHORT_PRIOR = 0.2  # how much a longer name, a member or a label loses (ranking.tie_break)
_C_WORDS = frozenset({"c", "capi", "pyobject", "extension", "embed", "embedding", "cpython"})
_API_ROLES = frozenset({"module", "class", "exception", "function"})
_MEMBER_ROLES = frozenset(
    {"method", "classmethod", "staticmethod", "property", "attribute", "data"}
)


@dataclass(slots=True)
class Candidate:
    item: dict[str, Any]
    summary: str
    project: str
    crawl: int  # index of its crawl in the search
    created_at: int  # of its crawl (ms)
    crawl_id: str
    links: int = 0  # pages of its crawl linking to it (the inbound-link prior: link_log.py)


@dataclass(slots=True)
class Result:
    candidate: Candidate
    tier: Tier
    score: float
    why: dict[str, Any]
    also: list[str] = field(default_factory=list)  # its other names (aliases)

    @property
    def key(self) -> str:
        return str(self.candidate.item.get("key", ""))


def _priors(query: Query, item: Mapping[str, Any], deprecated: bool) -> dict[str, float]:
    domain = str(item.get("domain", ""))
    role = str(item.get("role", ""))
    out: dict[str, float] = {}
    if ranking.is_c_api(domain):
        if not _C_WORDS & set(query.words):
            out["C API"] = C_API_PRIOR
    elif domain not in ("py", "") or role not in _API_ROLES | _MEMBER_ROLES:
        out["not an API object"] = LABEL_PRIOR
    elif role in _MEMBER_ROLES:
        out["member"] = MEMBER_PRIOR
    elif role == "exception" and not _ERROR_WORDS & set(query.words):
        out["exception"] = EXCEPTION_PRIOR
    if deprecated:
        out["deprecated"] = DEPRECATED_PRIOR
    return out


def _tier_name(tier: Tier) -> str:
    return {
        Tier.EXACT: "qualified name",
        Tier.LAST: "last component",
        Tier.PREFIX: "prefix",
        Tier.FUZZY: "name one or two edits away",
        Tier.TEXT: "words and meaning",
    }[tier]


def order(
    query: Query,
    candidates: Sequence[Candidate],
    rarity: Mapping[str, float],
    model: StaticModel | None,
    *,
    spread: bool,
    reranker: Reranker | None = None,
) -> list[Result]:
    """Every candidate that matches, best first (see the module's docstring); a
    question's first results by words re-ranked by ``reranker`` when given."""
    named: list[Result] = []
    texts: list[tuple[Candidate, lexical.Lexical, dict[str, float]]] = []
    for cand in candidates:
        item = cand.item
        name = str(item.get("name", ""))
        deprecated = ranking.is_deprecated(item)
        tier = ranking.name_tier(query, name)
        if tier is not Tier.TEXT:
            fine = ranking.name_fine(
                query,
                name,
                str(item.get("role", "")),
                str(item.get("domain", "")),
                project=cand.project,
                deprecated=deprecated,
            )
            named.append(Result(cand, tier, 6 - int(tier) + fine, {"matched": _tier_name(tier)}))
            continue
        if not query.words:
            continue
        text = lexical.item_text(item, cand.summary)
        texts.append(
            (cand, lexical.bm25f(query.words, rarity, text), _priors(query, item, deprecated))
        )
    sims = _similarities(query, [c for c, _, _ in texts], rarity, model)
    by_lex = sorted(range(len(texts)), key=lambda i: (-texts[i][1].score, _key(texts[i][0])))
    by_sem = sorted(range(len(texts)), key=lambda i: (-sims[i], _key(texts[i][0])))
    lex_rank = {i: r for r, i in enumerate(by_lex, 1)}
    sem_rank = {i: r for r, i in enumerate(by_sem, 1)}
    found: list[Result] = list(named)
    for i, (cand, lex, priors) in enumerate(texts):
        similarity = sims[i]
        if lex.coverage < MIN_COVERAGE and similarity < MIN_SIMILARITY:
            continue  # below the relevance floor
        if not lex.matched and model is None:
            continue
        fused = LEXICAL_WEIGHT / (RRF_K + lex_rank[i]) if lex.matched else 0.0
        most = LEXICAL_WEIGHT
        if model is not None:
            fused += SEMANTIC_WEIGHT / (RRF_K + sem_rank[i])
            most += SEMANTIC_WEIGHT
        fused /= most / (RRF_K + 1)
        value = fused
        for prior in priors.values():
            value *= prior
        name = str(cand.item.get("name", ""))
        if ranking.package_match(name, cand.project):
            value *= PACKAGE_PRIOR
        if reranker is None and FUSED_LINK_WEIGHT and cand.links:
            value *= link_log.prior(cand.links, FUSED_LINK_WEIGHT)
        if SHORT_PRIOR:
            value *= 1 - SHORT_PRIOR * (1 - _fit(cand.item, name))
        why: dict[str, Any] = {"matched": _tier_name(Tier.TEXT), "words": list(lex.matched)}
        why["lexical"] = (
            {"rank": lex_rank[i], "bm25f": round(lex.score, 3)} if lex.matched else None
        )
        if model is not None:
            why["semantic"] = {"rank": sem_rank[i], "cosine": round(similarity, 3)}
        if priors:
            why["priors"] = priors
        if cand.links:
            why["linked_from_pages"] = cand.links
        found.append(Result(cand, Tier.TEXT, min(value, 0.999), why))
    if reranker is not None and not query.name_like:
        _rerank(query, found, reranker)
    return _spread(_aliases(found), spread)


def _rerank(query: Query, found: list[Result], reranker: Reranker) -> None:
    """The best RERANK_K results by words re-ordered by ``(score / best + WEIGHT *
    cosine) * link_log.prior(links)`` (the transformer's cosine, of the question to the
    candidate's name and first sentence; the pages of its crawl linking to it), in
    place; they keep the head's scores, re-dealt in the new order, so the head stays
    above the rest and a name tier above both."""
    texts = [r for r in found if r.tier is Tier.TEXT]
    texts.sort(key=lambda r: (-r.score, _key(r.candidate)))
    head = texts[:RERANK_K]
    if len(head) < 2:
        return
    cosines = reranker.similarities(
        query.text,
        [candidate_text(str(r.candidate.item.get("name", "")), r.candidate.summary) for r in head],
    )
    best = head[0].score or 1.0
    blended = [
        (r.score / best + WEIGHT * c) * link_log.prior(r.candidate.links)
        for r, c in zip(head, cosines, strict=True)
    ]
    order = sorted(range(len(head)), key=lambda i: (-blended[i], _key(head[i].candidate)))
    scores = [r.score for r in head]
    for place, i in enumerate(order):
        head[i].score = scores[place]
        head[i].why["rerank"] = {"rank": place + 1, "cosine": round(cosines[i], 3)}


def _fit(item: Mapping[str, Any], name: str) -> float:
    """In [0, 1]: a shallower name, an API object (``ranking.tie_break``); a module
    counts one level deeper than its name (its doc is its whole page, which has the
    words of everything on it: ``fixlib`` is no better an answer than
    ``fixlib.parse_json``)."""
    role = str(item.get("role", ""))
    if role == "module":
        name += ".x"
        role = "function"
    return ranking.tie_break(name, role, str(item.get("domain", "")))


def _key(cand: Candidate) -> tuple[str, int, str]:
    return (str(cand.item.get("key", "")), cand.created_at, cand.crawl_id)


def _similarities(
    query: Query,
    cands: Sequence[Candidate],
    rarity: Mapping[str, float],
    model: StaticModel | None,
) -> list[float]:
    if model is None or not cands:
        return [0.0] * len(cands)
    vector = model.embed(query.words, [rarity.get(w, 1.0) for w in query.words])
    if vector is None:
        return [0.0] * len(cands)
    vectors = model.embed_many(
        [semantic.item_words(str(c.item.get("name", "")), c.summary) for c in cands]
    )
    return model.similarities(vector, vectors)


def _aliases(found: list[Result]) -> list[Result]:
    """One result per page anchor of a crawl (aliases, re-exports), the best; the others'
    names listed in its ``also``."""
    found.sort(key=lambda r: (-r.score, _key(r.candidate)))
    kept: dict[tuple[int, str], Result] = {}
    out: list[Result] = []
    for result in found:
        url = str(result.candidate.item.get("url") or "")
        if "#" not in url:
            out.append(result)
            continue
        same = kept.get((result.candidate.crawl, url))
        if same is None:
            kept[(result.candidate.crawl, url)] = result
            out.append(result)
        else:
            same.also.append(str(result.candidate.item.get("name", "")))
    return out


def _spread_score(result: Result, shown: Mapping[str, int]) -> float:
    """A result's score less what its project's earlier results cost it: SPREAD each in
    a name tier (worth 1 a tier), a share TEXT_SPREAD each by words (scores under 1)."""
    n = shown.get(result.candidate.project, 0)
    if result.tier is Tier.TEXT:
        return result.score * (1 - TEXT_SPREAD) ** n
    return result.score - SPREAD * n


def _spread(found: list[Result], spread: bool) -> list[Result]:
    """Greedy: each pick the best, a project's next counting SPREAD less per result it
    has already (across projects only). Sorted input; ties as :func:`_key`."""
    if not spread:
        return found
    shown: dict[str, int] = {}
    out: list[Result] = []
    left = list(found)
    while left:
        best = min(
            range(len(left)),
            key=lambda i: (-_spread_score(left[i], shown), _key(left[i].candidate)),
        )
        pick = left.pop(best)
        shown[pick.candidate.project] = shown.get(pick.candidate.project, 0) + 1
        out.append(pick)
    return out
