"""Sphinx ``objects.inv`` parsing: bounded, lenient, and accountable. Pure: bytes in.

What it does that Sphinx's, doc2dash's and sphobjinv's readers do not (see
``docs/architecture.md``):

* **Bounded inflate.** The zlib body is inflated with ``decompressobj(max_length)`` in a
  loop against an absolute cap, so a decompression bomb fails fast with a one-line
  error while memory stays bounded. Real ratios are 5-20x; the default cap is 64 MiB.
  A stream that stops before its end (a cut download) is an error, not a short inventory.
* **Bounded lines.** A line longer than :data:`MAX_LINE` characters is malformed: its
  name and URI would be copied into an item's identity fields, which no size cap of an
  item may cut (real lines are under 1,000 characters).
* **Bounded header.** ``# Project:`` and ``# Version:`` reach every item of the crawl
  (and its status, metric labels, ``versions`` rows): each is read from the first
  :data:`HEADER_LINE_BYTES` bytes of its line, its whitespace collapsed, and cut to
  ``common/bounds.HEADER_FIELD_CHARS`` characters (a 2 MB header made 200 MB of output).
* **The strict line pattern** (sphobjinv's ``p_data``: the type must be
  ``domain:role``), which recovers entries Sphinx's own regex drops (names with spaces
  followed by a digit token).
* **Every line accounted for.** Each body line is either parsed or recorded as
  malformed with a reason (blank lines included), so ``parsed + malformed == lines``.
* ``$`` is expanded only when it is the *last* character of the URI, and a dispname is
  expanded only when the *whole* field is ``-`` (the writer's two abbreviations).
* Version 1 (plain text) inventories are read too, as Sphinx still does.
"""

from __future__ import annotations

import re
import sys
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from invcrawl.common.bounds import HEADER_FIELD_CHARS, clip

DEFAULT_MAX_INFLATED = 64 * 1024 * 1024
MAX_HEADER_LINES = 8
HEADER_LINE_BYTES = 4096  # bytes of a header line decoded (the rest is skipped)
PRIORITY_CHARS = 20  # a sign and 19 digits: a signed 64-bit integer's longest
MAX_LINE = 16_384  # characters of one entry line (docs/items.md: size bounds)
MALFORMED_EXAMPLES = 5

V1_HEADER = "# Sphinx inventory version 1"
V2_HEADER = "# Sphinx inventory version 2"


class InventoryError(ValueError):
    """The bytes are not a usable inventory (one-line, user-facing message)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One inventory line, abbreviations expanded."""

    name: str
    domain: str
    role: str
    priority: int
    uri: str  # as written, with a trailing ``$`` expanded
    dispname: str  # ``-`` expanded to the name

    @property
    def key(self) -> str:
        return f"{self.domain}:{self.role}:{self.name}"

    @property
    def type(self) -> str:
        return f"{self.domain}:{self.role}"


@dataclass(frozen=True, slots=True)
class Malformed:
    lineno: int  # 1-based line number within the inflated body
    reason: str
    text: str


@dataclass(slots=True)
class Inventory:
    project: str | None
    version: str | None
    format: str  # "v2" or "v1"
    compressed_size: int
    inflated_size: int
    entries: list[Entry] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    body_lines: int = 0

    @property
    def blank_lines(self) -> int:
        return sum(1 for m in self.malformed if m.reason == "blank line")


def parse_inventory(data: bytes, max_inflated: int = DEFAULT_MAX_INFLATED) -> Inventory:
    """Parse an ``objects.inv`` (v2 zlib or v1 plain text). Raises InventoryError."""
    if not data:
        raise InventoryError("the file is empty (0 bytes), not a Sphinx inventory")
    header, offset = _read_header(data)
    first = header[0] if header else ""
    if first.startswith(V1_HEADER):
        body = data[offset:]
        if len(body) > max_inflated:
            raise InventoryError(f"the inventory is larger than {_mib(max_inflated)}")
        inv = _new(header, "v1", len(data), len(body))
        _parse_lines(inv, _decode(body), _parse_v1_line)
        return inv
    if not first.startswith(V2_HEADER):
        raise InventoryError(_not_inventory(data))
    if not any("zlib" in line for line in header[1:]):
        raise InventoryError("no '... compressed using zlib' line in the inventory header")
    body = _inflate(data[offset:], max_inflated)
    inv = _new(header, "v2", len(data), len(body))
    text = _decode(body)
    del body  # not kept alive beside its decoded copy while the lines are parsed
    _parse_lines(inv, text, _parse_v2_line)
    return inv


