"""The sweep of the wild (issue "Extraction on any theme"): every Sphinx site that the
Debian documentation packages of ``../shared/corpus/debian-doc-packages.txt`` install
(one without an ``objects.inv`` is skipped and named), served by nginx from
``/usr/share/doc`` (``gzip_static on``), crawled by ``invcrawl crawl`` against a private
redis-server, and every item checked against its page's HTML by this script's own lxml
code, independent of the extractor (it never imports ``invcrawl.common.extract``):

* accounting: one item per unique inventory entry;
* ``anchor_missing`` only where the page really has no element with that id;
* a non-empty signature for every object entry (not ``std:``) whose anchor is a ``dt``;
* no permalink sign (¶, #, link icons) and no ``[source]`` in any signature or title;
* no member body in a container's or a module's ``doc``: the text of a nested ``dt``'s
  ``dd`` (long enough to be telling) must not appear in it;
* no empty ``doc`` where the anchor ``dt``'s own ``dd`` has text;
* the Markdown round trip: ``doc_markdown`` rendered by markdown-it-py shows no ``*`` or
  backtick that ``doc`` does not have (``markdown``: outside code; ``stray``: code spans
  included, so a marker left inside one, ``Ctrl`-`C``, ``issues/*num*``, counts too);
* ``params``: every parameter name is an identifier, optionally prefixed by ``*`` or
  ``**`` (C's variadic ``...`` too); an unnamed C parameter (name null) is counted apart,
  as ``unnamed``, not as a failure.

Targets (issue 28): ``params`` <= 0.1% of the items that have params, ``stray`` <= 0.05% of
the items, on every site.

    python -m bench.sweep                     # every site (a few minutes)
    python -m bench.sweep --sites 5           # the first five
    python -m bench.sweep --only python-dask-doc,sphinx-doc
    python -m bench.sweep --generators        # only the sites of other generators

Then every site of another generator (``tests/sites/generator_sites.py``: Debian's
Twisted API docs, made by pydoctor 22.9.1, and the fixture sites built by pydoctor 25
and 22 and by mkdocstrings), each served by its own nginx and crawled the same way, with
the targets of issue 35 counted on its items by ``tests/support/doc_targets.py`` (an
mkdocstrings site's by ``tests/support/mkcheck.py``), each its own lxml reading of the
pages: accounting,
``anchor_missing`` where the page has the fragment, empty signatures and parameter names
differing from the header's among the symbols whose header shows a call, docs beginning
with their own heading, container docs holding a member's body, members with another
``parent``, class and module pages whose doc lacks the page's docstring.

One line per site and a total; figures, not asserts (docs/extraction.md holds a run).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lxml import html as lxml_html
from markdown_it import MarkdownIt

from bench import fleet
from bench.fleet import DOC, find_sites
from bench.harness import REPO
from bench.nginx import serve
from invcrawl.localredis.server import RedisServer

try:  # the tests' fixture sites and checks (tests/sites/, tests/support/): tests/ on the path
    from sites.generator_sites import generator_sites

    from support import mkcheck
    from support.doc_targets import count_targets
except ModuleNotFoundError as exc:
    raise SystemExit(f"{exc}: run it as PYTHONPATH=tests python -m {__spec__.name}") from exc

NOISE = ("¶", "[source]", "\uf0c1", "\U0001f517")  # permalink signs, viewcode, link icons
COMMONMARK = MarkdownIt("commonmark")
CHECKS = (
    "accounting", "anchor", "signature", "noise", "member", "empty_doc", "markdown", "stray",
    "params",
)  # fmt: skip
PARAM_NAME = re.compile(r"\*{0,2}[^\W\d]\w*")
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Pages:
    """Page HTML by URL (from the files nginx serves), parsed once."""

    def __init__(self, base_url: str) -> None:
        self.base = base_url
        self.cache: dict[str, tuple[Any, dict[str, Any]]] = {}

    def get(self, url: str) -> Any:
        page = url.split("#", 1)[0]
        if page not in self.cache:
            path = DOC / unquote(urlsplit(page).path).lstrip("/")
            data = None
            if path.exists():
                data = path.read_bytes()
            elif path.with_name(path.name + ".gz").exists():
                data = gzip.decompress(path.with_name(path.name + ".gz").read_bytes())
            root = lxml_html.fromstring(data) if data else None
            ids = (
                {el.get("id"): el for el in root.iter() if el.get("id")} if root is not None else {}
            )
            self.cache[page] = (root, ids)
        return self.cache[page]


def text(el: Any) -> str:
    return " ".join(el.text_content().split())


def markdown_texts(markdown: str) -> tuple[str, str]:
    """The rendered text without code, and with it."""
    if not markdown.strip():
        return "", ""
    html = CONTROL.sub("", COMMONMARK.render(markdown))  # a page's "\x07": no XML text
    root = lxml_html.fromstring("<div>" + html + "</div>")
    everything = root.text_content()
    for code in root.xpath("//code|//pre"):
        code.drop_tree()
    return root.text_content(), everything


def bad_param_name(item: dict[str, Any]) -> bool:
    """A parameter whose name is not a parameter name (C's ``...`` is one)."""
    for p in item.get("params") or []:
        name = p.get("name")
        if name is None or (name == "..." and item.get("domain") in ("c", "cpp")):
            continue
        if not isinstance(name, str) or PARAM_NAME.fullmatch(name) is None:
            return True
    return False


def own_text(dd: Any) -> str:
    """A dd's text without the object descriptions nested in it (a class whose body is
    only its members has no text of its own)."""
    copy = lxml_html.fromstring(lxml_html.tostring(dd))
    for dl in copy.xpath(".//dl[dt[@id]]"):
        dl.drop_tree()
    return text(copy)


def member_bodies(dt: Any) -> list[str]:
    """Texts of the bodies of object descriptions nested in this dt's dd."""
    dd = dt.getnext()
    if dd is None or dd.tag != "dd":
        return []
    out = []
    for inner in dd.iter("dt"):
        if inner.get("id") is None:
            continue
        body = inner.getnext()
        if body is not None and body.tag == "dd":
            words = text(body)
            if len(words) >= 60:
                out.append(words[:100])
    return out


def check_item(item: dict[str, Any], pages: Pages) -> list[str]:
    """The checks this item fails (names of CHECKS)."""
    failed = []
    status = item.get("status")
    _, ids = pages.get(item["url"])
    anchor = item.get("anchor") or ""
    target = ids.get(anchor) if anchor else None
    if status == "anchor_missing" and target is not None:
        failed.append("anchor")
    if status != "ok":
        return failed
    domain, role = item.get("domain"), item.get("role")
    is_dt = target is not None and target.tag == "dt"
    if is_dt and domain != "std" and not (item.get("signature") or "").strip():
        failed.append("signature")
    if any(n in (item.get(f) or "") for f in ("signature", "title") for n in NOISE):
        failed.append("noise")
    doc = " ".join((item.get("doc") or "").split())
    if target is not None and target.tag == "dt":
        bodies = [b for b in member_bodies(target) if b in doc]
        # (text that the container's own prose also has, e.g. numpydoc's attribute table
        # repeating each property's first line, is its own)
        if bodies and any(b not in own_text(target.getnext()) for b in bodies):
            failed.append("member")
        own = target.getnext()
        if not doc and own is not None and own.tag == "dd" and own_text(own):
            failed.append("empty_doc")
    elif domain == "py" and role == "module" and target is not None:
        section = target if target.tag == "section" else target.getparent()
        if section is not None:
            for dt in section.iter("dt"):
                if dt.get("id") and any(b in doc for b in member_bodies(dt)[:1]):
                    failed.append("member")
                    break
    rendered, with_code = markdown_texts(item.get("doc_markdown") or "")
    doc_text = item.get("doc") or ""
    if any(rendered.count(ch) > doc_text.count(ch) for ch in "*`"):
        failed.append("markdown")
    if any(with_code.count(ch) > doc_text.count(ch) for ch in "*`"):
        failed.append("stray")
    if bad_param_name(item):
        failed.append("params")
    return failed


def crawl_site(url: str, redis_url: str, out: Path, log: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
    env["PYTHONPATH"] = str(REPO)
    argv = [sys.executable, "-m", "invcrawl", "crawl", url, "--redis", redis_url,
            "--consumers", "2", "-o", str(out), "--progress", "none"]  # fmt: skip
    with open(log, "a") as err:
        return subprocess.run(argv, stderr=err, stdout=subprocess.DEVNULL, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=100, help="at most this many sites")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--show", type=int, default=3, help="failing items shown per check")
    parser.add_argument("--only", help="comma-separated packages: sweep these sites only")
    parser.add_argument(
        "--generators",
        action="store_true",
        help="sweep only the sites of generators other than Sphinx (pydoctor, mkdocstrings)",
    )
    parser.add_argument(
        "--packages",
        type=Path,
        help="the package list (default: ../shared/corpus/debian-doc-packages.txt beside "
        "the repository)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        help="reuse the outputs of an earlier run (its work directory) instead of crawling "
        "the sites it has",
    )
    args = parser.parse_args(argv)
    if args.packages is not None:
        fleet.PACKAGES.insert(0, args.packages)
    sites = find_sites(args.sites)
    if args.only:
        sites = [site for site in sites if site.package in args.only.split(",")]
    work = args.source or Path(tempfile.mkdtemp(prefix="invcrawl-sweep-"))
    if args.generators:
        sweep_generators(work, args.source is not None, args.show)
        return 0
    rows, totals = [], Counter()
    examples: dict[str, list[str]] = {}
    with RedisServer(work / "redis") as server, serve(DOC) as base:
        for site in sites:
            url = base + str(site.root.relative_to(DOC)) + "/"
            out = work / f"{site.package}.jsonl"
            started = time.monotonic()
            done = args.source is not None and out.exists()
            code = 0 if done else crawl_site(url, server.url, out, work / "crawl.log")
            items = (
                [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
            )
            pages = Pages(url)
            fails: Counter[str] = Counter()
            statuses = Counter(i.get("status") for i in items)
            with_params = sum(1 for i in items if i.get("params"))
            unnamed = sum(
                1 for i in items if any(p.get("name") is None for p in i.get("params") or [])
            )
            if len({i["key"] for i in items}) != site.entries or code not in (0, 3):  # 3: dead
                fails["accounting"] += 1
            for item in items:
                for name in check_item(item, pages):
                    fails[name] += 1
                    if len(examples.setdefault(name, [])) < args.show:
                        examples[name].append(f"{site.package} {item['key']} {item['url']}")
            skipped = statuses["skipped"] + statuses["offsite"]
            ok_share = statuses["ok"] / max(len(items) - skipped, 1)
            row = {
                "site": site.package, "items": len(items), "entries": site.entries,
                "ok": round(ok_share, 4), "seconds": round(time.monotonic() - started, 1),
                "with_params": with_params, "unnamed": unnamed,
                **{c: fails[c] for c in CHECKS},
            }  # fmt: skip
            rows.append(row)
            totals.update(
                {"items": len(items), "ok": statuses["ok"], "nonskipped": len(items) - skipped,
                 "with_params": with_params, "unnamed": unnamed}
            )  # fmt: skip
            totals.update({c: fails[c] for c in CHECKS})
            say(line(row))
    print(f"{'site':<28} {'items':>6} {'ok':>7} " + " ".join(f"{c[:8]:>8}" for c in CHECKS))
    for row in rows:
        print(line(row))
    ok_total = totals["ok"] / max(totals["nonskipped"], 1)
    print(
        f"{'total (' + str(len(rows)) + ' sites)':<28} {totals['items']:>6} {ok_total:>7.2%} "
        + " ".join(f"{totals[c]:>8}" for c in CHECKS)
    )
    for name, keys in examples.items():
        for key in keys:
            print(f"  e.g. {name}: {key}")
    print(targets(rows, totals))
    if args.json:
        args.json.write_text(json.dumps({"sites": rows, "totals": dict(totals)}, indent=2))
    if not args.only:
        sweep_generators(work, args.source is not None, args.show)
    return 0


def sweep_generators(work: Path, reuse: bool, show: int) -> None:
    """Crawl every generator site (each served by its own nginx) and print the issue-35
    targets per site: counts, and the share of their base where the target is a share."""
    say("generator sites: building or finding them...")
    sites = generator_sites()
    print("\nsites of other generators (issue 35 targets; shares of their base):")
    with RedisServer(work / "redis-gen") as server:
        for name, root in sites.items():
            slug = re.sub(r"[^\w.-]+", "-", name).strip("-")
            out = work / f"gen-{slug}.jsonl"
            started = time.monotonic()
            with serve(root) as url:
                code = (
                    0
                    if reuse and out.exists()
                    else crawl_site(url, server.url, out, work / "crawl.log")
                )
            items = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
            entries = len({i["key"] for i in items})
            statuses = Counter(i.get("status") for i in items)
            generators = Counter(i.get("generator") or "-" for i in items)

            def page(url: str, root: Path = root) -> bytes | None:
                path = root / unquote(urlsplit(url).path).lstrip("/")
                if path.is_file():
                    return path.read_bytes()
                gz = path.with_name(path.name + ".gz")
                return gzip.decompress(gz.read_bytes()) if gz.is_file() else None

            seconds = time.monotonic() - started
            print(f"{name}: exit {code}, {len(items)} items {dict(statuses)}, "
                  f"generators {dict(generators)}, {seconds:.0f}s")  # fmt: skip
            if not items:
                continue
            if generators.most_common(1)[0][0] == "mkdocstrings":  # its own checker's reading
                checked = mkcheck.check_items(items, page)
                print("  accounting", abs(entries - len(items)), " ".join(mkcheck.CHECKS))
                print("  " + checked.row())
                for check, keys in checked.examples.items():
                    for key in keys[:show]:
                        print(f"    e.g. {check}: {key}")
                continue
            found, bad = count_targets(items, entries, page)
            c = found.counts
            print("  " + found.line())
            for label, num, base in (
                ("empty signature", c["empty_signature"], c["calls"]),
                ("params differing", c["params"], c["calls"]),
                ("doc begins with its heading", c["heading"], len(items)),
                ("another parent", c["parent"], c["members"]),
                ("page doc lacks its docstring", c["page_doc"], c["pages"]),
            ):
                print(f"  {label}: {num} of {base} ({num / max(base, 1):.2%})")
            for check, keys in bad.items():
                for key in keys[:show]:
                    print(f"    e.g. {check}: {key}")


def targets(rows: list[dict[str, Any]], totals: Counter[str]) -> str:
    """The two targets of issue 28, worst site and all sites."""

    def share(failed: int, of: int) -> float:
        return failed / max(of, 1)

    worst_params = max(rows, key=lambda r: share(r["params"], r["with_params"]), default=None)
    worst_stray = max(rows, key=lambda r: share(r["stray"], r["items"]), default=None)
    out = [
        f"params: {totals['params']} of {totals['with_params']} items with params "
        f"({share(totals['params'], totals['with_params']):.3%}; target <= 0.1% on every site)",
        f"stray:  {totals['stray']} of {totals['items']} items "
        f"({share(totals['stray'], totals['items']):.3%}; target <= 0.05% on every site)",
        f"unnamed C parameters: {totals['unnamed']} items",
    ]
    if worst_params is not None and worst_stray is not None:
        out.append(
            f"worst site: params {worst_params['site']} "
            f"{share(worst_params['params'], worst_params['with_params']):.3%}, "
            f"stray {worst_stray['site']} {share(worst_stray['stray'], worst_stray['items']):.3%}"
        )
    return "\n".join(out)


def line(row: dict[str, Any]) -> str:
    return f"{row['site'][:28]:<28} {row['items']:>6} {row['ok']:>7.2%} " + " ".join(
        f"{row[c]:>8}" for c in CHECKS
    )


if __name__ == "__main__":
    sys.exit(main())
