"""Build the Sphinx pattern fixture (tests/sites/sphinx_patterns_src): the markup of issue
49, items 8 and 9, written by Sphinx itself from sources written here: object descriptions
whose content follows them unindented (Django's reference pages: an empty ``dd``, the prose
as siblings), sphinx-paramlinks' per-parameter permalinks (SQLAlchemy), CPython's C API
annotations (a cut-down copy of its ``c_annotations`` extension in ``_ext/``), numbered
sections and a module whose first block is a version note (CPython's ``argparse``).

Built by the Sphinx of Debian bookworm's documentation packages (5.3, which built the
Django 3.2 and SQLAlchemy 1.4 docs under /usr/share/doc) and by a current one (8.2), each in
a venv of its own under the fixture cache (``sites/build.venv_with``), cached by the hash of
the sources::

    python tests/sites/sphinx_patterns.py            # both, cached
    python tests/sites/sphinx_patterns.py --force
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

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

SRC = Path(__file__).resolve().parent / "sphinx_patterns_src"
BUILD_FORMAT = "1"


@dataclass(frozen=True)
class PatternSite:
    id: str
    packages: tuple[str, ...]

    def stamp(self) -> str:
        spec = {"packages": list(self.packages), "src": source_hash(SRC), "f": BUILD_FORMAT}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


SITES = (
    PatternSite(
        "sphpat-5",
        ("sphinx==5.3.0", "docutils==0.19", "alabaster==0.7.13", "sphinx-paramlinks==0.6.0"),
    ),
    PatternSite("sphpat-8", ("sphinx==8.2.3", "alabaster==1.0.0", "sphinx-paramlinks==0.6.0")),
)


@holding_cache_lock
def build_site(
    site: PatternSite, *, force: bool = False, log: Callable[[str], None] = _default_log
) -> Path:
    """The site's HTML directory, built unless the cached build has the same stamp."""
    root = cache_root() / site.id
    html, stamp = root / "html", root / "stamp.txt"
    if not force and stamp.is_file() and stamp.read_text() == site.stamp():
        return html
    python = venv_with(f"{site.id}-env", site.packages, log)
    tmp, doctrees = root / "html.tmp", root / "doctrees"
    for path in (tmp, doctrees):
        shutil.rmtree(path, ignore_errors=True)
    log(f"{site.id}: sphinx-build")
    args = [str(python), "-m", "sphinx", "-b", "html", "-q", "-E", "-d", str(doctrees)]
    proc = _run([*args, str(SRC), str(tmp)], _clean_env(python.parent.parent), 600)
    root.mkdir(parents=True, exist_ok=True)
    (root / "build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not (tmp / "objects.inv").is_file():
        raise BuildError(f"{site.id}: sphinx-build failed:\n{_tail(proc.stderr + proc.stdout)}")
    shutil.rmtree(html, ignore_errors=True)
    tmp.rename(html)
    shutil.rmtree(doctrees, ignore_errors=True)
    stamp.write_text(site.stamp())
    return html


def build_all(*, force: bool = False, log: Callable[[str], None] = _default_log) -> dict[str, Path]:
    built: dict[str, Path] = {}
    errors: list[BuildError] = []
    for site in SITES:
        try:
            built[site.id] = build_site(site, force=force, log=log)
        except BuildError as exc:
            errors.append(exc)
    raise_collected(errors)
    return built


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    for sid, html in build_all(force=args.force).items():
        print(sid, html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
