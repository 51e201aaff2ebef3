"""The fixture sites of every generator but Sphinx, for ``bench/sweep.py --generators``
and the speed bench (``bench/generators.py``): each builder returns ``{name: html
directory}`` of the sites it builds (cached): the pydoctor builds
(``sites/pydoctor_build.py``), the mkdocstrings ones (``sites/mkbuild.py``) and the
pattern sites of both (``sites/patterns_build.py``); another
generator's fixture builds join by adding their builder to :data:`BUILDERS`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def pydoctor_sites() -> dict[str, Path]:
    from sites.pydoctor_build import build_all

    return {f"fixture {sid}": built.html for sid, built in build_all(log=lambda _m: None).items()}


def mkdocstrings_sites() -> dict[str, Path]:
    from sites.mkbuild import build_all

    return {f"fixture {cid}": built.html for cid, built in build_all(log=lambda _m: None).items()}


def pattern_sites() -> dict[str, Path]:
    """Issue 49's pattern sites (``sites/patterns_build.py``): mkdocstrings 0.22 to 1.x and
    pydoctor 21 to 25."""
    from sites.patterns_build import build_all

    return {f"fixture {sid}": html for sid, html in build_all(log=lambda _m: None).items()}


BUILDERS: list[Callable[[], dict[str, Path]]] = [pydoctor_sites, mkdocstrings_sites, pattern_sites]

# Real sites nobody here built, where this machine has them (Debian packages).
PACKAGED: dict[str, Path] = {
    "twisted-doc (pydoctor 22.9.1)": Path("/usr/share/doc/twisted-doc/html/api"),
}


def generator_sites() -> dict[str, Path]:
    """Every generator site at hand: the packaged ones installed here, those named by
    ``INVCRAWL_GENERATOR_SITES`` (``name=directory`` pairs separated by ``;``: a site you
    built, e.g. a library's sdist documented by pydoctor 25), then the fixtures."""
    sites = {name: root for name, root in PACKAGED.items() if (root / "objects.inv").is_file()}
    for pair in filter(None, os.environ.get("INVCRAWL_GENERATOR_SITES", "").split(";")):
        name, _, root = pair.partition("=")
        if (Path(root) / "objects.inv").is_file():
            sites[name] = Path(root)
    for builder in BUILDERS:
        sites.update(builder())
    return sites
