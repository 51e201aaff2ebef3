"""Symbol search over the crawls in Redis (``invcrawl search`` / ``show``, the MCP
server's ``search_symbols`` and ``get_symbol``). Reads only.

Each crawl keeps a search index beside its items (``common/search/postings.py``,
written by ``commit.lua``, its records dropped by ``tombstone.lua``). A search picks the
crawls (each project's latest finished version unless a project or version is named:
``common/search/selection.py``), asks each crawl's index for its best candidates under
the query's terms and their neighbours in meaning (``frontier/search_pool.py``: one
pipelined round trip whatever the number of crawls), reads the pool's items, and orders
them (``common/search/fusion.py``: name tiers, then BM25F and the semantic ranker fused,
priors, aliases once, projects spread). Every candidate is ranked again from its item, so
a posting left by a changed or removed item never ranks it. No key is scanned.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.search import fusion, rerank, semantic
from invcrawl.common.search.fusion import Candidate, Result
from invcrawl.common.search.ranking import (
    LookupTerm,
    Query,
    SearchInputError,
    Tier,
    check_limit,
    expansion_terms,
    lookup_terms,
    parse_query,
)
from invcrawl.common.search.selection import (
    SelectionError,
    UnknownProject,
    UnknownVersion,
    finished,
    match_project,
    select_version,
)
from invcrawl.common.search.summary import first_sentence
from invcrawl.common.search.terms import stem
from invcrawl.frontier.key_records import record_field
from invcrawl.frontier.search_links import inbound_links
from invcrawl.frontier.search_pool import pool, read_items
from invcrawl.frontier.search_vectors import nearest
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import CrawlVersion, by_project, crawl_versions, versions_only

__all__ = [
    "SearchAnswer",
    "SearchInputError",
    "SelectionError",
    "SymbolHit",
    "SymbolLookup",
    "get_symbol",
    "search_answer",
    "search_symbols",
]

POOL = 200  # candidates read and ranked, whatever the limit (ranks never depend on it)
KIND_FACTOR = 2  # more candidates when a kind filters them after reading
CANDIDATES_SHOWN = 10  # of an ambiguous get_symbol
EXPANDED_WORDS = 6  # query words whose neighbours in meaning are looked up, at most


# The crawls' projects and versions (one HMGET per crawl: 660 crawls take ~20 ms) are
# kept per client for CRAWLS_FRESH_S, while the set of crawl ids is unchanged (read at
# every search: a forgotten or new crawl is seen at once; a crawl that just finished
# may wait that long to be a project's latest version).
CRAWLS_FRESH_S = 1.0
_crawl_lists: weakref.WeakKeyDictionary[Any, tuple[float, frozenset[str], list[CrawlVersion]]]
_crawl_lists = weakref.WeakKeyDictionary()


async def crawl_list(frontier: Frontier) -> list[CrawlVersion]:
    """Every crawl as a version (``versions.crawl_versions``), read again only when the
    registry changed or after CRAWLS_FRESH_S: what a search and the references of its
    answer share."""
    ids = frozenset(await frontier.registry.known())
    cached = _crawl_lists.get(frontier)
    now = time.monotonic()
    if cached is not None and cached[1] == ids and now - cached[0] < CRAWLS_FRESH_S:
        return cached[2]
    crawls = await crawl_versions(frontier)
    _crawl_lists[frontier] = (now, ids, crawls)
    return crawls


@dataclass(frozen=True)
class SymbolHit:
    key: str
    name: str
    role: str
    project: str
    version: str
    url: str
    summary: str
    score: float
    signature: str = ""
    also: tuple[str, ...] = ()  # the same symbol's other names (aliases, re-exports)
    why: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "role": self.role,
            "project": self.project,
            "version": self.version,
            "url": self.url,
            "summary": self.summary,
            "score": round(self.score, 4),
            "signature": self.signature,
            "also": list(self.also),
            "why": self.why,
        }


@dataclass(frozen=True)
class SearchAnswer:
    """A search's results, and what the caller should say about them."""

    hits: list[SymbolHit]
    rankers: list[str]  # ``lexical``, ``semantic`` when the model is there, ``transformer``
    no_good_match: bool  # nothing cleared the relevance floor (or nothing was found)
    note: str = ""  # why a ranker is off ('' when both run)

    def to_json(self, query: str) -> dict[str, Any]:
        return {
            "query": query,
            "results": [h.to_json() for h in self.hits],
            "no_good_match": self.no_good_match,
            "rankers": self.rankers,
        }


@dataclass(frozen=True)
class SymbolLookup:
    item: dict[str, Any] | None  # the symbol, when ``name`` named one
    candidates: list[SymbolHit]  # when it named several (or none: the nearest)
    project: str
    version: str
    named: bool = False  # the candidates are the symbols of that name, not the nearest


