"""The query sets of ``bench/search_quality.py`` (issue 48 item 5), stored in
``bench/data/`` (sources and licences: ``bench/data/README.md``):

* ``questions.json``: ours, questions in a developer's words over several projects, each
  with the symbol keys that answer it; every 4th (index 3, 7, ...) is held out (reported
  apart, never looked at while tuning the engine);
* ``conala_dev.json``: DocPrompting's CoNaLa dev split whose oracle docs are CPython's,
  mapped to CPython item keys by page and anchor (``python -m bench.quality_sets conala``
  rebuilds it from the upstream file and a crawl's items);
* ``docs_mcp_python.json``: docs-mcp-server's search-eval entries of library ``python``,
  graded by page (``python -m bench.quality_sets docsmcp``).

A question's answers are symbol keys of its project (``Level.SYMBOL``) or pages below
the project's site root (``Level.PAGE``, e.g. ``library/pathlib.html``)."""

from __future__ import annotations

import argparse
import enum
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
HELD_OUT_EVERY = 4
PYTHON = "Python"  # CPython's project name, as its inventory gives it
DOCS_PYTHON = "https://docs.python.org/3/"


class Level(enum.Enum):
    SYMBOL = "symbol"
    PAGE = "page"


@dataclass(frozen=True, slots=True)
class Hit:
    project: str
    key: str
    page: str  # path below the site's root, no fragment


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    project: str
    answers: tuple[str, ...]
    level: Level = Level.SYMBOL
    held_out: bool = False

    def rank(self, hits: Sequence[Hit]) -> int | None:
        """1-based rank of the first hit that answers, None when none does. Pages are
        counted once each (a hit on the 3rd distinct page is rank 3), another project's
        as much as the question's."""
        if self.level is Level.SYMBOL:
            for i, hit in enumerate(hits, 1):
                if hit.project == self.project and hit.key in self.answers:
                    return i
            return None
        pages: list[tuple[str, str]] = []  # another project's page takes a place too
        for hit in hits:
            if (hit.project, hit.page) not in pages:
                pages.append((hit.project, hit.page))
        for i, (project, page) in enumerate(pages, 1):
            if project == self.project and page in self.answers:
                return i
        return None


@dataclass(frozen=True, slots=True)
class QuerySet:
    name: str
    questions: tuple[Question, ...]
    source: str


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def own_set(path: Path | None = None) -> QuerySet:
    data = _load(path or DATA / "questions.json")
    questions = tuple(
        Question(
            text=q["q"],
            project=q["project"],
            answers=tuple(q["answers"]),
            held_out=i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1,
        )
        for i, q in enumerate(data["questions"])
    )
    return QuerySet("own", questions, str(data.get("source", "")))


def conala_set(path: Path | None = None) -> QuerySet:
    data = _load(path or DATA / "conala_dev.json")
    questions = tuple(
        Question(text=q["q"], project=PYTHON, answers=tuple(q["answers"]))
        for q in data["questions"]
        if q["answers"]
    )
    return QuerySet("conala-dev", questions, str(data["source"]))


def docs_mcp_set(path: Path | None = None) -> QuerySet:
    data = _load(path or DATA / "docs_mcp_python.json")
    questions = tuple(
        Question(
            text=q["q"],
            project=PYTHON,
            answers=tuple(r["page"] for r in q["qrels"]),
            level=Level.PAGE,
        )
        for q in data["questions"]
    )
    return QuerySet("docs-mcp-python", questions, str(data["source"]))


