"""Build the mkdocstrings fixture site (tests/sites/mkdocs_src) with a matrix of MkDocs,
mkdocstrings and theme versions, the way ``build.py`` builds the Sphinx one.

Each set of packages gets its own virtualenv under ``<cache>/<env>/venv`` (never the
project's venv: mkdocs and mkdocstrings are no dependency of invcrawl) with pinned packages
from PyPI; combos sharing a package set share the venv. The HTML of a combo goes to
``<cache>/<combo>/html``; a build is skipped when its stamp records the same hash of
(sources + combo spec + BUILD_FORMAT). ``mkdocs.yml`` is written per combo (JSON, which
YAML reads) from the combo's theme and handler options.

Importable (``build_all``, ``MK_COMBOS``) and runnable::

    python tests/sites/mkbuild.py --list
    python tests/sites/mkbuild.py                 # every combo
    python tests/sites/mkbuild.py mk1-material --force
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make tests/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sites.build import (
    BuildError,
    _clean_env,
    _default_log,
    _run,
    _tail,
    cache_root,
    holding_cache_lock,
    raise_collected,
    source_hash,
    venv_with,
)

HERE = Path(__file__).resolve().parent
SRC = HERE / "mkdocs_src"
BUILD_FORMAT = "1"

# The current generation: mkdocstrings 1.x, its Python handler 2.x (griffe 1.x/2.x).
_CURRENT = (
    "mkdocs==1.6.1",
    "mkdocstrings==1.0.8",
    "mkdocstrings-python==2.0.11",
)
_MATERIAL = ("mkdocs-material==9.6.23",)
# Debian bookworm's mkdocstrings 0.20 with the legacy handler (pytkdocs): the templates of
# the 0.1x era (the heading's <code> holds the signature).
_LEGACY = (
    "mkdocs==1.4.2",
    "mkdocstrings==0.20.0",
    "mkdocstrings-python-legacy==0.2.3",
    "pytkdocs==0.16.1",
    "mkdocs-autorefs==0.4.1",
    "pymdown-extensions==9.9.2",
    "jinja2==3.1.2",
    "markdown==3.3.7",
)


@dataclass(frozen=True)
class MkCombo:
    """One build: a package set (its venv), a theme and the Python handler's options."""

    id: str
    packages: tuple[str, ...]
    theme: str
    options: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def env(self) -> str:
        """The venv's name: one per package set."""
        digest = hashlib.sha256("\n".join(sorted(self.packages)).encode()).hexdigest()
        return f"mkenv-{digest[:10]}"

    @property
    def legacy(self) -> bool:
        return any(p.startswith("mkdocstrings-python-legacy") for p in self.packages)

    def spec(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "packages": list(self.packages),
                "theme": self.theme,
                "options": self.options,
            },
            sort_keys=True,
        )

    def config(self, docs_dir: Path, site_dir: Path) -> dict[str, Any]:
        theme: dict[str, Any] = {"name": self.theme}
        if self.theme == "material":
            theme["features"] = ["navigation.sections"]
        options = {"show_source": False, "heading_level": 2, **self.options}
        if not self.legacy:
            options.setdefault("docstring_style", "google")
        return {
            "site_name": "mkfixture",
            "site_url": "https://fixture.invcrawl.test/",
            "docs_dir": str(docs_dir),
            "site_dir": str(site_dir),
            "theme": theme,
            "markdown_extensions": ["admonition", "pymdownx.details", "pymdownx.superfences"]
            if not self.legacy
            else ["admonition"],
            "plugins": [
                "search",
                {
                    "mkdocstrings": {
                        "default_handler": "python",
                        "handlers": {
                            "python": {
                                ("paths" if not self.legacy else "setup_commands"): (
                                    [str(SRC)]
                                    if not self.legacy
                                    else [f"import sys; sys.path.insert(0, {str(SRC)!r})"]
                                ),
                                ("options" if not self.legacy else "rendering"): options,
                            }
                        },
                    }
                },
            ],
            "nav": [
                {"Home": "index.md"},
                {"Guide": "guide.md"},
                {"Package": "api/package.md"},
                {"Core API": "api/core.md"},
                {"Numpy styles": "api/styles.md"},
            ],
        }


_LABELS = {"show_labels": True, "show_symbol_type_heading": True, "show_symbol_type_toc": True}
MK_COMBOS: tuple[MkCombo, ...] = (
    MkCombo(
        "mk1-material",
        (*_CURRENT, *_MATERIAL),
        "material",
        {**_LABELS, "show_signature_annotations": True, "separate_signature": False},
        "signature in the heading, section tables",
    ),
    MkCombo(
        "mk1-material-sep",
        (*_CURRENT, *_MATERIAL),
        "material",
        {
            **_LABELS,
            "separate_signature": True,
            "show_signature_annotations": True,
            "signature_crossrefs": True,
            "docstring_section_style": "list",
            "merge_init_into_class": True,
        },
        "separate signature with cross-references, section lists",
    ),
    MkCombo(
        "mk1-mkdocs",
        _CURRENT,
        "mkdocs",
        {"separate_signature": True, "docstring_section_style": "spacy"},
        "mkdocs theme, spacy sections, no annotations in signatures",
    ),
    MkCombo(
        "mk1-rtd",
        _CURRENT,
        "readthedocs",
        {"show_signature_annotations": True, "show_root_heading": True, "show_source": True},
        "readthedocs theme, the module's heading shown, the source code shown",
    ),
    MkCombo(
        "mk020-legacy",
        _LEGACY,
        "mkdocs",
        {},
        "mkdocstrings 0.20 + mkdocstrings-python-legacy 0.2.3 (Debian bookworm)",
    ),
)
MK_COMBOS_BY_ID = {c.id: c for c in MK_COMBOS}