def _split_key(key: str) -> tuple[str, str]:
    """(domain, role) of an item key ``domain:role:name``."""
    parts = key.split(":", 2)
    return (parts[0], parts[1]) if len(parts) == 3 else ("", "")


def choose_crawls(
    crawls: Sequence[CrawlVersion], project: str | None, version: str | None
) -> list[CrawlVersion]:
    """The crawls a search covers: of ``project`` (every project when None), the version
    ``version`` names (each project's latest finished one when None). A project or
    version that names nothing raises :class:`SelectionError` naming those that exist."""
    grouped = {p: versions_only(v) for p, v in by_project(crawls).items()}
    grouped = {p: v for p, v in grouped.items() if v}
    if project is not None:
        name = match_project(project, list(grouped))
        return [select_version(version, grouped[name])]
    if not grouped:
        raise UnknownProject("no crawl in this Redis yet (run `invcrawl crawl SITE` first)")
    chosen: list[CrawlVersion] = []
    for versions in grouped.values():
        if version is None:
            done = [v for v in versions if finished(v)]
            if done:
                chosen.append(select_version(None, done))
            continue
        try:
            chosen.append(select_version(version, versions))
        except UnknownVersion:
            continue
    if not chosen:
        if version is None:
            raise UnknownVersion("no project has a finished version yet")
        listed = sorted({f"{c.project}@{c.version}" for c in versions_only(crawls)})
        raise UnknownVersion(
            f"no project has a version {version!r} (versions: {', '.join(listed[:20])})"
        )
    return chosen


def _hit(crawl: CrawlVersion, result: Result) -> SymbolHit:
    item = result.candidate.item
    return SymbolHit(
        key=str(item.get("key", "")),
        name=str(item.get("name", "")),
        role=str(item.get("role", "")),
        project=crawl.project,
        version=crawl.version,
        url=str(item.get("url") or ""),
        summary=result.candidate.summary,
        score=result.score,
        signature=str(item.get("signature") or ""),
        also=tuple(result.also),
        why=result.why,
    )


def _kind_matches(kind: str | None, item: dict[str, Any]) -> bool:
    if kind is None:
        return True
    wanted = kind.strip().lower()
    role = str(item.get("role", "")).lower()
    return wanted in (role, f"{str(item.get('domain', '')).lower()}:{role}")


def _terms(query: Query, model: semantic.StaticModel | None) -> list[LookupTerm]:
    """The query's index terms, and its words' neighbours in meaning (not for a dotted
    name: a qualified name means itself)."""
    found = lookup_terms(query)
    if model is None or (query.name_like and "." in query.text.strip(".")):
        return found
    neighbours: dict[str, float] = {}
    for near_words in model.neighbours_of(query.words[:EXPANDED_WORDS]).values():
        for near, similarity in near_words.items():
            neighbours[near] = max(similarity, neighbours.get(near, 0.0))
    known = {w for w in query.words} | {stem(w) for w in query.words}
    have = {term.term for term in found}
    return found + [e for e in expansion_terms(neighbours, known) if e.term not in have]


@dataclass(frozen=True, slots=True)
class _Ranked:
    results: list[tuple[CrawlVersion, Result]]
    candidates: int  # items read and ranked


async def _search(
    frontier: Frontier,
    query: Query,
    crawls: Sequence[CrawlVersion],
    kind: str | None,
    by_meaning: bool = True,
    *,
    reranker: rerank.Reranker | None = None,
) -> _Ranked:
    model = semantic.load()
    wanted = POOL * (KIND_FACTOR if kind is not None else 1)
    found = await pool(frontier, _terms(query, model), crawls, wanted)
    pooled = list(found.candidates)
    if by_meaning and not query.name_like:  # a question: the items nearest it in meaning
        weights = [found.rarity.get(w, 1.0) for w in query.words]
        near = await nearest(frontier, model, query.words, weights, crawls)
        have = {(crawl.crawl_id, digest) for crawl, digest in pooled}
        pooled += [(c, d) for c, d in near if (c.crawl_id, d) not in have]
    index = {crawl.crawl_id: n for n, crawl in enumerate(crawls)}
    # the pages linking to each candidate: the inbound-link prior (fusion.py)
    links = await inbound_links(frontier, crawls)
    candidates = []
    for crawl, item in await read_items(frontier, pooled):
        if _kind_matches(kind, item):
            summary = first_sentence(item.get("doc"))
            n = index[crawl.crawl_id]
            cand = Candidate(item, summary, crawl.project, n, crawl.created_at, crawl.crawl_id)
            cand.links = links[crawl.crawl_id].count(str(item.get("url") or ""))
            candidates.append(cand)
    projects = {crawl.project for crawl in crawls}
    spread = len(projects) > 1
    if reranker is None:
        ordered = fusion.order(query, candidates, found.rarity, model, spread=spread)
    else:  # the transformer's ~0.3 s for new candidates: off the event loop (a server's)
        ordered = await asyncio.to_thread(
            fusion.order, query, candidates, found.rarity, model, spread=spread, reranker=reranker
        )
    return _Ranked([(crawls[r.candidate.crawl], r) for r in ordered], len(candidates))


