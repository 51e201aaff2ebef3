"""The misses report of ``bench/search_quality.py --misses FILE``: every question
invcrawl does not answer first, its top hits against the expected answers, and for each
(set, scope) the misses counted by what took rank 1, so that a change of the engine is
read as classes of misses moving, never as one query fixed."""

from __future__ import annotations

import re
from collections import Counter

from bench.quality_eval import Answer, Run
from bench.quality_sets import Level

PROSE_ROLES = ("label", "doc", "term")
WORD = re.compile(r"[a-z_][a-z0-9_]*")
CLASSES = {
    "nothing": "no result at all",
    "c-api": "a C API item (domain c) took rank 1",
    "prose": "a label, doc page or glossary term took rank 1",
    "other-project": "another project's item took rank 1 (across projects)",
    "name-word": "an object named by one word of the question took rank 1 (list, set, Counter...)",
    "sibling": "a neighbour of the answer (same module or class) took rank 1",
    "other": "an unrelated API object took rank 1",
}


def _parent(key: str) -> str:
    name = key.split(":", 2)[-1]
    return name.rsplit(".", 1)[0] if "." in name else ""


def miss_class(answer: Answer) -> str:
    if not answer.top:
        return "nothing"
    first = answer.top[0]
    q = answer.question
    domain, _, rest = first.key.partition(":")
    role = rest.partition(":")[0]
    if first.project != q.project:
        return "other-project"
    if domain == "c":
        return "c-api"
    if domain == "std" and role in PROSE_ROLES and not any(a.startswith("std:") for a in q.answers):
        return "prose"
    last = first.key.split(":", 2)[-1].rsplit(".", 1)[-1].lower()
    if last in WORD.findall(q.text.lower()):
        return "name-word"
    if q.level is Level.SYMBOL and _parent(first.key) in {_parent(a) for a in q.answers} - {""}:
        return "sibling"
    return "other"


def report(run: Run, top: int = 3) -> str:
    out = ["# Misses of invcrawl's search", "", "Classes (what took rank 1 of a miss):", ""]
    out += [f"- `{name}`: {what}" for name, what in CLASSES.items()]
    out.append("")
    for (set_, scope, system), answers in run.answers.items():
        if system != "invcrawl":
            continue
        misses = [a for a in answers if a.rank != 1]
        counts = Counter(miss_class(a) for a in misses)
        shown = ", ".join(f"{c} {counts[c]}" for c in CLASSES if counts[c])
        out += [f"## {set_}, {scope}: {len(misses)} of {len(answers)} missed ({shown})", ""]
        for a in misses:
            hits = ", ".join(
                f"`{h.key}`" + (f" ({h.project})" if scope == "across" else "") for h in a.top[:top]
            )
            rank = a.rank if a.rank is not None else "-"
            out.append(
                f"- [{miss_class(a)}] {a.question.text!r} [{a.question.project}] rank {rank}: "
                f"expected `{'` / `'.join(a.question.answers[:3])}`; got {hits or 'nothing'}"
            )
        out.append("")
    return "\n".join(out)