@dataclass
class BuiltMkSite:
    combo: MkCombo
    root: Path
    cached: bool
    seconds: float = 0.0

    @property
    def html(self) -> Path:
        return self.root / "html"

    @property
    def inventory(self) -> Path:
        return self.html / "objects.inv"


def combo_hash(combo: MkCombo, src_hash: str) -> str:
    text = "\n".join([BUILD_FORMAT, src_hash, combo.spec()])
    return hashlib.sha256(text.encode()).hexdigest()


def is_fresh(combo: MkCombo, src_hash: str) -> bool:
    return stamp_matches(cache_root() / combo.id, combo_hash(combo, src_hash))


def stamp_matches(root: Path, wanted: str) -> bool:
    """Whether the build under ``root`` has its inventory and a stamp of hash ``wanted``."""
    stamp = root / "stamp.json"
    if not (root / "html" / "objects.inv").is_file() or not stamp.is_file():
        return False
    try:
        return bool(json.loads(stamp.read_text())["hash"] == wanted)
    except (ValueError, KeyError):
        return False


def mkdocs_build(
    site_id: str,
    python: Path,
    root: Path,
    config_for: Callable[[Path], dict[str, Any]],
    *,
    env: dict[str, str],
    timeout: float,
) -> Path:
    """``mkdocs build`` of the ``mkdocs.yml`` that ``config_for(site_dir)`` gives, into
    ``root/html`` (built beside it, moved in once it holds an inventory); its log in
    ``root/build.log``."""
    out, tmp = root / "html", root / "html.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    config = root / "mkdocs.yml"
    config.write_text(json.dumps(config_for(tmp), indent=1))
    proc = _run([str(python), "-m", "mkdocs", "build", "-q", "-f", str(config)], env, timeout)
    (root / "build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not (tmp / "objects.inv").is_file():
        raise BuildError(
            f"{site_id}: mkdocs build failed (exit {proc.returncode}), "
            f"log in {root / 'build.log'}:\n{_tail(proc.stderr + proc.stdout)}"
        )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def ensure_env(combo: MkCombo, log: Callable[[str], None] = _default_log) -> Path:
    """Create (or reuse) the venv of the combo's package set; return its python."""
    return venv_with(combo.env, combo.packages, log)


@holding_cache_lock
def build_combo(
    combo: MkCombo,
    *,
    force: bool = False,
    src_hash: str | None = None,
    log: Callable[[str], None] = _default_log,
) -> BuiltMkSite:
    root = cache_root() / combo.id
    src_hash = src_hash or source_hash(SRC)
    if not force and is_fresh(combo, src_hash):
        log(f"{combo.id}: up to date (cached)")
        return BuiltMkSite(combo, root, cached=True)
    start = time.monotonic()
    python = ensure_env(combo, log)
    env = _clean_env(python.parent.parent)
    env["PYTHONPATH"] = str(SRC)  # the legacy handler imports the package
    log(f"{combo.id}: mkdocs build ({combo.theme})")
    mkdocs_build(
        combo.id, python, root, lambda out: combo.config(SRC / "docs", out), env=env, timeout=600
    )
    (root / "stamp.json").write_text(
        json.dumps({"hash": combo_hash(combo, src_hash), "combo": json.loads(combo.spec())})
    )
    seconds = time.monotonic() - start
    log(f"{combo.id}: built in {seconds:.1f}s")
    return BuiltMkSite(combo, root, cached=False, seconds=seconds)


def select(ids: Iterable[str] | None = None) -> list[MkCombo]:
    ids = list(ids or [])
    unknown = [i for i in ids if i not in MK_COMBOS_BY_ID]
    if unknown:
        known = ", ".join(MK_COMBOS_BY_ID)
        raise BuildError(f"unknown combo(s) {', '.join(unknown)}; known: {known}")
    return [MK_COMBOS_BY_ID[i] for i in ids] if ids else list(MK_COMBOS)


@holding_cache_lock
def build_all(
    ids: Iterable[str] | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _default_log,
) -> dict[str, BuiltMkSite]:
    """Build the selected combos one after the other (combos share venvs). Raises
    BuildError (PipUnreachable when the index is unreachable) after trying every combo."""
    src_hash = source_hash(SRC)
    results: dict[str, BuiltMkSite] = {}
    errors: list[BuildError] = []
    for combo in select(ids):
        try:
            results[combo.id] = build_combo(combo, force=force, src_hash=src_hash, log=log)
        except BuildError as exc:
            errors.append(exc)
        except subprocess.TimeoutExpired as exc:
            errors.append(BuildError(f"{combo.id}: timed out: {exc.cmd}"))
    raise_collected(errors)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("combos", nargs="*", help="combo ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list combos and cache state")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    args = parser.parse_args(argv)
    try:
        combos = select(args.combos)
        if args.list:
            src_hash = source_hash(SRC)
            for c in combos:
                state = "cached" if is_fresh(c, src_hash) else "stale"
                print(f"{c.id:18} {c.theme:12} {state:6}  {' '.join(c.packages)}")
            return 0
        sites = build_all(args.combos, force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for s in sites.values():
        print(f"  {s.combo.id:18} {s.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