def missing_answers(qs: QuerySet, known: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(question, answer) pairs whose answer names no item (symbols) or page of its
    project in the crawled items: a set that no longer matches the crawls."""
    out = []
    for q in qs.questions:
        have = known.get(q.project, set())
        out += [(q.text, a) for a in q.answers if a not in have]
    return out


# -- rebuilding the stored public sets from their upstream files ----------------------------


def _items(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def _page_of(item: dict[str, Any], root: str) -> str:
    url = str(item.get("page_url") or item.get("url") or "").split("#")[0]
    return url[len(root) :] if url.startswith(root) else url


def map_conala(upstream: Path, items: Path, root: str) -> dict[str, Any]:
    """DocPrompting's ids (``python.library.os.path#os.path.exists``: page
    ``library/os.path.html``, anchor ``os.path.exists``) to the CPython items of that page
    and anchor. An entry keeps the ids it had; those of other projects are left out."""
    by_anchor: dict[tuple[str, str], list[str]] = {}
    by_name: dict[str, list[str]] = {}  # py objects by qualified name
    for item in _items(items):
        page = _page_of(item, root)
        by_anchor.setdefault((page, str(item.get("anchor") or "")), []).append(item["key"])
        if item.get("domain") == "py":
            by_name.setdefault(str(item.get("name")), []).append(item["key"])
    out = []
    for entry in json.loads(upstream.read_text(encoding="utf-8")):
        oracle = [o for o in entry["oracle_man"] if o.startswith("python.")]
        if not oracle:
            continue
        keys: list[str] = []
        for doc_id in oracle:
            page_id, _, anchor = doc_id.partition("#")
            folder, _, stem = page_id.removeprefix("python.").partition(".")
            # The ids come from older docs: an anchor the 3.11 page lacks (functions.html
            # #list: list is documented in stdtypes.html now) is the object of that name.
            keys += by_anchor.get((f"{folder}/{stem}.html", anchor)) or by_name.get(anchor, [])
        out.append(
            {
                "id": entry["question_id"],
                "q": entry["nl"],
                "oracle_man": oracle,
                "answers": sorted(set(keys)),
            }
        )
    return {
        "source": "github shuyanzhou/docprompting data/conala/cmd_dev.oracle_man.full.json "
        "(commit 0a89d2b624dd62c81143c84e1273a36ea6c3c8ea), Apache-2.0; entries with a "
        "CPython oracle doc, mapped to CPython 3.11 item keys by page and anchor (an anchor "
        "the 3.11 page lacks: the py object of that name)",
        "questions": out,
    }


def map_docs_mcp(upstream: Path) -> dict[str, Any]:
    import yaml  # type: ignore[import-untyped]  # only to rebuild the stored file

    data = yaml.safe_load(upstream.read_text(encoding="utf-8"))
    out = []
    for entry in data["entries"]:
        v = entry["vars"]
        if v["library"] != "python":
            continue
        qrels = [
            {"page": r["url"].removeprefix(DOCS_PYTHON), "grade": r["grade"]}
            for r in v["qrels"]
            if r["url"].startswith(DOCS_PYTHON)
        ]
        out.append({"q": v["query"], "intent": v["intent"], "qrels": qrels})
    return {
        "source": "github arabold/docs-mcp-server tests/search-eval/dataset.yaml "
        "(commit 80927124f36a39c72a00ec7ce7864633705ba5b5), MIT; the entries of library "
        "python, graded by page (docs.python.org/3/ paths)",
        "questions": out,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    c = sub.add_parser("conala", help="map the CoNaLa dev file to CPython keys")
    c.add_argument("upstream", type=Path, help="cmd_dev.oracle_man.full.json")
    c.add_argument("items", type=Path, help="invcrawl crawl's JSON Lines of CPython 3.11")
    c.add_argument("--root", default="file:///usr/share/doc/python3.11/html/")
    d = sub.add_parser("docsmcp", help="the python entries of docs-mcp-server's dataset")
    d.add_argument("upstream", type=Path, help="tests/search-eval/dataset.yaml")
    args = parser.parse_args(argv)
    if args.what == "conala":
        data, name = map_conala(args.upstream, args.items, args.root), "conala_dev.json"
    else:
        data, name = map_docs_mcp(args.upstream), "docs_mcp_python.json"
    (DATA / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{DATA / name}: {len(data['questions'])} questions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