def _check_kind(kind: str | None) -> str | None:
    if kind is None or not kind.strip():
        return None
    if len(kind) > 100:
        raise SearchInputError("kind must be a role such as function, class or py:method")
    return kind


def crawl_rankers(crawl: CrawlVersion, reranking: bool = False) -> list[str]:
    """The rankers a search of ``crawl`` runs (none for a failed crawl: nothing in it);
    ``reranking``: for a caller that asks for the re-ranker (the MCP server), which runs
    where its weights are installed."""
    if crawl.failed:
        return []
    found = semantic.shipped_rankers()
    return [*found, rerank.NAME] if reranking and rerank.installed() else found


async def search_answer(
    frontier: Frontier,
    query: str,
    *,
    project: str | None = None,
    version: str | None = None,
    kind: str | None = None,
    limit: int = 10,
    by_meaning: bool = True,
    reranking: bool = False,
) -> SearchAnswer:
    """The symbols best matching ``query``, best first (at most ``limit``: a result's
    rank never depends on it), and whether there was no good match. ``by_meaning``: a
    question's candidates include the items nearest it in meaning
    (``search_vectors.nearest``, from the crawls' vector logs in Redis: the CLI and the
    MCP server alike; False: the index's candidates alone, the tests' control).
    ``reranking``: a question's first results re-ranked by the transformer, whose
    weights ship with invcrawl (``common/search/rerank.py``; ~1 s to load once a
    process, then ~10 ms a candidate not seen before: the MCP server's too). Raises
    :class:`SearchInputError` (a ValueError) for a bad query, limit or kind and
    :class:`SelectionError` for a project or version that names nothing."""
    parsed = parse_query(query)
    check_limit(limit)
    kind = _check_kind(kind)
    crawls = choose_crawls(await crawl_list(frontier), project, version)
    reranker = rerank.load() if reranking else None
    ranked = await _search(frontier, parsed, crawls, kind, by_meaning, reranker=reranker)
    hits = [_hit(crawl, result) for crawl, result in ranked.results[:limit]]
    rankers = semantic.rankers() + ([rerank.NAME] if reranker is not None else [])
    return SearchAnswer(hits, rankers, not hits, semantic.unavailable())


async def search_symbols(frontier: Frontier, query: str, **options: Any) -> list[SymbolHit]:
    """:func:`search_answer`'s results alone."""
    return (await search_answer(frontier, query, **options)).hits


async def _by_key(
    frontier: Frontier, key: str, crawls: Sequence[CrawlVersion]
) -> list[tuple[CrawlVersion, dict[str, Any]]]:
    """The items of ``key`` in ``crawls`` (a key is ``domain:role:name``)."""
    candidates = [(crawl, record_field(crawl, key)) for crawl in crawls]
    return [
        (c, item) for c, item in await read_items(frontier, candidates) if item.get("key") == key
    ]


async def get_symbol(
    frontier: Frontier,
    name: str,
    *,
    project: str | None = None,
    version: str | None = None,
) -> SymbolLookup:
    """One symbol: ``name`` is an item key, a qualified name or an unambiguous last
    component (case-insensitive). Several matches give ``candidates`` and no item
    (``named``); none gives no item and the nearest symbols as candidates."""
    query = parse_query(name)
    crawls = choose_crawls(await crawl_list(frontier), project, version)
    scope_project = crawls[0].project if len(crawls) == 1 else ""
    scope_version = crawls[0].version if len(crawls) == 1 else ""
    domain, _ = _split_key(query.text)
    if domain:
        held = await _by_key(frontier, query.text, crawls)
        if len(held) == 1:
            crawl, item = held[0]
            return SymbolLookup(item, [], crawl.project, crawl.version)
    found = (await _search(frontier, query, crawls, None)).results
    for tier in (Tier.EXACT, Tier.LAST):
        matched = [(c, r) for c, r in found if r.tier is tier]
        if len(matched) == 1:
            crawl, only = matched[0]
            return SymbolLookup(only.candidate.item, [], crawl.project, crawl.version)
        if matched:
            hits = [_hit(c, r) for c, r in matched[:CANDIDATES_SHOWN]]
            return SymbolLookup(None, hits, scope_project, scope_version, named=True)
    hits = [_hit(c, r) for c, r in found[:CANDIDATES_SHOWN]]
    return SymbolLookup(None, hits, scope_project, scope_version)
