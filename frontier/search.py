"""Symbol search over the crawls in Redis (``invcrawl search`` / ``show``, the MCP
server's ``search_symbols`` and ``get_symbol``). Reads only.

Each crawl keeps a search index beside its items (``common/search/postings.py``,
written by ``commit.lua``, its records dropped by ``tombstone.lua``). A search picks the
crawls (each project's latest finished version unless a project or version is named:
``common/search/selection.py``), then makes three pipelined round trips, whatever the
number of crawls: the query's terms' postings (one ``search_lookup.lua`` call per crawl,
or one ``GET`` per term log and crawl for a user without scripts), the
records of the best candidates (``HGET``), their items (``XRANGE`` of one entry each).
Every candidate is ranked again from its item (``common/search/ranking.py``), so a
posting left by a changed or removed item never ranks it. No key is scanned.
"""

from __future__ import annotations

import hashlib
import heapq
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoPermissionError, NoScriptError, ResponseError

from invcrawl.common.items import key_digest
from invcrawl.common.search.postings import (
    fields_of,
    postings_in,
    record_bucket,
    term_hash,
    term_tag,
)
from invcrawl.common.search.ranking import (
    NAME_WEIGHTS,
    LookupTerm,
    Query,
    Ranked,
    SearchInputError,
    Tier,
    check_limit,
    is_deprecated,
    name_terms,
    parse_query,
    rank,
    term_weight,
    word_terms,
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
from invcrawl.common.search.terms import LAST
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.scripts import KeyIndex, load
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.stream import RAW, stream_entries
from invcrawl.frontier.versions import CrawlVersion, by_project, crawl_versions, versions_only

__all__ = [
    "SearchInputError",
    "SelectionError",
    "SymbolHit",
    "SymbolLookup",
    "get_symbol",
    "search_symbols",
]

CANDIDATES = 20  # candidates read and ranked from their items, at least
PHRASE_CANDIDATES = 40  # for a phrase, whose rough scores tell less
CANDIDATES_PER_RESULT = 2
KIND_FACTOR = 4  # more candidates when a kind filters them after reading
MAX_CANDIDATES = 400
CANDIDATES_SHOWN = 10  # of an ambiguous get_symbol


# The crawls' projects and versions (one HMGET per crawl: 660 crawls take ~20 ms) are
# kept per client for CRAWLS_FRESH_S, while the set of crawl ids is unchanged (read at
# every search: a forgotten or new crawl is seen at once; a crawl that just finished
# may wait that long to be a project's latest version).
CRAWLS_FRESH_S = 1.0
_crawl_lists: weakref.WeakKeyDictionary[Any, tuple[float, frozenset[str], list[CrawlVersion]]]
_crawl_lists = weakref.WeakKeyDictionary()


async def _crawl_list(redis: Redis) -> list[CrawlVersion]:
    frontier = Frontier(redis)
    ids = frozenset(await frontier.registry.known())
    cached = _crawl_lists.get(redis)
    now = time.monotonic()
    if cached is not None and cached[1] == ids and now - cached[0] < CRAWLS_FRESH_S:
        return cached[2]
    crawls = await crawl_versions(frontier)
    _crawl_lists[redis] = (now, ids, crawls)
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
        }


@dataclass(frozen=True)
class SymbolLookup:
    item: dict[str, Any] | None  # the symbol, when ``name`` named one
    candidates: list[SymbolHit]  # when it named several (or none: the nearest)
    project: str
    version: str


@dataclass(frozen=True, slots=True)
class _Found:
    hit: SymbolHit
    tier: Tier
    item: dict[str, Any]
    crawl: CrawlVersion


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


async def _postings(redis: Redis, requests: Sequence[tuple[str, bytes]]) -> list[list[str]]:
    """The item digests of each (term log, tag): every log read once, in one round trip."""
    if not requests:
        return []
    logs = list(dict.fromkeys(log for log, _ in requests))
    pipe = redis.pipeline(transaction=False)
    for log in logs:
        pipe.execute_command("GET", log, **RAW)
    read = dict(zip(logs, await pipe.execute(), strict=True))
    return [fields_of(postings_in(read[log] or b"", tag)) for log, tag in requests]


# Clients whose Redis user may not run scripts (the ``reader`` of deploy/redis: no
# EVALSHA): their lookups are plain GETs.
_no_scripts: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
_LOOKUP = load("search_lookup")
_LOOKUP_SHA = hashlib.sha1(_LOOKUP.source.encode("utf-8")).hexdigest()


