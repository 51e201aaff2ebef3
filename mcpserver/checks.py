"""What every tool checks before any Redis call, and the short text beside each answer.
Pure. A tool's arguments come from a model: any characters, any size, any number; each
is bounded here and refused in one line (:class:`ToolInputError`), never passed on to a
scan. Site strings in a text are written as JSON strings (``ensure_ascii``): a control
or bidirectional character shows as ``\\u001b``, never raw; the structured content is
JSON anyway."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

MAX_TEXT = 1000  # characters of a query, name, key, project, version or kind
MAX_CURSOR = 64_000  # a cursor names every crawl it has read
SHOWN = 80  # characters of one site string in a text
LIMITS = {  # tool -> (lowest, highest) limit
    "search_symbols": (1, 100),
    "api_diff": (1, 2000),
    "changes_since": (1, 1000),
}
_ENTRY_ID = re.compile(r"\d{1,20}(-\d{1,20})?")


class ToolInputError(ValueError):
    """An argument the tool refuses, or a project, version or symbol that does not exist:
    one line, returned to the client as the tool's error."""


def text_arg(name: str, value: str | None, *, required: bool = False) -> str | None:
    """``value`` within :data:`MAX_TEXT` characters (None: not given)."""
    if value is None or (value == "" and not required):
        if required:
            raise ToolInputError(f"{name} is needed")
        return None
    if len(value) > MAX_TEXT:
        raise ToolInputError(f"{name} is {len(value)} characters long: at most {MAX_TEXT}")
    if required and not value.strip():
        raise ToolInputError(f"{name} is empty")
    return value


def limit_arg(tool: str, value: int) -> int:
    low, high = LIMITS[tool]
    if not low <= value <= high:
        raise ToolInputError(f"limit must be between {low} and {high}, got {value}")
    return value


def number_arg(name: str, value: int, low: int, high: int) -> int:
    """An integer argument within ``low`` to ``high``."""
    if not low <= value <= high:
        raise ToolInputError(f"{name} must be between {low:,} and {high:,}, got {value}")
    return value


def cursor_arg(value: str | None) -> str | None:
    """A change feed cursor as ``invcrawl changes`` prints it: ``0``, ``$`` (what comes
    next), one entry id, or ``CRAWL=ID,CRAWL=ID...`` (frontier/every_crawl.py), an ID
    being ``$`` for a crawl an answer did not reach."""
    if value is None or value in ("", "0", "$"):
        return value or None
    if len(value) > MAX_CURSOR:
        raise ToolInputError(f"cursor is {len(value)} characters long: at most {MAX_CURSOR}")
    parts = [value] if "=" not in value else [p.partition("=")[2] for p in value.split(",")]
    if not all(_ENTRY_ID.fullmatch(p) or p == "$" for p in parts):
        raise ToolInputError(
            f"cursor {shown(value)} is not one this server gave: pass the next_cursor of the "
            "previous answer, or nothing to read from the start"
        )
    return value


def shown(value: Any, most: int = SHOWN) -> str:
    """A site string as inert text: a JSON string, cut at ``most`` characters."""
    text = "" if value is None else str(value)
    cut = text if len(text) <= most else text[: most - 1] + "…"
    return json.dumps(cut)


def listed(values: Sequence[str], most: int = 10) -> str:
    """Some values, shown, and how many more."""
    out = ", ".join(shown(v) for v in values[:most])
    return out + (f" and {len(values) - most} more" if len(values) > most else "")


def one_line(text: str, most: int = 500) -> str:
    """A message of one line: its line breaks as spaces, cut at ``most`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
