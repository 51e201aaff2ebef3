"""Extraction coverage per ``domain:role``: how many items of each status, and how many
have an empty signature (for object descriptions) or an empty doc, so a user sees at once
where a site's extraction is weak."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from invcrawl.frontier.export import iter_latest
from invcrawl.frontier.session import CrawlSession

# Roles whose entries are not object descriptions: no signature is expected.
NO_SIGNATURE = frozenset({"std:label", "std:doc", "py:module", "js:module", "std:term"})


def expects_signature(type_: str) -> bool:
    return type_ not in NO_SIGNATURE


async def coverage(session: CrawlSession) -> dict[str, Any]:
    """The coverage rows per ``domain:role``, their totals, and the same rows per page
    generator (``generators``: ``sphinx``, ``pydoctor``..., ``-`` for items of pages that
    were not read), so an unknown generator shows."""
    roles: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    generators: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    async for data in iter_latest(session):
        item = json.loads(data)
        type_ = f"{item['domain']}:{item['role']}"
        for row in (roles[type_], generators[item.get("generator") or "-"]):
            row["total"] += 1
            row[item["status"]] += 1
            if item["status"] in ("ok", "anchor_missing"):
                if expects_signature(type_) and not item.get("signature"):
                    row["empty_signature"] += 1
                if not item.get("doc"):
                    row["empty_doc"] += 1
    totals: dict[str, int] = defaultdict(int)
    for row in roles.values():
        for name, value in row.items():
            totals[name] += value
    return {
        "crawl_id": session.crawl_id,
        "roles": {name: dict(row) for name, row in sorted(roles.items())},
        "totals": dict(totals),
        "generators": {name: dict(row) for name, row in sorted(generators.items())},
    }
