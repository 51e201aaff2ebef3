"""Search quality (issue 48 item 5): invcrawl's symbol search against public query sets
and our own, each beside an SQLite FTS5 BM25 baseline built from the same items, in one
run; and the tokens an agent gets per MCP answer.

    python -m bench.search_quality                  # the sites below, ~1 min once crawled
    python -m bench.search_quality --json q.json     # the table, and JSON in q.json
    python -m bench.search_quality --misses misses.md   # every miss, top 3 vs expected

1. Sites: CPython 3.11, Django, SQLAlchemy, Requests, attrs, Scrapy, Flask, Click and
   pytest as Debian installs them under /usr/share/doc (``--site DIR`` for others),
   crawled once by file path into the bench's embedded Redis (``--data-dir``) and
   reused (``bench/quality_crawl.py``: re-indexed when the engine's code changed).
2. Sets (``bench/quality_sets.py``, ``bench/data/``): ours (questions in a developer's
   words, tune and held-out splits), CoNaLa dev (DocPrompting; CPython oracle docs),
   docs-mcp-server's Python entries (graded by page).
3. Each question is asked of invcrawl through ``invcrawl.frontier.search.search_symbols``
   (the CLI's and the MCP server's path, so the bench follows the engine) and of the
   FTS5 baseline (``bench/quality_fts.py``), within its project and across all.
4. Tokens per answer: ``bench/quality_tokens.py``.

Figures, not asserts: ``tests/e2e/test_bench_smoke.py`` runs it on a fixture site and
checks the tables are printed, never a number."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import quality_eval, quality_misses, quality_tokens
from bench.quality_crawl import (
    DEFAULT_DATA_DIR,
    Corpus,
    default_sites,
    ensure_crawled,
    load_corpus,
    plan,
)
from bench.quality_fts import Baseline
from bench.quality_sets import Level, QuerySet, conala_set, docs_mcp_set, missing_answers, own_set
from invcrawl.frontier.connection import connect
from invcrawl.localredis.embedded import embedded_redis

SETS = ("own", "conala", "docs-mcp")
REDIS_DIR = "data"  # the embedded Redis's own folder inside --data-dir


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _sets(names: Sequence[str], questions: Path | None) -> list[QuerySet]:
    loaders = {"own": lambda: own_set(questions), "conala": conala_set, "docs-mcp": docs_mcp_set}
    return [loaders[n]() for n in names]


def _checked(qs: QuerySet, corpus: Corpus) -> QuerySet:
    """The set less the answers that name nothing crawled (said, with a few), and less the
    questions left with no answer."""
    known = corpus.pages if qs.questions and qs.questions[0].level is Level.PAGE else corpus.keys
    missing = missing_answers(qs, known)
    if missing:
        say(f"{qs.name}: {len(missing)} answer(s) name nothing crawled, e.g. {missing[:3]}")
    kept = []
    for q in qs.questions:
        answers = tuple(a for a in q.answers if a in known.get(q.project, ()))
        if answers:
            kept.append(dataclasses.replace(q, answers=answers))
    return QuerySet(qs.name, tuple(kept), qs.source)


async def _run(args: argparse.Namespace, url: str, corpus: Corpus) -> dict[str, Any]:
    sets = [_checked(qs, corpus) for qs in _sets(args.sets, args.questions)]
    baseline = Baseline(corpus.rows)
    redis = connect(url)  # the client the CLI and the MCP server make
    run = quality_eval.Run()
    started = time.monotonic()
    try:
        searchers = {
            "invcrawl": quality_eval.invcrawl_searcher(redis, corpus, run.errors),
            "fts5": quality_eval.fts_searcher(baseline),
        }
        for qs in sets:
            say(f"{qs.name}: {len(qs.questions)} questions")
            await quality_eval.evaluate(qs, searchers, run)
    finally:
        await redis.aclose()
        baseline.close()
    sizes: list[quality_tokens.Sizes] = []
    own = next((qs for qs in sets if qs.name == "own"), None)
    if not args.no_tokens and own is not None:
        sizes = await quality_tokens.measure(url, own.questions)
    if args.misses:
        args.misses.write_text(quality_misses.report(run), encoding="utf-8")
        say(f"misses: {args.misses}")
    return {
        "items": len(corpus.rows),
        "projects": sorted(corpus.keys),
        "sets": {qs.name: {"questions": len(qs.questions), "source": qs.source} for qs in sets},
        "scores": [s.to_json() for s in run.scores],
        "tokens": [s.to_json() for s in sizes],
        "errors": run.errors,
        "seconds": round(time.monotonic() - started, 1),
        "_run": run,
        "_sizes": sizes,
    }


def render(result: dict[str, Any]) -> str:
    run: quality_eval.Run = result["_run"]
    lines = [
        f"Search quality: {result['items']} items of {len(result['projects'])} projects "
        f"({', '.join(result['projects'])}); top {quality_eval.LIMIT}",
        "",
        quality_eval.table(run.scores),
        "Our set per project, within its project:",
        "",
        quality_eval.by_project(run, "own", "within"),
        "Targets of issue 48:",
        "",
        quality_eval.targets(run.scores),
    ]
    if run.errors:
        lines += [
            f"invcrawl raised on {len(run.errors)} search(es), counted as no answer; "
            f"first: {run.errors[0]}",
            "",
        ]
    if result["_sizes"]:
        lines += [
            "Tokens per MCP answer (UTF-8 bytes / 4), own set:",
            "",
            quality_tokens.table(result["_sizes"]),
        ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                        help=f"the crawls' embedded Redis and JSON Lines (default {DEFAULT_DATA_DIR})")  # fmt: skip
    parser.add_argument("--site", type=Path, action="append", default=None,
                        help="a built Sphinx site to crawl (repeat; default: the Debian doc sites)")  # fmt: skip
    parser.add_argument("--questions", type=Path, default=None,
                        help="our set's file (default bench/data/questions.json)")  # fmt: skip
    parser.add_argument("--sets", default=",".join(SETS),
                        help=f"sets to run, comma-separated (default {','.join(SETS)})")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the results to FILE as JSON")
    parser.add_argument("--misses", type=Path, help="write every miss of invcrawl to FILE")
    parser.add_argument("--no-tokens", action="store_true", help="skip the MCP answer sizes")
    args = parser.parse_args(argv)
    args.sets = [s for s in args.sets.split(",") if s]
    unknown = set(args.sets) - set(SETS)
    if unknown:
        parser.error(f"unknown set(s) {sorted(unknown)}: pick from {', '.join(SETS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.site:
        paths = list(args.site)
    else:
        paths, missing = default_sites()
        for p in missing:
            say(f"not installed, left out: {p} (apt-get install its doc package)")
    sites = plan(paths)
    data_dir = args.data_dir.expanduser()
    data_dir.mkdir(parents=True, exist_ok=True)
    with embedded_redis(data_dir / REDIS_DIR) as url:
        ensure_crawled(data_dir, sites, url, say)
        corpus = load_corpus(data_dir, sites)
        result = asyncio.run(_run(args, url, corpus))
    if args.json:
        data = {k: v for k, v in result.items() if not k.startswith("_")}
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
