"""``search_symbols`` and ``get_symbol``: the search engine (``frontier/search.py``), one
item within ``max_chars`` or the part of one of its fields, and the close names offered
for a name that is no symbol (``frontier/symbol_names.py``)."""

from __future__ import annotations

from typing import Any

from invcrawl.frontier import search
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.symbol_names import close_names
from invcrawl.mcpserver.bounded import DEFAULT_MAX_CHARS, PAGED, fit_item, fit_list, page, size
from invcrawl.mcpserver.checks import ToolInputError, plural, shown
from invcrawl.mcpserver.projects import Answer
from invcrawl.mcpserver.references import with_references


async def search_symbols(
    frontier: Frontier,
    query: str,
    *,
    project: str | None,
    version: str | None,
    kind: str | None,
    limit: int,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Answer:
    try:
        # the items nearest a question in meaning are candidates too (the engine's
        # default: the crawls' vector logs, read once a process, then what was appended),
        # and the transformer re-ranks a question's first results (its weights ship with invcrawl)
        answer = await search.search_answer(
            frontier, query, project=project, version=version, kind=kind, limit=limit,
            reranking=True,
        )  # fmt: skip
    except ValueError as exc:  # SelectionError included
        raise ToolInputError(str(exc)) from None
    hits = answer.hits
    top = ", ".join(
        f"{shown(h.name, 60)} ({shown(h.role, 20)}, {shown(h.project, 30)} {shown(h.version, 20)})"
        for h in hits[:5]
    )
    text = f"{plural(len(hits), 'result')} for {shown(query)}" + (f": {top}" if top else "")
    if answer.no_good_match:
        text = f"no good match for {shown(query)}: nothing clears the relevance floor"
    if answer.note:
        text += f" ({answer.note})"
    return fit_list(answer.to_json(query), "results", max_chars), text


async def get_symbol(
    frontier: Frontier,
    name: str,
    *,
    project: str | None,
    version: str | None,
    field: str | None = None,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Answer:
    """The item ``name`` names, within ``max_chars`` (``cut`` says what was cut); with
    ``field``, the part of that field from ``offset`` (mcpserver/bounded.py)."""
    if field is not None and field not in PAGED:
        raise ToolInputError(f"field {shown(field)} is not one that is cut: {', '.join(PAGED)}")
    try:
        found = await search.get_symbol(frontier, name, project=project, version=version)
    except ValueError as exc:
        raise ToolInputError(str(exc)) from None
    where = {"project": found.project, "version": found.version}
    if found.item is not None:
        item = await with_references(frontier, found.item)
        if field is not None:
            return _part(where, item, field, offset, max_chars)
        answer = fit_item({**where, "item": item}, max_chars)
        cut = answer.get("cut") or {}
        text = (
            f"{shown(item.get('key'))} in {shown(found.project)} {shown(found.version)}: "
            f"{shown(item.get('signature') or item.get('name'), 200)}"
            + (f"; cut to {max_chars:,} characters: {', '.join(cut)} (read on with field and "
               "offset)" if cut else "")
        )  # fmt: skip
        for field_name, words in (("inherited_from", "inherited from"), ("alias_of", "alias of")):
            if item.get(field_name):
                text += f" ({words} {shown(item[field_name])})"
        references = item.get("references") or []
        if references:  # (mcpserver/references.py)
            keyed = sum(1 for r in references if isinstance(r, dict) and r.get("key"))
            text += f"; {plural(len(references), 'reference')}, {keyed} by symbol key"
        return answer, text
    named = found.candidates if found.named else []
    if named:  # several symbols by that name: which one is meant
        text = (
            f"{shown(name)} names no single symbol: {plural(len(named), 'candidate')}, "
            + ", ".join(shown(c.key, 80) for c in named[:5])
        )
        answer = {**where, "candidates": [c.to_json() for c in named]}
        return fit_list(answer, "candidates", max_chars), text
    close = await close_names(frontier, name, found, project=project, version=version)
    scope = f"{shown(found.project)} {shown(found.version)}" if found.project else "any project"
    raise ToolInputError(
        f"no symbol {shown(name)} in {scope}"
        + (f"; did you mean {', '.join(shown(c.key, 80) for c in close)}?" if close else "")
        + " (search_symbols finds symbols by words of their name)"
    )


def _part(
    where: dict[str, Any], item: dict[str, Any], field: str, offset: int, max_chars: int
) -> Answer:
    """The part of ``item[field]`` from ``offset`` that fits ``max_chars``."""
    value = item.get(field)
    total = len(value) if isinstance(value, (str, list)) else 0
    if offset > total:
        raise ToolInputError(f"offset {offset} is past the end of {field} ({total:,} in all)")
    head = {**where, "key": item["key"], "field": field, "offset": offset, "total": total}
    part, next_offset = page(value, offset, max_chars - size(head) - 200)
    data = {**head, "next_offset": next_offset, "part": part}
    count = len(part) if isinstance(part, (str, list)) else 0
    text = f"{shown(item['key'])} {field}: {offset:,} to {offset + count:,} of {total:,}" + (
        f"; next offset {next_offset}" if next_offset is not None else "; the end"
    )
    return data, text
