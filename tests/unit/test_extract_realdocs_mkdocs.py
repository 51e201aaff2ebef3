"""invcrawl.common.extract against Debian's mkdocs documentation (mkdocs-doc: MkDocs 1.4 with
mkdocstrings, the mkdocs theme, 83 inventory entries): the site issue 35 was found on. Every
page extracted offline, every item checked against its HTML by ``support.mkcheck``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from invcrawl.common.extract import extract_page
from invcrawl.common.inventory import parse_inventory
from support.mkcheck import CHECKS, check_items
from support.targets import target

ROOT = Path("/usr/share/doc/mkdocs/html")
BASE = "https://www.mkdocs.org/"

pytestmark = [
    pytest.mark.realdocs,
    pytest.mark.skipif(not (ROOT / "objects.inv").exists(), reason="mkdocs-doc not installed"),
]


def _items() -> list[dict[str, Any]]:
    inventory = parse_inventory((ROOT / "objects.inv").read_bytes())
    by_page: dict[str, list[Any]] = defaultdict(list)
    for entry in inventory.entries:
        by_page[entry.uri.partition("#")[0]].append(entry)
    items = []
    for page, entries in by_page.items():
        targets = [target(e.name, e.domain, e.role, e.uri.partition("#")[2]) for e in entries]
        contents = extract_page((ROOT / page).read_bytes(), BASE + page, targets)
        for entry, content in zip(entries, contents, strict=True):
            key = f"{entry.domain}:{entry.role}:{entry.name}"
            anchor = entry.uri.partition("#")[2]
            items.append({"key": key, "page_url": BASE + page, "anchor": anchor, **content})
    return items


def test_every_item_of_the_issue_site_passes_every_check() -> None:
    items = _items()
    assert len(items) == 83
    assert {i["generator"] for i in items} == {"mkdocstrings"}
    result = check_items(items, lambda url: (ROOT / url.removeprefix(BASE)).read_bytes())
    assert result.counted["signature"] >= 30 and result.counted["parent"] >= 30
    assert not any(result.fails[c] for c in CHECKS), result.examples
    by_key = {i["key"]: i for i in items}
    found = by_key["py:function:mkdocs.structure.files.Files.get_file_from_path"]
    assert found["signature"] == "get_file_from_path(path: str) -> Optional[File]"
    assert found["params"] == [
        {"name": "path", "kind": "positional-or-keyword", "type": "str", "default": None,
         "description": None}
    ]  # fmt: skip
    assert found["returns"] == [{"name": None, "type": "Optional[File]", "description": None}]
    assert found["parent"] == "mkdocs.structure.files.Files"
    assert found["doc"] == "Return a File instance with File.src_uri equal to path."
