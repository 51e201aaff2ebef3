"""Extraction on a theme nobody here has seen: a hand-made Sphinx theme with none of the
landmarks the extractor knows (no role="main", itemprop="articleBody", <main>, <article>
or div.body: its own layout.html, with only the basic theme's page templates below it),
whose page header holds the site name in an <h1> before the content. The
site is built here with Sphinx (autodoc + viewcode, so [source] links exist) from
sources written here, and every page is extracted as a consumer would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

LAYOUT = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{ title|striptags|e }}</title></head>
<body>
<div class="top"><h1><a href="{{ pathto(root_doc) }}">{{ project }} Docs</a></h1>
<p class="tagline">Everything about {{ project }}</p></div>
<div class="menu">{{ toctree() }}</div>
<div class="page">{% block body %}{% endblock %}</div>
<div class="bottom"><p>Made by hand. <a href="#">Top</a></p></div>
</body></html>
"""

MODULE = '''
"""Shapes and their areas.

This module draws nothing.
"""


class Shape:
    """A closed figure in the plane.

    .. versionadded:: 1.2
    """

    def area(self, scale: float = 1.0) -> float:
        """Surface of the shape, times *scale*.

        :param scale: a factor
        :returns: the scaled area
        """
        return 0.0 * scale

    def perimeter(self) -> float:
        """Length of the border."""
        return 0.0


def largest(shapes: list, limit: int = 3) -> list:
    """The *limit* largest shapes.

    .. versionchanged:: 2.0
       *limit* defaults to 3.
    """
    return shapes[:limit]
'''

API = """
API
===

.. automodule:: shapes
   :members:
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("handmade-src")
    out = tmp_path_factory.mktemp("handmade-html")
    theme = src / "_themes" / "handmade"
    theme.mkdir(parents=True)
    (theme / "theme.conf").write_text("[theme]\ninherit = basic\nstylesheet = basic.css\n")
    (theme / "layout.html").write_text(LAYOUT)
    (src / "shapes.py").write_text(textwrap.dedent(MODULE))
    (src / "conf.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
        'project = "Shapes"\nversion = release = "2.0"\n'
        'extensions = ["sphinx.ext.autodoc", "sphinx.ext.viewcode"]\n'
        'html_theme = "handmade"\nhtml_theme_path = ["_themes"]\n'
    )
    (src / "index.rst").write_text("Shapes\n======\n\n.. toctree::\n\n   api\n")
    (src / "api.rst").write_text(API)
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out)],
        check=True,
        capture_output=True,
    )
    page = (out / "api.html").read_text()
    assert 'role="main"' not in page and "<main" not in page and "<article" not in page
    assert 'class="body"' not in page and "viewcode-link" in page
    return out


def items_of(site: Path) -> dict[str, dict[str, Any]]:
    url = "http://docs.test/"
    plan = plan_crawl(parse_inventory((site / "objects.inv").read_bytes()), url + "objects.inv")
    items: dict[str, dict[str, Any]] = {}
    for page in plan.pages:
        if page.status != "fetch":
            continue
        body = (site / page.page_url[len(url) :]).read_bytes()
        for t, item in zip(
            page.targets, extract_page(body, page.page_url, page.targets), strict=True
        ):
            items[t.key] = item
    return items


def test_signatures_and_titles_carry_no_permalink_or_source_link(site: Path) -> None:
    items = items_of(site)
    assert items["py:method:shapes.Shape.area"]["signature"] == "area(scale: float = 1.0) → float"
    for key, item in items.items():
        for text in (item.get("signature") or "", item.get("title") or ""):
            assert "¶" not in text and "[source]" not in text, (key, text)


def test_containers_do_not_swallow_their_members(site: Path) -> None:
    items = items_of(site)
    shape = items["py:class:shapes.Shape"]
    assert shape["doc"].startswith("A closed figure in the plane.")
    assert "Surface of the shape" not in shape["doc"] and "perimeter" not in shape["doc"]
    module = items["py:module:shapes"]
    assert module["doc"].startswith("Shapes and their areas.")
    assert "closed figure" not in module["doc"] and "largest shapes" not in module["doc"]
    assert "Made by hand" not in module["doc"] and "Everything about" not in module["doc"]


def test_first_paragraph_params_versions_and_parent(site: Path) -> None:
    items = items_of(site)
    area = items["py:method:shapes.Shape.area"]
    assert area["doc"].startswith("Surface of the shape, times scale.")
    assert area["parent"] == "shapes.Shape"
    assert [p["name"] for p in area["params"]] == ["scale"]
    largest = items["py:function:shapes.largest"]
    assert largest["parent"] == "shapes"
    assert [(v["kind"], v["version"]) for v in largest["versions"]] == [("changed", "2.0")]
    assert [(v["kind"], v["version"]) for v in items["py:class:shapes.Shape"]["versions"]] == [
        ("added", "1.2")
    ]
    assert all(i["status"] == "ok" for i in items.values())