async def _looked_up(
    redis: Redis, calls: Sequence[tuple[list[str], list[Any]]]
) -> list[list[bytes]] | None:
    """``search_lookup.lua`` once per crawl (keys, args), pipelined: each crawl's
    postings per term; None when this Redis user may not run scripts."""
    pipe = redis.pipeline(transaction=False)
    for keys, args in calls:
        pipe.execute_command("EVALSHA", _LOOKUP_SHA, len(keys), *keys, *args, **RAW)
    replies = await pipe.execute(raise_on_error=False)
    out: list[list[bytes]] = []
    for (keys, args), sent in zip(calls, replies, strict=True):
        reply = sent
        if isinstance(sent, NoScriptError):  # not loaded yet: EVAL loads it
            reply = await redis.execute_command(  # type: ignore[no-untyped-call]
                "EVAL", _LOOKUP.source, len(keys), *keys, *args, **RAW
            )
        if isinstance(reply, NoPermissionError) or (
            isinstance(reply, ResponseError) and "NOPERM" in str(reply)
        ):
            _no_scripts[redis] = True
            return None
        if isinstance(reply, Exception):
            raise reply
        out.append(list(reply))
    return out


async def _scored(
    redis: Redis,
    terms: Sequence[LookupTerm],
    crawls: Sequence[CrawlVersion],
    scores: dict[tuple[int, str], float],
) -> None:
    """Adds each candidate's rough score under ``terms`` to ``scores``."""
    if not terms:
        return
    hashes = [term_hash(term.term) for term in terms]
    tags = [term_tag(term.term) for term in terms]
    found: list[list[str]] | None = None
    if not _no_scripts.get(redis):
        calls = []
        for crawl in crawls:
            keys = CrawlKeys(crawl.crawl_id)
            index = KeyIndex(1)
            args: list[Any] = []
            for digest, tag in zip(hashes, tags, strict=True):
                args += [index.add(keys.search_log(digest % crawl.term_logs)), tag]
            calls.append(([keys.meta, *index.keys], args))
        replies = await _looked_up(redis, calls)
        if replies is not None:
            found = [
                fields_of(postings) if postings else []
                for per_crawl in replies
                for postings in (per_crawl or [b""] * len(terms))
            ]
    if found is None:
        requests = [
            (CrawlKeys(crawl.crawl_id).search_log(digest % crawl.term_logs), tag)
            for crawl in crawls
            for digest, tag in zip(hashes, tags, strict=True)
        ]
        found = await _postings(redis, requests)
    postings_of = iter(found)
    for index_, crawl in enumerate(crawls):
        for term in terms:
            fields = next(postings_of)
            if not fields:
                continue
            weight = term_weight(term.weight, len(fields), max(crawl.entries, 1))
            for field in fields:
                scores[(index_, field)] = scores.get((index_, field), 0.0) + weight


async def _candidates(
    redis: Redis, query: Query, crawls: Sequence[CrawlVersion], wanted: int, limit: int
) -> list[tuple[CrawlVersion, str]]:
    """The best ``wanted`` (crawl, item digest) pairs by their terms' rough weights: the
    name tiers' terms first; the words' only when those found fewer than ``limit``
    whole names or last components."""
    scores: dict[tuple[int, str], float] = {}
    await _scored(redis, name_terms(query), crawls, scores)
    names = sum(1 for score in scores.values() if score >= NAME_WEIGHTS[LAST])
    if names < limit:
        await _scored(redis, word_terms(query), crawls, scores)
    best = heapq.nsmallest(wanted, scores, key=lambda k: (-scores[k], k))
    return [(crawls[index], field) for index, field in best]


async def _items(
    redis: Redis, candidates: Sequence[tuple[CrawlVersion, str]]
) -> list[tuple[CrawlVersion, dict[str, Any]]]:
    """The latest items of candidates (those still recorded and in their stream)."""
    if not candidates:
        return []
    pipe = redis.pipeline(transaction=False)
    for crawl, field in candidates:
        keys = CrawlKeys(crawl.crawl_id)
        pipe.hget(keys.search_record(record_bucket(field, crawl.buckets)), field)
    entry_ids = await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    wanted = []
    for (crawl, _), entry_id in zip(candidates, entry_ids, strict=True):
        if entry_id:
            items = CrawlKeys(crawl.crawl_id).items
            pipe.execute_command("XRANGE", items, entry_id, entry_id, **RAW)
            wanted.append(crawl)
    out = []
    for crawl, reply in zip(wanted, await pipe.execute() if wanted else [], strict=True):
        entries = stream_entries(reply)
        if entries and not entries[0].removed:
            out.append((crawl, entries[0].item()))
    return out


def _hit(crawl: CrawlVersion, item: dict[str, Any], ranked: Ranked, summary: str) -> SymbolHit:
    return SymbolHit(
        key=str(item.get("key", "")),
        name=str(item.get("name", "")),
        role=str(item.get("role", "")),
        project=crawl.project,
        version=crawl.version,
        url=str(item.get("url") or ""),
        summary=summary,
        score=ranked.score,
    )


