"""The crawls of ``bench/search_quality.py``: real Sphinx sites installed under
``/usr/share/doc`` (Debian's doc packages), crawled by file path with ``invcrawl crawl``
into the bench's own embedded Redis (``--data-dir``, default
``~/.cache/invcrawl/search-bench``) and kept there, with each crawl's JSON Lines in
``DATA_DIR/out/`` (the baseline's rows).

A later run reuses them: a site whose ``out/CRAWL.jsonl`` exists is not crawled again.
The search index lives beside the items and is written by the code that committed them,
so when the engine's code differs from the one that last indexed the crawls (a hash of
its sources, kept in ``DATA_DIR/engine.stamp``) the bench runs ``invcrawl search
--reindex`` first: an engine change is measured on the same items."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import invcrawl
from bench.quality_fts import Row
from invcrawl.common.site import plan_sites

DEFAULT_DATA_DIR = Path.home() / ".cache" / "invcrawl" / "search-bench"
DOC = Path("/usr/share/doc")
# The sites of the bench: CPython and projects developers ask about (the Debian package
# that installs each; one missing is left out, with a note).
DEFAULT_SITES = (
    "python3.11/html",  # python3.11-doc
    "python-django-doc/html",
    "python-sqlalchemy-doc/html",
    "python-requests-doc/html",
    "python-attr-doc/html",
    "python-scrapy-doc/html",
    "python-flask-doc/html",
    "python-click-doc/html",
    "python-pytest-doc/html",
)
# What writes the index (its terms, their logs, the records, the vector log and the
# model its vectors are embedded by): a change here re-indexes the kept crawls; one of
# the ranking alone (fusion, lexical, semantic, the lookup's weights) is measured on the
# index as it is.
ENGINE_SOURCES = (
    "common/search/terms.py",
    "common/search/postings.py",
    "common/search/vector_log.py",
    "common/search/model",
    "common/search/summary.py",
    "common/items.py",
    "frontier/search_index.py",
    "frontier/lua",
)


@dataclass(frozen=True, slots=True)
class Site:
    path: Path
    crawl_id: str

    @property
    def root(self) -> str:
        return self.path.resolve().as_uri() + "/"


def default_sites() -> tuple[list[Path], list[Path]]:
    """(installed, missing) of DEFAULT_SITES."""
    paths = [DOC / s for s in DEFAULT_SITES]
    return [p for p in paths if (p / "objects.inv").is_file()], [
        p for p in paths if not (p / "objects.inv").is_file()
    ]


def plan(paths: Sequence[Path]) -> list[Site]:
    return [Site(Path(s), cid) for s, cid in plan_sites([str(p) for p in paths])]


def _invcrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "invcrawl", *args], capture_output=True, text=True, check=False
    )


def engine_stamp() -> str:
    """A hash of the engine's sources in the installed invcrawl."""
    package = Path(invcrawl.__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for rel in ENGINE_SOURCES:
        base = package / rel
        files = sorted(base.rglob("*")) if base.is_dir() else [base]
        for f in files:
            if f.is_file() and f.suffix in (".py", ".lua", ".npz"):
                digest.update(str(f.relative_to(package)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def out_file(data_dir: Path, site: Site) -> Path:
    return data_dir / "out" / f"{site.crawl_id}.jsonl"


def ensure_crawled(data_dir: Path, sites: Sequence[Site], url: str, say: Any) -> None:
    """Crawl the sites not crawled yet; re-index every crawl when the engine changed."""
    todo = [s for s in sites if not out_file(data_dir, s).is_file()]
    if todo:
        say(f"crawling {len(todo)} site(s): {', '.join(s.crawl_id for s in todo)}")
        done = _invcrawl(
            "crawl", *(str(s.path) for s in todo), "--redis", url,
            "--out-dir", str(data_dir / "out"), "--progress", "none", "--consumers", "2",
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"invcrawl crawl failed ({done.returncode}): {done.stderr[-2000:]}")
    stamp_file = data_dir / "engine.stamp"
    stamp = engine_stamp()
    if todo and len(todo) == len(sites):
        stamp_file.write_text(stamp)  # every crawl was just indexed by this engine
    if stamp_file.is_file() and stamp_file.read_text().strip() == stamp:
        return
    say("the engine changed since these crawls were indexed: invcrawl search --reindex")
    done = _invcrawl("search", "--reindex", "--redis", url)
    if done.returncode != 0:
        raise SystemExit(f"invcrawl search --reindex failed: {done.stderr[-2000:]}")
    say(done.stderr.strip() or done.stdout.strip())
    stamp_file.write_text(stamp)


def items(data_dir: Path, site: Site) -> Iterator[dict[str, Any]]:
    with out_file(data_dir, site).open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def page_of(url: str, root: str) -> str:
    page = url.split("#", 1)[0]
    return page[len(root) :] if page.startswith(root) else page


@dataclass
class Corpus:
    """What the bench knows of the crawled items: the baseline's rows, each project's
    keys and pages (to check the query sets), each project's site root."""

    rows: list[Row]
    keys: dict[str, set[str]]
    pages: dict[str, set[str]]
    roots: dict[str, str]

    def page(self, project: str, url: str) -> str:
        return page_of(url, self.roots.get(project, ""))


def load_corpus(data_dir: Path, sites: Sequence[Site]) -> Corpus:
    corpus = Corpus([], {}, {}, {})
    for site in sites:
        for item in items(data_dir, site):
            project = str(item.get("project") or "")
            corpus.roots.setdefault(project, site.root)
            page = page_of(str(item.get("page_url") or item.get("url") or ""), site.root)
            key = str(item["key"])
            corpus.keys.setdefault(project, set()).add(key)
            corpus.pages.setdefault(project, set()).add(page)
            corpus.rows.append(
                Row(project, key, str(item.get("name") or ""), str(item.get("doc") or ""), page)
            )
    return corpus
