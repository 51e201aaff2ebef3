"""The pattern fixture sites of issue 49 (``sites/patterns_build.py``), built once per
session, and every entry of one read by the extractor straight from the built pages."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from sites.build import BuildError, PipUnreachable

from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.common.tasks import TaskEntry

BASE = "https://fixture.invcrawl.test/"


@cache
def _patterns() -> dict[str, Path] | BuildError:
    from sites.patterns_build import build_all

    try:
        return build_all(log=lambda msg: print(f"[patterns] {msg}", file=sys.__stderr__))
    except BuildError as exc:
        return exc


def pattern_site(site_id: str) -> Path:
    """The html directory of a pattern site (skipped without a package index)."""
    result = _patterns()
    if isinstance(result, PipUnreachable):
        pytest.skip(f"pattern sites cannot be built: {str(result).splitlines()[0]}")
    if isinstance(result, BuildError):
        pytest.fail(f"pattern sites failed to build:\n{result}", pytrace=False)
    return result[site_id]


def _page_file(html: Path, url: str) -> Path:
    rel = url.removeprefix(BASE)
    path = html / rel
    return path / "index.html" if rel.endswith("/") or path.is_dir() else path


def pattern_items(html: Path) -> list[tuple[TaskEntry, dict[str, Any]]]:
    """(inventory entry, extracted content) of every entry of a built site."""
    plan = plan_crawl(parse_inventory((html / "objects.inv").read_bytes()), BASE + "objects.inv")
    out: list[tuple[TaskEntry, dict[str, Any]]] = []
    for page in plan.pages:
        body = _page_file(html, page.page_url).read_bytes()
        out.extend(zip(page.targets, extract_page(body, page.page_url, page.targets), strict=True))
    return out