def _read_header(data: bytes) -> tuple[list[str], int]:
    """Header lines up to and including the one mentioning zlib (v2), or the first line
    (v1). Tolerates the extra blank header line of Sphinx < 1.5.4."""
    lines: list[str] = []
    offset = 0
    for _ in range(MAX_HEADER_LINES):
        end = data.find(b"\n", offset)
        if end < 0:
            end = len(data)
        head = data[offset : min(end, offset + HEADER_LINE_BYTES)]
        line = head.decode("utf-8", "replace").rstrip("\r")
        if lines and lines[0].startswith(V1_HEADER) and not line.startswith("#"):
            return lines, offset  # v1: the header is the leading comment lines
        lines.append(line)
        offset = min(len(data), end + 1)
        if not line.startswith("#") and line.strip():
            break
        if "zlib" in line:
            return lines, offset
    return lines, offset


def _inflate(compressed: bytes, cap: int) -> bytes:
    inflater = zlib.decompressobj()
    out = bytearray()
    chunk = 1 << 20
    pending = compressed
    try:
        while True:
            out += inflater.decompress(pending, min(chunk, cap + 1 - len(out)))
            if len(out) > cap:
                raise InventoryError(
                    f"the inventory inflates to more than {_mib(cap)} (a decompression "
                    "bomb?); raise --max-inflated-mb if it is genuine"
                )
            pending = inflater.unconsumed_tail
            if not pending:
                out += inflater.flush()
                break
    except zlib.error as exc:
        raise InventoryError(f"the compressed body is not valid zlib data ({exc})") from None
    if not inflater.eof:
        # zlib reads a cut stream without complaint; its entries would be a silent subset
        # (and a refresh would tombstone the rest), so a stream must reach its end.
        raise InventoryError(
            f"the compressed body ends before its zlib stream does ({len(compressed)} "
            "bytes, truncated?)"
        )
    if len(out) > cap:
        raise InventoryError(f"the inventory inflates to more than {_mib(cap)}")
    return bytes(out)


def _decode(body: bytes) -> str:
    return body.decode("utf-8", "replace")


def _new(header: list[str], fmt: str, compressed: int, inflated: int) -> Inventory:
    project = version = None
    for line in header[1:]:
        if line.startswith("# Project:"):
            project = _header_field(line[10:])
        elif line.startswith("# Version:"):
            version = _header_field(line[10:])
    return Inventory(
        project=project,
        version=version,
        format=fmt,
        compressed_size=compressed,
        inflated_size=inflated,
    )


def _header_field(text: str) -> str | None:
    """A header field's value: whitespace collapsed, at most HEADER_FIELD_CHARS."""
    return clip(" ".join(text.split()), HEADER_FIELD_CHARS) or None


_CHUNK = 1 << 20  # characters of the body split into lines at a time


def _parse_lines(inv: Inventory, text: str, parse_line: Any) -> None:
    # Split a chunk at a time: a list of every line of a 250,000-entry inventory would
    # add ~40 MB to the producer's peak memory for nothing.
    lineno = 0
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", min(start + _CHUNK, end))
        stop = end if stop < 0 else stop + 1
        lines = text[start:stop].split("\n")
        if lines[-1] == "":
            lines.pop()  # the terminator of the chunk's last line, not a line
        start = stop
        for raw in lines:
            lineno += 1
            line = raw.rstrip("\r")
            if not line.strip():
                inv.malformed.append(Malformed(lineno, "blank line", raw))
                continue
            if len(line) > MAX_LINE:
                inv.malformed.append(
                    Malformed(lineno, f"longer than {MAX_LINE} characters", raw[:200])
                )
                continue
            result = parse_line(line)
            if isinstance(result, Entry):
                inv.entries.append(result)
            else:
                inv.malformed.append(Malformed(lineno, result, raw[:200]))
    inv.body_lines = lineno