def _kind_matches(kind: str | None, item: dict[str, Any]) -> bool:
    if kind is None:
        return True
    wanted = kind.strip().lower()
    role = str(item.get("role", "")).lower()
    return wanted in (role, f"{str(item.get('domain', '')).lower()}:{role}")


async def _search(
    redis: Redis,
    query: Query,
    crawls: Sequence[CrawlVersion],
    kind: str | None,
    limit: int,
) -> list[_Found]:
    wanted = max(
        CANDIDATES if query.name_like else PHRASE_CANDIDATES, CANDIDATES_PER_RESULT * limit
    )
    if kind is not None:
        wanted *= KIND_FACTOR
    candidates = await _candidates(redis, query, crawls, min(wanted, MAX_CANDIDATES), limit)
    found: dict[tuple[str, str], _Found] = {}
    for crawl, item in await _items(redis, candidates):
        if not _kind_matches(kind, item):
            continue
        summary = first_sentence(item.get("doc"))
        ranked = rank(
            query,
            str(item.get("name", "")),
            summary,
            str(item.get("role", "")),
            str(item.get("domain", "")),
            deprecated=is_deprecated(item),
        )
        if ranked is not None:
            hit = _hit(crawl, item, ranked, summary)
            found[(crawl.crawl_id, hit.key)] = _Found(hit, ranked.tier, item, crawl)
    ordered = sorted(found.values(), key=lambda f: (-f.hit.score, f.hit.key, f.crawl.crawl_id))
    return ordered[:limit]


def _check_kind(kind: str | None) -> str | None:
    if kind is None or not kind.strip():
        return None
    if len(kind) > 100:
        raise SearchInputError("kind must be a role such as function, class or py:method")
    return kind


async def search_symbols(
    redis: Redis,
    query: str,
    *,
    project: str | None = None,
    version: str | None = None,
    kind: str | None = None,
    limit: int = 10,
) -> list[SymbolHit]:
    """The symbols best matching ``query``, best first (at most ``limit``). Raises
    :class:`SearchInputError` (a ValueError) for a bad query, limit or kind and
    :class:`SelectionError` for a project or version that names nothing."""
    parsed = parse_query(query)
    check_limit(limit)
    kind = _check_kind(kind)
    crawls = choose_crawls(await _crawl_list(redis), project, version)
    return [f.hit for f in await _search(redis, parsed, crawls, kind, limit)]


async def _by_key(
    redis: Redis, key: str, crawls: Sequence[CrawlVersion]
) -> list[tuple[CrawlVersion, dict[str, Any]]]:
    """The items of ``key`` in ``crawls`` (a key is ``domain:role:name``)."""
    candidates = [(crawl, key_digest(key, max(crawl.buckets, 1))[1]) for crawl in crawls]
    return [(c, item) for c, item in await _items(redis, candidates) if item.get("key") == key]


async def get_symbol(
    redis: Redis,
    name: str,
    *,
    project: str | None = None,
    version: str | None = None,
) -> SymbolLookup:
    """One symbol: ``name`` is an item key, a qualified name or an unambiguous last
    component (case-insensitive). Several matches give ``candidates`` and no item;
    none gives no item and the nearest symbols as candidates."""
    query = parse_query(name)
    crawls = choose_crawls(await _crawl_list(redis), project, version)
    scope_project = crawls[0].project if len(crawls) == 1 else ""
    scope_version = crawls[0].version if len(crawls) == 1 else ""
    domain, _ = _split_key(query.text)
    if domain:
        held = await _by_key(redis, query.text, crawls)
        if len(held) == 1:
            crawl, item = held[0]
            return SymbolLookup(item, [], crawl.project, crawl.version)
    found = await _search(redis, query, crawls, None, CANDIDATES_SHOWN * 2)
    for tier in (Tier.EXACT, Tier.LAST):
        matched = [f for f in found if f.tier is tier]
        if len(matched) == 1:
            only = matched[0]
            return SymbolLookup(only.item, [], only.crawl.project, only.crawl.version)
        if matched:
            hits = [f.hit for f in matched[:CANDIDATES_SHOWN]]
            return SymbolLookup(None, hits, scope_project, scope_version)
    hits = [f.hit for f in found[:CANDIDATES_SHOWN]]
    return SymbolLookup(None, hits, scope_project, scope_version)


async def search_in(frontier: Frontier, query: str, **options: Any) -> list[SymbolHit]:
    """:func:`search_symbols` on a :class:`Frontier`'s client (the CLI's)."""
    return await search_symbols(frontier._redis, query, **options)


async def lookup_in(frontier: Frontier, name: str, **options: Any) -> SymbolLookup:
    """:func:`get_symbol` on a :class:`Frontier`'s client (the CLI's)."""
    return await get_symbol(frontier._redis, name, **options)
