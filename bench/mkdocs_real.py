"""Real MkDocs + mkdocstrings sites nobody here built: each project's own docs sources (the
``mkdocs.yml`` and ``docs/`` its sdist on PyPI carries), built offline with its own
configuration, served over loopback, crawled by ``invcrawl crawl``, and every item checked
against its page by ``tests/support/mkcheck.py`` (the issue-35 checks).

Offline means: only the plugins ``search``, ``autorefs`` and ``mkdocstrings`` are kept
(the others fetch, generate or decorate: gen-files, git dates, redirects, minify...), the
handler's inventories of other sites (``import``/``inventories``) are dropped, and so are
Markdown extensions and griffe extensions the build venv cannot import. The build venv is
the fixture site's current one (``tests/sites/mkbuild.py``: mkdocs 1.6.1, mkdocstrings
1.0.8, mkdocstrings-python 2.0.11, mkdocs-material 9.6.23)::

    pip download --no-deps --no-binary :all: copier==9.19.1 griffe==1.5.5 -d /tmp/sdists
    python -m bench.mkdocs_real /tmp/sdists/*.tar.gz
    python -m bench.mkdocs_real /usr/share/doc/mkdocs/html   # a site built already

Prints, per site, the items, the items per status, and each check as failing/checked.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.localredis.server import RedisServer

try:  # the tests' fixture sites and support (tests/sites/, tests/support/): tests/ on the path
    from sites.mkbuild import MK_COMBOS, ensure_env

    from support.cli import invcrawl
    from support.httpserver import serve
    from support.mkcheck import CHECKS, check_items
except ModuleNotFoundError as exc:
    raise SystemExit(f"{exc}: run it as PYTHONPATH=tests python -m {__spec__.name}") from exc

REPO = Path(__file__).resolve().parents[1]

# Run by the build venv's python: the project's mkdocs.yml, its custom tags kept as they are
# (!ENV, !relative, !!python/name...), reduced to what builds offline.
SANITISE = r"""
import importlib, sys, yaml

class Tagged:
    def __init__(self, tag, node):
        self.tag, self.node = tag, node

def construct(loader, suffix, node):
    return Tagged(node.tag, node)

for prefix in ("!", "tag:yaml.org,2002:python/"):
    yaml.add_multi_constructor(prefix, construct, Loader=yaml.SafeLoader)

def represent(dumper, data):
    return data.node

yaml.add_representer(Tagged, represent, Dumper=yaml.SafeDumper)
KEEP = {"search", "autorefs", "mkdocstrings"}

def importable(name):
    try:
        importlib.import_module(name.replace("-", "_"))
        return True
    except Exception:
        return False

source, target = sys.argv[1], sys.argv[2]
config = yaml.load(open(source), Loader=yaml.SafeLoader)
plugins = []
for plugin in config.get("plugins") or []:
    name = plugin if isinstance(plugin, str) else next(iter(plugin))
    if name not in KEEP:
        continue
    if name == "mkdocstrings" and not isinstance(plugin, str):
        options = plugin[name] or {}
        options.pop("enabled", None)
        for handler in (options.get("handlers") or {}).values():
            handler.pop("import", None)
            handler.pop("inventories", None)
            handler.get("options", {}).pop("extensions", None)
    plugins.append(plugin)
config["plugins"] = plugins
kept = []
for ext in config.get("markdown_extensions") or []:
    name = ext if isinstance(ext, str) else next(iter(ext))
    if importable(name) or importable("markdown.extensions." + name):
        kept.append(ext)
config["markdown_extensions"] = kept
config.pop("hooks", None)
config.pop("INHERIT", None)
config["strict"] = False
yaml.dump(config, open(target, "w"), Dumper=yaml.SafeDumper, allow_unicode=True)
"""


def unpack(path: Path, into: Path) -> Path:
    if path.is_dir():
        return path
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    project = next(p for p in into.iterdir() if p.is_dir() and path.name.startswith(p.name))
    for link in project.rglob("*"):
        if link.is_symlink() and not link.exists():
            link.unlink()  # an sdist may leave out what a symlink points at (griffe's logo)
    return project


def build(project: Path, python: Path, work: Path) -> Path:
    config = project / "mkdocs.invcrawl.yml"
    script = work / "sanitise.py"
    script.write_text(SANITISE)
    subprocess.run([str(python), str(script), str(project / "mkdocs.yml"), str(config)],
                   check=True, cwd=project)  # fmt: skip
    site = work / f"{project.name}-site"
    proc = subprocess.run(
        [str(python), "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)],
        cwd=project, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if proc.returncode != 0 or not (site / "objects.inv").is_file():
        raise SystemExit(f"{project.name}: mkdocs build failed:\n{proc.stderr[-3000:]}")
    return site


def crawl(name: str, site: Path, work: Path) -> str:
    out = work / f"{name}.jsonl"
    with RedisServer(work / f"redis-{name}") as server, serve(site) as http:
        result = invcrawl("crawl", http.url, "--redis", server.url, "--crawl-id", name,
                          "--consumers", "2", "-o", str(out), "--progress", "lines", cwd=work)  # fmt: skip
        if result.code != 0:
            raise SystemExit(f"{name}: crawl failed: {result.stderr[-2000:]}")
        base = http.url
    items = [json.loads(line) for line in out.read_text().splitlines() if line]
    plan = plan_crawl(parse_inventory((site / "objects.inv").read_bytes()), base + "objects.inv")
    keys = [i["key"] for i in items]
    accounting = "exact" if len(keys) == len(set(keys)) == plan.entries else "WRONG"

    def body(url: str) -> bytes | None:
        rel = url.removeprefix(base)
        path = site / rel
        path = path / "index.html" if rel.endswith("/") or path.is_dir() else path
        return path.read_bytes() if path.is_file() else None

    result_ = check_items(items, body)
    statuses = Counter(i["status"] for i in items)
    generators = Counter(i["generator"] for i in items)
    cells = " ".join(f"{result_.fails[c]}/{result_.counted[c]:<5}" for c in CHECKS)
    line = (
        f"{name:22} {len(items):6d} {accounting:9} {dict(statuses)} {dict(generators)}\n"
        f"{'':22} {' '.join(f'{c:>10}' for c in CHECKS)}\n{'':22} {cells}"
    )
    for check, examples in result_.examples.items():
        for example in examples[:3]:
            line += f"\n    {check}: {example[:200]}"
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path, help="sdists (.tar.gz) or unpacked dirs")
    parser.add_argument(
        "--keep", type=Path, help="build and crawl here, kept (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    python = ensure_env(MK_COMBOS[0])
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for source in args.sources:
            if (source / "objects.inv").is_file():  # a site built already (Debian's mkdocs docs)
                print(crawl(source.resolve().parent.name, source.resolve(), work), flush=True)
                continue
            project = unpack(source.resolve(), work)
            site = build(project, python, work)
            print(crawl(project.name, site, work), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
