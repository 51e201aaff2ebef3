"""The candidates of a search: each crawl's index asked for its best items under the
query's terms (``search_lookup.lua`` through the frontier's script runner, or plain
``GET`` of the term logs for a Redis user that may not run scripts, scored by the same
rule in ``common/search/postings.score_postings``), merged into one pool of at most a
fixed number, then read from the streams. Reads only; no key is scanned.

The pool does not depend on the caller's limit, nor on the order in which consumers
committed: each crawl returns its best by score (ties by the item's digest), and the
crawls' best ROUND compete before any crawl's next (one site's hundred ``Session``
cannot push another project's out of the pool).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoPermissionError, ResponseError

from invcrawl.common.search.lexical import idf
from invcrawl.common.search.postings import (
    POSTING_BYTES,
    Scored,
    postings_in,
    record_bucket,
    score_postings,
    term_hash,
    term_tag,
)
from invcrawl.common.search.ranking import LookupTerm
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.scripts import KeyIndex, ScriptCall
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.stream import RAW, stream_entries
from invcrawl.frontier.versions import CrawlVersion

ROUND = 8  # each crawl's best ROUND candidates compete before any crawl's next ones
SPREAD_POSTINGS = 1000  # a term in more items only adds to candidates rarer ones found

# Frontiers whose Redis user may not run scripts (the ``reader`` of deploy/redis: no
# EVALSHA): their lookups are plain GETs.
_no_scripts: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Pool:
    candidates: list[tuple[CrawlVersion, str]]  # (crawl, item digest), best first
    rarity: dict[str, float]  # IDF of each query word over the crawls searched


def _weights(terms: Sequence[LookupTerm]) -> list[int]:
    return [max(1, round(term.weight * 1000)) for term in terms]


def _calls(
    terms: Sequence[LookupTerm], crawls: Sequence[CrawlVersion], wanted: int
) -> list[ScriptCall]:
    hashes = [term_hash(term.term) for term in terms]
    weights = _weights(terms)
    calls: list[ScriptCall] = []
    for crawl in crawls:
        keys = CrawlKeys(crawl.crawl_id)
        index = KeyIndex(1)
        args: list[Any] = [wanted, max(crawl.entries, 1), SPREAD_POSTINGS]
        for term, digest, weight in zip(terms, hashes, weights, strict=True):
            log = keys.search_log(digest % crawl.term_logs)
            args += [index.add(log), term_tag(term.term), weight]
        calls.append(("search_lookup", {"meta": keys.meta}, args, index.keys))
    return calls


def _scored_reply(reply: Any, terms: int) -> Scored:
    if not reply:
        return Scored([0] * terms, [], [])
    counts, joined, points = reply
    fields = [
        joined[i : i + POSTING_BYTES].hex()
        for i in range(0, len(joined) - POSTING_BYTES + 1, POSTING_BYTES)
    ]
    return Scored([int(c) for c in counts], fields, [int(p) / 1000 for p in points])


async def _by_script(
    frontier: Frontier, terms: Sequence[LookupTerm], crawls: Sequence[CrawlVersion], wanted: int
) -> list[Scored] | None:
    """One ``search_lookup.lua`` call per crawl, pipelined; None when this Redis user
    may not run scripts."""
    try:
        replies = await frontier.run_many(_calls(terms, crawls, wanted), raw=True)
    except NoPermissionError:
        _no_scripts[frontier] = True
        return None
    except ResponseError as exc:
        if "NOPERM" not in str(exc):
            raise
        _no_scripts[frontier] = True
        return None
    return [_scored_reply(reply, len(terms)) for reply in replies]


async def _by_gets(
    frontier: Frontier, terms: Sequence[LookupTerm], crawls: Sequence[CrawlVersion], wanted: int
) -> list[Scored]:
    """The same answer from one ``GET`` per term log and crawl (no script)."""
    requests = [
        (CrawlKeys(crawl.crawl_id).search_log(term_hash(term.term) % crawl.term_logs), term)
        for crawl in crawls
        for term in terms
    ]
    logs = list(dict.fromkeys(log for log, _ in requests))
    pipe = frontier.pipeline(transaction=False)
    for log in logs:
        pipe.execute_command("GET", log, **RAW)
    read = dict(zip(logs, await pipe.execute(), strict=True))
    weights = _weights(terms)
    out = []
    for n, crawl in enumerate(crawls):
        mine = requests[n * len(terms) : (n + 1) * len(terms)]
        found = [postings_in(read[log] or b"", term_tag(term.term), None) for log, term in mine]
        out.append(score_postings(found, weights, wanted, max(crawl.entries, 1), SPREAD_POSTINGS))
    return out


async def pool(
    frontier: Frontier, terms: Sequence[LookupTerm], crawls: Sequence[CrawlVersion], wanted: int
) -> Pool:
    """The best ``wanted`` (crawl, item digest) pairs under ``terms`` over ``crawls``."""
    if not terms or not crawls:
        return Pool([], {})
    scored: list[Scored] | None = None
    if not _no_scripts.get(frontier):
        scored = await _by_script(frontier, terms, crawls, wanted)
    if scored is None:
        scored = await _by_gets(frontier, terms, crawls, wanted)
    ranked = []
    for crawl, found in zip(crawls, scored, strict=True):
        for rank, (field, score) in enumerate(zip(found.fields, found.scores, strict=True)):
            ranked.append((rank // ROUND, -score, crawl.created_at, crawl.crawl_id, field, crawl))
    ranked.sort(key=lambda r: r[:5])
    # each query word's rarity: the items it was found in (as a name token, a summary
    # word, a last component: the most of these) over every crawl searched
    total = sum(max(crawl.entries, 1) for crawl in crawls)
    found_in: dict[str, int] = {}
    for found in scored:
        most: dict[str, int] = {}
        for term, count in zip(terms, found.counts, strict=True):
            if term.word:
                most[term.word] = max(most.get(term.word, 0), count)
        for word, count in most.items():
            found_in[word] = found_in.get(word, 0) + count
    rarity = {word: idf(count, total) for word, count in found_in.items()}
    return Pool([(r[5], r[4]) for r in ranked[:wanted]], rarity)


async def record_entries(
    frontier: Frontier, candidates: Sequence[tuple[CrawlVersion, str]]
) -> list[Any]:
    """The stream entry id each candidate's search record names (None: not recorded),
    one pipelined ``HGET`` each."""
    if not candidates:
        return []
    pipe = frontier.pipeline(transaction=False)
    for crawl, field in candidates:
        keys = CrawlKeys(crawl.crawl_id)
        pipe.hget(keys.search_record(record_bucket(field, crawl.buckets)), field)
    return list(await pipe.execute())


async def read_items(
    frontier: Frontier, candidates: Sequence[tuple[CrawlVersion, str]]
) -> list[tuple[CrawlVersion, dict[str, Any]]]:
    """The latest items of candidates (those still recorded and in their stream)."""
    if not candidates:
        return []
    entry_ids = await record_entries(frontier, candidates)
    pipe = frontier.pipeline(transaction=False)
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
