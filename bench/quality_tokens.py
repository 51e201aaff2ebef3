"""Tokens per answer (issue 48 item 4): the size of what the MCP server hands an agent,
its ``search_symbols`` and ``get_symbol`` results called through the official SDK's
client on the server in this process (``invcrawl.mcpserver.server.build_server``), as
they go over the wire (the ``CallToolResult`` as JSON: the text and the structured
content). Tokens are estimated as UTF-8 bytes / 4 (no tokenizer ships offline): compare
runs with each other, not with a model's count."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mcp import Client

from bench.quality_sets import Question
from invcrawl.mcpserver.server import Connection, build_server

BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class Sizes:
    tool: str
    calls: int
    median_tokens: int
    p95_tokens: int
    max_tokens: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _tokens(result: Any) -> int:
    wire = json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    return math.ceil(len(wire.encode("utf-8")) / BYTES_PER_TOKEN)


def _sizes(tool: str, tokens: list[int]) -> Sizes:
    ordered = sorted(tokens) or [0]
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return Sizes(tool, len(tokens), ordered[len(ordered) // 2], p95, ordered[-1])


async def measure(url: str, questions: Sequence[Question]) -> list[Sizes]:
    """search_symbols of each question (every project, the default limit) and get_symbol
    of its first answer in its project."""
    found: list[int] = []
    got: list[int] = []
    connection = Connection(url)
    try:
        async with Client(build_server(connection), mode="legacy") as client:
            for q in questions:
                found.append(_tokens(await client.call_tool("search_symbols", {"query": q.text})))
                one = await client.call_tool(
                    "get_symbol", {"name": q.answers[0], "project": q.project}
                )
                got.append(_tokens(one))
    finally:
        await connection.aclose()
    return [_sizes("search_symbols", found), _sizes("get_symbol", got)]


def table(sizes: Sequence[Sizes]) -> str:
    head = "| MCP tool | calls | median tokens | p95 tokens | max tokens |\n|---|---:|---:|---:|---:|\n"
    return head + "".join(
        f"| {s.tool} | {s.calls} | {s.median_tokens} | {s.p95_tokens} | {s.max_tokens} |\n"
        for s in sizes
    )
