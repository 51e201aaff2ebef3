"""Dump each bench question's top candidates (issue 48: the re-ranker measured offline).

    python -m bench.tools.rerank_dump --data-dir DIR --out dump.json [--top 50]

Crawls the bench's sites as ``bench/search_quality.py`` does (reusing its crawls), asks
every question of every set of invcrawl (``search_answer``, as the MCP server: by
meaning) for its first ``--top`` results, within its project and across all, and of the
FTS5 baseline for its first 10; writes them with each question's answers, so that
``bench/tools/rerank_eval.py`` scores re-rankings of them without Redis."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench.quality_crawl import default_sites, ensure_crawled, load_corpus, plan
from bench.quality_fts import Baseline
from bench.search_quality import REDIS_DIR, SETS, _checked, _sets
from invcrawl.frontier.connection import connect
from invcrawl.frontier.search import search_answer
from invcrawl.frontier.session import Frontier
from invcrawl.localredis.embedded import embedded_redis


async def _dump(url: str, corpus: Any, top: int) -> list[dict[str, Any]]:
    sets = [_checked(qs, corpus) for qs in _sets(list(SETS), None)]
    baseline = Baseline(corpus.rows)
    redis = connect(url)
    out: list[dict[str, Any]] = []
    try:
        for qs in sets:
            print(f"{qs.name}: {len(qs.questions)}", file=sys.stderr, flush=True)
            for q in qs.questions:
                row: dict[str, Any] = {
                    "set": qs.name,
                    "text": q.text,
                    "project": q.project,
                    "answers": list(q.answers),
                    "level": q.level.value,
                    "held_out": q.held_out,
                }
                for scope in ("within", "across"):
                    project = q.project if scope == "within" else None
                    try:
                        answer = await search_answer(
                            Frontier(redis), q.text, project=project, limit=top, by_meaning=True
                        )
                        hits = answer.hits
                    except ValueError:
                        hits = []
                    row[scope] = [
                        {
                            "project": h.project,
                            "key": h.key,
                            "page": corpus.page(h.project, h.url),
                            "name": h.name,
                            "role": h.role,
                            "summary": h.summary,
                            "score": h.score,
                        }
                        for h in hits
                    ]
                    fts = baseline.search(q.text, project, 10)
                    row[scope + "_fts"] = [[h.project, h.key, h.page] for h in fts]
                out.append(row)
    finally:
        await redis.aclose()
        baseline.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--top", type=int, default=50)
    args = parser.parse_args(argv)
    paths, _ = default_sites()
    sites = plan(paths)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    with embedded_redis(args.data_dir / REDIS_DIR) as url:
        ensure_crawled(args.data_dir, sites, url, lambda s: print(s, file=sys.stderr))
        corpus = load_corpus(args.data_dir, sites)
        rows = asyncio.run(_dump(url, corpus, args.top))
    args.out.write_text(json.dumps(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
