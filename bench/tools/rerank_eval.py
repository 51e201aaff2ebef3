"""Score re-rankings of the candidates ``bench/tools/rerank_dump.py`` wrote (issue 48:
the transformer as a re-ranker, measured before it is built in).

    python -m bench.tools.rerank_eval dump.json --model DIR [--cache vectors.npz]

Each question's results by words (a name tier stays where it is) are re-ordered: the
first K by the engine fused with the transformer's cosine of the question to each
candidate's text; MRR@10, hit@1 and hit@5 per set, split and scope, for a grid of K and
fusions, beside the engine's own order and FTS5."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.quality_sets import Hit, Level, Question
from invcrawl.common.search.transformer import Transformer

ITEMS: dict[tuple[str, str], dict[str, Any]] = {}


def load_items(out_dir: Path) -> None:
    for path in out_dir.glob("*.jsonl"):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    item = json.loads(line)
                    ITEMS[(str(item.get("project")), str(item["key"]))] = item


def text_of(hit: dict[str, Any], how: str) -> str:
    name = hit["name"]
    if how == "doc":
        item = ITEMS.get((hit["project"], hit["key"]), {})
        doc = " ".join(str(item.get("doc") or hit["summary"]).split()[:30])
        return f"{name}: {doc}"
    if how == "name":
        return name
    if how == "tokens":
        from invcrawl.common.search import terms as t

        return " ".join(t.name_tokens(name)) + ". " + hit["summary"]
    return f"{name}: {hit['summary']}"


def question(row: dict[str, Any]) -> Question:
    return Question(
        row["text"], row["project"], tuple(row["answers"]), Level(row["level"]), row["held_out"]
    )


def hits(rows: list[dict[str, Any]]) -> list[Hit]:
    return [Hit(h["project"], h["key"], h["page"]) for h in rows]


def rerank(  # noqa: PLR0917 - a probe's grid
    row_hits: list[dict[str, Any]], cos: list[float], k: int, fuse: str, rrf_k: float, w: float
) -> list[dict[str, Any]]:
    named = [h for h in row_hits if h["score"] >= 1.0]
    texts = [h for h in row_hits if h["score"] < 1.0]
    head, tail = texts[:k], texts[k:]
    if not head:
        return row_hits
    cs = cos[len(named) : len(named) + len(head)]
    by_t = sorted(range(len(head)), key=lambda i: -cs[i])
    t_rank = {i: r for r, i in enumerate(by_t, 1)}
    if fuse == "rrf":
        val = [1 / (rrf_k + i + 1) + w / (rrf_k + t_rank[i]) for i in range(len(head))]
    elif fuse == "blend":  # engine score scaled to [0,1] in the head, plus w * cosine
        top = max(h["score"] for h in head) or 1.0
        val = [head[i]["score"] / top + w * cs[i] for i in range(len(head))]
    else:  # cosine alone
        val = list(cs)
    order = sorted(range(len(head)), key=lambda i: (-val[i], i))
    return named + [head[i] for i in order] + tail


def score(ranks: list[int | None]) -> tuple[float, float, float]:
    n = len(ranks) or 1
    mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return mrr, sum(1 for r in ranks if r == 1) / n, sum(1 for r in ranks if r and r <= 5) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dump", type=Path)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/rerank-vectors.npz"))
    parser.add_argument("--text", default="colon", choices=("colon", "tokens", "name", "doc"))
    parser.add_argument("--items", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = json.loads(args.dump.read_text())
    if args.items:
        load_items(args.items)
    texts: dict[str, int] = {}
    for row in rows:
        texts.setdefault("Q\0" + row["text"], len(texts))
        for scope in ("within", "across"):
            for h in row[scope]:
                texts.setdefault(text_of(h, args.text), len(texts))
    cache = args.cache.with_suffix(f".{args.text}.npz")
    vectors: dict[str, np.ndarray] = {}
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as data:
            vectors = dict(zip(str(data["texts"]).split("\0\1"), data["vectors"], strict=True))
    todo = [t for t in texts if t not in vectors]
    if todo:
        model = Transformer.load(args.model)
        started = time.process_time()
        for at in range(0, len(todo), 256):
            chunk = todo[at : at + 256]
            out = model.embed([c.removeprefix("Q\0") for c in chunk])
            vectors.update(zip(chunk, out, strict=True))
            print(f"{at + len(chunk)}/{len(todo)}", file=sys.stderr, flush=True)
        per = (time.process_time() - started) / len(todo) * 1000
        print(f"embedded {len(todo)} texts, {per:.2f} ms CPU each", file=sys.stderr)
        keys = list(vectors)
        np.savez(
            cache, texts=np.array("\0\1".join(keys)), vectors=np.stack([vectors[k] for k in keys])
        )
    grid: list[tuple[str, int, str, float, float]] = [("engine", 0, "none", 0, 0)]
    for k in (10, 20, 30, 50):
        for rrf_k in (5, 10, 30, 60):
            for w in (0.5, 1.0, 1.5, 2.0, 3.0):
                grid.append((f"rrf k={k} rrfk={rrf_k} w={w}", k, "rrf", rrf_k, w))
        for w in (0.5, 1.0, 2.0, 4.0):
            grid.append((f"blend k={k} w={w}", k, "blend", 0, w))
        grid.append((f"cos k={k}", k, "cos", 0, 0))
    groups: dict[
        tuple[str, str, str], list[tuple[Question, list[dict[str, Any]], list[float], list[Any]]]
    ] = {}
    for row in rows:
        q = question(row)
        qv = vectors["Q\0" + row["text"]]
        splits = ["all"] + (["held-out" if q.held_out else "tune"] if row["set"] == "own" else [])
        for scope in ("within", "across"):
            cos = [float(vectors[text_of(h, args.text)] @ qv) for h in row[scope]]
            for split in splits:
                groups.setdefault((row["set"], split, scope), []).append(
                    (q, row[scope], cos, row[scope + "_fts"])
                )
    results: dict[str, dict[tuple[str, str, str], tuple[float, float, float]]] = {}
    for name, k, fuse, rrf_k, w in grid:
        res = {}
        for g, items in groups.items():
            ranks = []
            for q, hs, cos, _ in items:
                order = hs if fuse == "none" else rerank(hs, cos, k, fuse, rrf_k, w)
                ranks.append(q.rank(hits(order[:10])))
            res[g] = score(ranks)
        results[name] = res
    fts = {
        g: score([q.rank([Hit(*f) for f in fr]) for q, _, _, fr in items])
        for g, items in groups.items()
    }
    keys = sorted(groups)
    print("| config | " + " | ".join(f"{s}/{sp}/{sc}" for s, sp, sc in keys) + " |")
    print("| fts5 | " + " | ".join(f"{fts[g][0]:.3f}" for g in keys) + " |")
    base = results["engine"]
    wanted = [
        ("own", "tune", "within"),
        ("own", "held-out", "within"),
        ("conala-dev", "all", "within"),
        ("own", "all", "across"),
        ("docs-mcp-python", "all", "within"),
    ]
    ranked = sorted(
        results.items(), key=lambda kv: -statistics.fmean([kv[1].get(g, (0.0,))[0] for g in wanted])
    )
    shown = [("engine", base), *ranked[:12]]
    shown += [
        (n, r)
        for n, r in results.items()
        if n.startswith("cos") or n in ("blend k=20 w=2.0", "rrf k=20 rrfk=5 w=1.0")
    ]
    for name, res in shown:
        print(f"| {name} | " + " | ".join(f"{res[g][0]:.3f}" for g in keys) + " |")
    print(
        "hit@5 engine / best:",
        {f"{g}": (round(base[g][2], 2), round(ranked[0][1][g][2], 2)) for g in keys},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
