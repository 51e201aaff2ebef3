"""CPU cost of the transformer re-ranker (``common/search/rerank.py``) on real candidates:
the first RERANK_K results by words of 60 bench questions (``rerank_dump.py``'s dump),
each re-ranked cold (no vector cached: a new server, or new candidates) and warm (its
candidates cached, the question new: the LRU's hits), one BLAS thread as the CLI and the MCP server set it.

    OPENBLAS_NUM_THREADS=1 python -m bench.tools.rerank_cost dump.json"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from invcrawl.common.search import rerank


def main(argv: list[str] | None = None) -> int:
    rows = json.loads(Path((argv or sys.argv[1:])[0]).read_text())[:60]
    started = time.process_time()
    reranker = rerank.load()
    if reranker is None:
        print(rerank.unavailable())
        return 1
    print(f"load: {time.process_time() - started:.2f} s CPU")
    for state in ("cold", "warm"):
        costs, tokens = [], []
        for row in rows:
            texts = [
                rerank.candidate_text(h["name"], h["summary"])
                for h in row["within"]
                if h["score"] < 1
            ][: rerank.RERANK_K]
            if state == "cold":
                tokens += [len(reranker.model.ids(t)) for t in texts]
            query = row["text"] if state == "cold" else row["text"] + "?"  # a new question
            at = time.process_time()
            reranker.similarities(query, texts)
            costs.append((time.process_time() - at) * 1000)
        costs.sort()
        p95 = costs[int(len(costs) * 0.95) - 1]
        print(
            f"{state}: {len(costs)} questions, {rerank.RERANK_K} candidates each: CPU ms p50 "
            f"{statistics.median(costs):.1f}, p95 {p95:.1f}"
            + (f"; candidate tokens median {statistics.median(tokens):.0f}" if tokens else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
