"""Build the pydoctor fixture sites: the ``pdfixture`` package (``tests/sites/pysrc``)
documented by pydoctor at pinned versions, each installed from the package index into a
build venv of its own (``sites.build.ensure_venv``: never invcrawl's runtime deps), cached
like the Sphinx combos (``<cache>/<id>/html``, a stamp of the sources and the pins).

    python tests/sites/pydoctor_build.py            # both, cached
    python tests/sites/pydoctor_build.py pydoctor-22 --force

``build_package`` documents any package directory the same way (``bench/sweep.py`` uses it
for a real library's sdist).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script: make tests/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sites.build import (
    BuildError,
    Combo,
    _clean_env,
    _default_log,
    _run,
    _tail,
    cache_root,
    ensure_venv,
    holding_cache_lock,
    source_hash,
)

HERE = Path(__file__).resolve().parent
PYSRC = HERE / "pysrc"
PACKAGE = "pdfixture"
BUILD_FORMAT = "1"


@dataclass(frozen=True)
class PydoctorSite:
    """One pinned pydoctor release; ``decorator_deprecations``: whether it renders the
    ``twisted.python.deprecate.deprecated`` decorator as a deprecation note (its deprecate
    extension; 22.5 does not)."""

    id: str
    version: str
    decorator_deprecations: bool
    note: str = ""

    @property
    def combo(self) -> Combo:
        return Combo(self.id, "", "", (f"pydoctor=={self.version}",), self.note)


SITES: tuple[PydoctorSite, ...] = (
    PydoctorSite("pydoctor-25", "25.10.1", True, "rst-sig-param spans, <main>, decorators"),
    PydoctorSite("pydoctor-22", "22.5.1", False, "signature as text, div#main, one fieldTable"),
)
SITES_BY_ID = {s.id: s for s in SITES}


@dataclass
class BuiltPydoctor:
    site: PydoctorSite
    root: Path
    cached: bool

    @property
    def html(self) -> Path:
        return self.root / "html"

    @property
    def inventory(self) -> Path:
        return self.html / "objects.inv"


@holding_cache_lock
def build_package(
    python: Path, package: Path, out: Path, project: str, timeout: float = 1800
) -> None:
    """Document ``package`` (a directory) with the pydoctor of ``python`` into ``out``."""
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    proc = _run(
        [
            str(python),
            "-m",
            "pydoctor",
            "--html-output",
            str(tmp),
            "--project-name",
            project,
            "-q",
            str(package),
        ],
        _clean_env(python.parent.parent),
        timeout,
    )
    (out.parent / "build.log").write_text(proc.stdout + proc.stderr)
    # pydoctor exits 2 on docstring warnings; the site is built all the same.
    if not (tmp / "objects.inv").is_file():
        raise BuildError(
            f"pydoctor failed on {package} (exit {proc.returncode}):\n"
            f"{_tail(proc.stderr + proc.stdout)}"
        )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def _stamp(site: PydoctorSite) -> str:
    text = "\n".join([BUILD_FORMAT, source_hash(PYSRC), site.combo.spec()])
    return hashlib.sha256(text.encode()).hexdigest()


@holding_cache_lock
def build_site(
    site: PydoctorSite, *, force: bool = False, log: Callable[[str], None] = _default_log
) -> BuiltPydoctor:
    root = cache_root() / site.id
    stamp = root / "stamp.json"
    wanted = _stamp(site)
    if (
        not force
        and (root / "html" / "objects.inv").is_file()
        and stamp.is_file()
        and json.loads(stamp.read_text()).get("hash") == wanted
    ):
        return BuiltPydoctor(site, root, cached=True)
    start = time.monotonic()
    python = ensure_venv(site.combo, log)
    log(f"{site.id}: pydoctor {site.version}")
    build_package(python, PYSRC / PACKAGE, root / "html", PACKAGE)
    stamp.write_text(json.dumps({"hash": wanted, "pydoctor": site.version}))
    log(f"{site.id}: built in {time.monotonic() - start:.1f}s")
    return BuiltPydoctor(site, root, cached=False)


@holding_cache_lock
def build_all(
    ids: Sequence[str] | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _default_log,
) -> dict[str, BuiltPydoctor]:
    unknown = [i for i in ids or () if i not in SITES_BY_ID]
    if unknown:
        raise BuildError(f"unknown site(s) {', '.join(unknown)}; known: {', '.join(SITES_BY_ID)}")
    chosen = [SITES_BY_ID[i] for i in ids] if ids else list(SITES)
    return {s.id: build_site(s, force=force, log=log) for s in chosen}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sites", nargs="*", help="site ids (default: all)")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    args = parser.parse_args(argv)
    try:
        built = build_all(args.sites, force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for b in built.values():
        print(f"  {b.site.id:12} {'cached' if b.cached else 'built':6} {b.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