# sphobjinv's line pattern (``sphobjinv.re.p_data``, version 2.4), written out here:
# importing it imports sphobjinv, which pulls in jsonschema (docs/performance.md), in
# every producer. A unit test checks that it is still sphobjinv's, character for character.
LINE_PATTERN = re.compile(
    r"""
    ^                               # Start of line
    (?P<name>.+?)        # --> Name
    \s+                             # Dividing space
    (?P<domain>[^\s:]+)  # --> Domain
    :                               # Dividing colon
    (?P<role>[^\s]+)     # --> Role
    \s+                             # Dividing space
    (?P<priority>-?\d+)  # --> Priority
    \s+?                            # Dividing space
    (?P<uri>\S*)         # --> URI
    \s+                             # Dividing space
    (?P<dispname>.+?)    # --> Display name, lazy b/c possible CR
    \r?$                            # Ignore possible CR at EOL
    """,
    re.MULTILINE | re.VERBOSE,
)


def _priority(text: str) -> int | None:
    """A priority field's value; ``None`` beyond a signed 64-bit integer (real ones are
    -1 to 2): a longer one would reach the JSON of every item of the entry, whose
    encoder stops at 64 bits, and past 4,300 digits ``int`` itself refuses it."""
    if len(text) > PRIORITY_CHARS:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _parse_v2_line(line: str) -> Entry | str:
    match = LINE_PATTERN.match(line)
    if match is None:
        if not re.search(r"\s[^\s:]+:\S+\s+-?\d+(\s|$)", line):
            return "no 'domain:role priority' fields"
        return "fields do not match 'name domain:role priority uri dispname'"
    name = match["name"]
    if not name.strip():
        return "empty name"
    priority = _priority(match["priority"])
    if priority is None:
        return "priority out of range (a 64-bit integer)"
    uri = match["uri"]
    if uri.endswith("$"):
        uri = uri[:-1] + name
    dispname = match["dispname"]
    if dispname == "-":
        dispname = name
    return Entry(
        name=name,
        # A handful of distinct values: one shared string each instead of two per entry.
        domain=sys.intern(match["domain"]),
        role=sys.intern(match["role"]),
        priority=priority,
        uri=uri,
        dispname=dispname,
    )


def _parse_v1_line(line: str) -> Entry | str:
    parts = line.split()
    if len(parts) != 3:
        return "a v1 line has three fields: name type location"
    name, kind, location = parts
    if kind == "mod":
        return Entry(name, "py", "module", 0, f"{location}#module-{name}", name)
    return Entry(name, "py", kind, 1, f"{location}#{name}", name)


def _not_inventory(data: bytes) -> str:
    head = data[:200].lstrip().lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml")) or b"<html" in head:
        return "got an HTML page, not an objects.inv (is SITE the docs root?)"
    first = data.split(b"\n", 1)[0][:60].decode("utf-8", "replace")
    return f"not a Sphinx inventory (first line {first!r})"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def inventory_to_dict(inv: Inventory) -> dict[str, Any]:
    """A JSON-ready summary (``invcrawl inventory --json``)."""
    types = Counter(e.type for e in inv.entries)
    return {
        "project": inv.project,
        "version": inv.version,
        "format": inv.format,
        "compressed_size": inv.compressed_size,
        "inflated_size": inv.inflated_size,
        "body_lines": inv.body_lines,
        "parsed": len(inv.entries),
        "malformed": len(inv.malformed),
        "blank_lines": inv.blank_lines,
        "types": dict(types.most_common()),
        "malformed_examples": [
            {"lineno": m.lineno, "reason": m.reason, "text": m.text}
            for m in inv.malformed
            if m.reason != "blank line"
        ][:MALFORMED_EXAMPLES],
    }
