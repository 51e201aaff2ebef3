"""``invcrawl search`` and ``invcrawl show``: symbols found by name or summary words
across the crawls in Redis (``frontier/search.py``, docs/search.md), the same engine the
MCP server's ``search_symbols`` and ``get_symbol`` run.

Everything printed comes from sites: each value goes through ``invcrawl/render.safe``
(text), ``terminal_safe`` (Markdown) or ``json_safe`` (``--json``). A bad query or
limit, an unknown project or version: one line, exit 2, no traceback."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from invcrawl import terminal
from invcrawl.common.search.ranking import SearchInputError
from invcrawl.common.search.selection import SelectionError
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, fail
from invcrawl.frontier.search import (
    SearchAnswer,
    SymbolHit,
    SymbolLookup,
    get_symbol,
    search_answer,
)
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.symbol_names import close_names, did_you_mean
from invcrawl.frontier.versions import crawl_versions
from invcrawl.live_redis import redis_for
from invcrawl.render import fit, json_safe, safe, terminal_safe
from invcrawl.scope import with_frontier

CANDIDATES_LISTED = 10


def _read(config: Config, job: Callable[[Frontier], Awaitable[Any]]) -> Any:
    try:
        with redis_for(config, create=False) as live:
            return with_frontier(live, job)
    except (SearchInputError, SelectionError) as exc:
        raise UsageError(str(exc)) from None


def _hit_lines(hits: list[SymbolHit], width: int | None, *, explain: bool = False) -> list[str]:
    lines = []
    for hit in hits:
        where = f"{safe(hit.project) or '(no project)'} {safe(hit.version)}".strip()
        lines.append(fit(f"{safe(hit.name)}  {safe(hit.role)}  {where}", width))
        if hit.summary:
            lines.append(fit(f"    {safe(hit.summary)}", width))
        lines.append(f"    {safe(hit.url)}" if hit.url else f"    {safe(hit.key)}")
        if explain:
            lines.append(fit(f"    why: {safe(explanation(hit))}", width))
    return lines


async def _reindex_all(frontier: Frontier) -> tuple[int, int]:
    from invcrawl.frontier.search_index import reindex  # noqa: PLC0415 - --reindex only

    crawls = [c for c in await crawl_versions(frontier) if not c.failed]
    items = 0
    for crawl in crawls:
        items += await reindex(frontier.crawl(crawl.crawl_id))
    return len(crawls), items


def cmd_search(config: Config) -> int:
    query = config.query
    if config.reindex:
        crawls, items = _read(config, _reindex_all)
        terminal.say(f"indexed {items} items of {crawls} crawl(s)")
        if query is None:
            return EXIT_OK
    if query is None:
        raise ConfigError("search needs QUERY: a name or a few words, e.g. json.loads")

    async def job(frontier: Frontier) -> SearchAnswer:
        return await search_answer(
            frontier,
            query,
            project=config.project,
            version=config.version,
            kind=config.kind,
            limit=config.limit,
        )

    answer: SearchAnswer = _read(config, job)
    if answer.note:
        terminal.note(answer.note)
    if config.json:
        data = answer.to_json(query)
        print(json_safe(json.dumps(data, indent=2, ensure_ascii=False)))
        return EXIT_OK
    if answer.no_good_match:
        terminal.note(f"no good match for {safe(query)!s}: nothing clears the relevance floor")
        return EXIT_OK
    if not answer.hits:
        terminal.note(f"no symbol matches {safe(query)!s}")
        return EXIT_OK
    print("\n".join(_hit_lines(answer.hits, terminal.width(), explain=config.explain)))
    return EXIT_OK


def explanation(hit: SymbolHit) -> str:
    """One line: why a result matched (its ``why``)."""
    why = hit.why
    parts = [str(why.get("matched", ""))]
    if why.get("words"):
        parts.append("words " + ", ".join(str(w) for w in why["words"]))
    lexical = why.get("lexical")
    if isinstance(lexical, dict):
        parts.append(f"lexical #{lexical.get('rank')} (BM25F {lexical.get('bm25f')})")
    meaning = why.get("semantic")
    if isinstance(meaning, dict):
        parts.append(f"semantic #{meaning.get('rank')} (cosine {meaning.get('cosine')})")
    priors = why.get("priors")
    if isinstance(priors, dict) and priors:
        parts.append("priors " + ", ".join(f"{k} x{v}" for k, v in priors.items()))
    linked = why.get("linked_from_pages")
    if isinstance(linked, int) and linked:
        parts.append(f"linked from {linked} page{'s' if linked != 1 else ''}")
    if hit.also:
        parts.append("also " + ", ".join(hit.also))
    return "; ".join(p for p in parts if p)


REFERENCES_LISTED = 12  # references named by `show`; the rest counted


def _item_text(item: dict[str, Any], where: str) -> str:
    """A symbol for the terminal: its signature and URL, each parameter with its type,
    default and description, returns and raises with theirs, then its doc as written
    (``doc_markdown``: paragraphs, lists and code blocks kept; ``doc``, one paragraph,
    where an older item has none)."""
    lines = [f"{safe(item.get('name'))}  ({safe(item.get('key'))}, {where})"]
    if item.get("signature"):
        lines += [f"  {safe(line)}" for line in str(item["signature"]).splitlines()]
    if item.get("url"):
        lines.append(f"  {safe(item['url'])}")
    for field, words in (("inherited_from", "inherited from"), ("alias_of", "alias of")):
        if item.get(field):
            lines.append(f"  {words} {safe(item[field])}")
    # (an item's content decoded: `show` of one symbol only, never a search's list)
    from invcrawl.common.content import Content  # noqa: PLC0415

    content = Content.of(item)
    for param in content.params:
        kind = f" [{safe(param.kind)}]" if param.kind else ""
        type_ = f": {safe(param.type)}" if param.type else ""
        default = f" = {safe(param.default)}" if param.default else ""
        lines.append(f"  param {safe(param.name)}{type_}{default}{kind}")
        if param.description:
            lines.append(f"      {safe(param.description)}")
    entries: list[tuple[str, tuple[str | None, ...], str | None]] = [
        ("returns", (r.name, r.type), r.description) for r in content.returns
    ]
    entries += [("raises", (r.type,), r.description) for r in content.raises]
    for name, named, description in entries:
        head = " ".join(safe(v) for v in named if v)
        described = safe(description) if description else ""
        lines.append(f"  {name} {head}: {described}" if head and described else
                     f"  {name} {head or described}")  # fmt: skip
    extra = [safe(p.name) for p in content.doc_only_params]
    if extra:  # documented names the signature does not take (docs/items.md)
        lines.append(f"  documented, not in the signature: {', '.join(map(str, extra))}")
    refs = _reference_names(item)
    if refs:  # what the doc links to, by key where the page holds it (docs/items.md)
        more = f" and {len(refs) - REFERENCES_LISTED} more" if len(refs) > REFERENCES_LISTED else ""
        lines.append(f"  links to {', '.join(refs[:REFERENCES_LISTED])}{more}")
    doc = str(item.get("doc_markdown") or item.get("doc") or "")
    if doc:
        lines += ["", terminal_safe(doc.strip("\n"))]
    return "\n".join(lines)


def _reference_names(item: dict[str, Any]) -> list[str]:
    """An item's references as the terminal names them: the key of one the page holds,
    else the name the link gives (``references`` in docs/items.md)."""
    names = []
    for ref in item.get("references") or ():
        if isinstance(ref, dict):
            name = ref.get("key") or ref.get("name") or ref.get("url")
            if name:
                names.append(safe(str(name)))
    return names


def _item_markdown(item: dict[str, Any], where: str) -> str:
    name = str(item.get("name") or "").replace("`", "")
    lines = [f"# `{name}`", "", f"{item.get('role', '')} in {where}", ""]
    for field, words in (("inherited_from", "inherited from"), ("alias_of", "alias of")):
        if item.get(field):
            lines += [f"{words} `{str(item[field]).replace('`', '')}`", ""]
    if item.get("signature"):
        lines += ["```python", str(item["signature"]).replace("```", "'''"), "```", ""]
    lines.append(str(item.get("doc_markdown") or item.get("doc") or ""))
    if item.get("url"):
        lines += ["", f"<{str(item['url']).replace('>', '%3E')}>"]
    return terminal_safe("\n".join(lines) + "\n")


def cmd_show(config: Config) -> int:
    name = config.show_name
    if name is None:
        raise ConfigError("show needs NAME: an item key, a qualified name or a last component")
    if config.json and config.markdown:
        raise ConfigError("--json and --markdown do not go together: pick one")

    async def job(frontier: Frontier) -> tuple[SymbolLookup, list[SymbolHit]]:
        found = await get_symbol(frontier, name, project=config.project, version=config.version)
        if found.item is not None or found.named:
            return found, []
        scope = {"project": config.project, "version": config.version}
        return found, await close_names(frontier, name, found, **scope)

    found, close = _read(config, job)
    if found.item is not None:
        where = f"{safe(found.project) or '(no project)'} {safe(found.version)}".strip()
        if config.json:
            data = {"project": found.project, "version": found.version, "item": found.item}
            print(json_safe(json.dumps(data, indent=2, ensure_ascii=False)))
        elif config.markdown:
            print(_item_markdown(found.item, where), end="")
        else:
            print(_item_text(found.item, where))
        return EXIT_OK
    named = found.candidates if found.named else []
    hits = named[:CANDIDATES_LISTED]
    if config.json:
        data = {"item": None, "candidates": [h.to_json() for h in hits]}
        print(json_safe(json.dumps({**data, "did_you_mean": [h.to_json() for h in close]})))
    elif hits:
        print("\n".join(_hit_lines(hits, terminal.width())))
    if hits:
        return fail(
            f"{safe(name)} is ambiguous: {len(named)} symbols have that name (listed); give "
            "its key or --project/--version",
            EXIT_USAGE,
        )
    scope = f" in {found.project} {found.version}" if found.project else ""
    return fail(
        f"{safe(name)} names no symbol{safe(scope)}{did_you_mean(close)} (try `invcrawl search`)",
        EXIT_FAILED,
    )
