"""Build the pattern fixture sites (tests/sites/patterns_src): each markup pattern of
issue 49 written by the generator version that writes it.

``mkpat`` (Google style: re-exports, a subclass inheriting its base's methods, documented
names the signature lacks, prose naming ``True``/``False``, consecutive reST version
directives) documented by MkDocs + mkdocstrings at the versions of :data:`PAT_COMBOS`;
``pdpat`` (epytext: class docstrings documenting the constructor, linked annotation types,
documented names no signature has, overloads) documented by every pydoctor release of
:data:`PD_SITES`. Venvs and the cache as in ``mkbuild.py`` (one venv per package set under
the cache root, never the project's venv); ``patterns_oracle.py`` holds the ground truth,
written from the sources.

    python tests/sites/patterns_build.py --list
    python tests/sites/patterns_build.py                 # every site, cached
    python tests/sites/patterns_build.py pat022-list --force
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make tests/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sites.build import (
    BuildError,
    _clean_env,
    _default_log,
    cache_root,
    holding_cache_lock,
    raise_collected,
    source_hash,
    venv_with,
)
from sites.mkbuild import _CURRENT, _MATERIAL, mkdocs_build, stamp_matches
from sites.pydoctor_build import build_package

HERE = Path(__file__).resolve().parent
SRC = HERE / "patterns_src"
BUILD_FORMAT = "1"

# mkdocstrings 0.22 with mkdocstrings-python 1.1 (mid 2023): "<p>Parameters:</p>" and
# li.field-body list items; a separate signature in a plain pre.highlight.
_MK022 = (
    "mkdocs==1.5.3",
    "mkdocstrings==0.22.0",
    "mkdocstrings-python==1.1.2",
    "griffe==0.32.3",
    "mkdocs-autorefs==0.4.1",
    "markdown==3.4.4",
    "pymdown-extensions==10.1",
    "jinja2==3.1.2",
)
# mkdocstrings-python 1.8 (early 2024): the spacy layout's "<th><b>PARAMETER</b>" without
# the classes later versions add; inherited members listed at their base's anchor.
_MK18 = (
    "mkdocs==1.5.3",
    "mkdocstrings==0.24.0",
    "mkdocstrings-python==1.8.0",
    "griffe==0.38.1",
    "mkdocs-autorefs==0.5.0",
    "markdown==3.5.2",
    "pymdown-extensions==10.7",
)
# mkdocstrings 0.26 with mkdocstrings-python 1.12 (late 2024).
_MK026 = (
    "mkdocs==1.6.1",
    "mkdocstrings==0.26.1",
    "mkdocstrings-python==1.12.2",
    "griffe==1.4.1",
    "mkdocs-autorefs==1.2.0",
    "markdown==3.7",
    "pymdown-extensions==10.11.2",
)


@dataclass(frozen=True)
class PatCombo:
    id: str
    packages: tuple[str, ...]
    theme: str
    options: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    handler: str = "python"  # mkdocstrings' handler: python, matlab

    @property
    def env(self) -> str:
        """The venv's name: one per package set (shared with ``mkbuild``'s combos)."""
        digest = hashlib.sha256("\n".join(sorted(self.packages)).encode()).hexdigest()
        return f"mkenv-{digest[:10]}"

    def spec(self) -> str:
        return json.dumps(
            {"id": self.id, "packages": list(self.packages), "theme": self.theme,
             "options": self.options, "handler": self.handler},
            sort_keys=True,
        )  # fmt: skip

    def config(self, site_dir: Path) -> dict[str, Any]:
        if self.handler != "python":  # its sources and pages apart: src/<handler>, docs-<handler>
            handler = {"paths": [str(SRC / self.handler)], "options": self.options}
            return {
                "site_name": f"{self.handler} fixture",
                "site_url": "https://fixture.invcrawl.test/",
                "docs_dir": str(SRC / f"docs-{self.handler}"),
                "site_dir": str(site_dir),
                "theme": {"name": self.theme},
                "plugins": [
                    "search",
                    {
                        "mkdocstrings": {
                            "default_handler": self.handler,
                            "handlers": {self.handler: handler},
                        }
                    },
                ],
            }
        options = {
            "show_source": False,
            "heading_level": 2,
            "docstring_style": "google",
            "show_signature_annotations": True,
            **self.options,
        }
        handler = {"paths": [str(SRC)], "options": options}
        return {
            "site_name": "mkpat",
            "site_url": "https://fixture.invcrawl.test/",
            "docs_dir": str(SRC / "docs"),
            "site_dir": str(site_dir),
            "theme": {"name": self.theme},
            "markdown_extensions": ["admonition", "pymdownx.details", "pymdownx.superfences"],
            "plugins": [
                "search",
                {"mkdocstrings": {"default_handler": "python", "handlers": {"python": handler}}},
            ],
            "nav": [{"Home": "index.md"}, {"Package": "package.md"}, {"Shapes": "shapes.md"}],
        }


PAT_COMBOS: tuple[PatCombo, ...] = (
    PatCombo("pat022-list", _MK022, "mkdocs", {"docstring_section_style": "list"},
             "0.22/python 1.1 list layout: <p>Parameters:</p>, li.field-body"),
    PatCombo("pat022-sep", _MK022, "readthedocs", {"separate_signature": True},
             "0.22/python 1.1 separate signature in a plain pre.highlight"),
    PatCombo("pat18-spacy", _MK18, "mkdocs", {"docstring_section_style": "spacy"},
             "python 1.8 spacy layout (<th><b>PARAMETER</b>), inherited members at the base"),
    PatCombo("pat026", _MK026, "readthedocs", {},
             "0.26/python 1.12, inherited members at the base's anchor"),
    PatCombo("pat1-cat", (*_CURRENT, *_MATERIAL), "material",
             {"group_by_category": True, "show_category_heading": True},
             "1.x tables (column headings) and category headings"),
    # mkdocstrings' other handlers: of those on the package index, MATLAB's is the one that
    # writes objects.inv (shell, C and TypeScript set enable_inventory False) and builds
    # offline (TypeScript needs TypeDoc from npm)
    PatCombo("mat-rtd", ("mkdocs==1.6.1", "mkdocstrings==1.0.8", "mkdocstrings-matlab==2.1.3"),
             "readthedocs", {}, "mkdocstrings-matlab: Input/Output arguments sections",
             handler="matlab"),
)  # fmt: skip


@dataclass(frozen=True)
class PdSite:
    id: str
    version: str

    @property
    def env(self) -> str:
        return f"pdpat-env-{self.version}"


PD_SITES: tuple[PdSite, ...] = tuple(
    PdSite(f"pdpat-{v.split('.')[0]}", v) for v in ("21.12.1", "22.5.1", "23.9.1", "24.11.2",
                                                    "25.10.1")
)  # fmt: skip
ALL_IDS = tuple(c.id for c in PAT_COMBOS) + tuple(s.id for s in PD_SITES)


def _hash(spec: str, src: Path) -> str:
    text = "\n".join([BUILD_FORMAT, source_hash(src), spec])
    return hashlib.sha256(text.encode()).hexdigest()


def _build_mk(combo: PatCombo, force: bool, log: Callable[[str], None]) -> Path:
    root = cache_root() / combo.id
    wanted = _hash(combo.spec(), SRC)
    if not force and stamp_matches(root, wanted):
        return root / "html"
    python = venv_with(combo.env, combo.packages, log)
    log(f"{combo.id}: mkdocs build ({combo.theme})")
    env = _clean_env(python.parent.parent)
    out = mkdocs_build(combo.id, python, root, combo.config, env=env, timeout=900)
    (root / "stamp.json").write_text(json.dumps({"hash": wanted}))
    return out


def _build_pd(site: PdSite, force: bool, log: Callable[[str], None]) -> Path:
    root = cache_root() / site.id
    wanted = _hash(json.dumps({"id": site.id, "pydoctor": site.version}), SRC / "pdpat")
    if not force and stamp_matches(root, wanted):
        return root / "html"
    python = venv_with(site.env, (f"pydoctor=={site.version}",), log)
    root.mkdir(parents=True, exist_ok=True)
    log(f"{site.id}: pydoctor {site.version}")
    build_package(python, SRC / "pdpat", root / "html", "pdpat")
    (root / "stamp.json").write_text(json.dumps({"hash": wanted}))
    return root / "html"


@holding_cache_lock
def build_all(
    ids: Sequence[str] | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _default_log,
) -> dict[str, Path]:
    """{site id: html directory} of the selected sites (all by default), built or cached.
    Raises BuildError (PipUnreachable when the index is unreachable) after trying each."""
    unknown = [i for i in ids or () if i not in ALL_IDS]
    if unknown:
        raise BuildError(f"unknown site(s) {', '.join(unknown)}; known: {', '.join(ALL_IDS)}")
    chosen = set(ids or ALL_IDS)
    out: dict[str, Path] = {}
    errors: list[BuildError] = []
    for combo in PAT_COMBOS:
        if combo.id in chosen:
            try:
                out[combo.id] = _build_mk(combo, force, log)
            except BuildError as exc:
                errors.append(exc)
    for site in PD_SITES:
        if site.id in chosen:
            try:
                out[site.id] = _build_pd(site, force, log)
            except BuildError as exc:
                errors.append(exc)
    raise_collected(errors)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("sites", nargs="*", help="site ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list the sites")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    args = parser.parse_args(argv)
    if args.list:
        for c in PAT_COMBOS:
            print(f"{c.id:14} {c.theme:12} {' '.join(c.packages[:3])}  ({c.note})")
        for s in PD_SITES:
            print(f"{s.id:14} {'pydoctor':12} pydoctor=={s.version}")
        return 0
    try:
        built = build_all(args.sites, force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for sid, html in built.items():
        print(f"  {sid:14} {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
