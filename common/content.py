"""An item's structured content as typed values: its parameters, return values, raised
exceptions, version notes and docstring-only names (docs/items.md), and the one codec
between them and the item's JSON.

The extractors build these entries as dicts and the item stores them as JSON; every
reader (the API diff, ``invcrawl show``, the MCP server) decodes them here, once, rather
than indexing dicts. Decoding is as lenient as the readers were: a missing field is None
(``.get``), an unknown one (from a newer version) is ignored, an entry that is not an
object is skipped, and an item of before ``returns`` became a list (one object, or null)
reads as a list of that one value. Encoding writes each field in the order the
extractors write it, so ``to_json(from_json(d)) == d`` for every entry they write (a test
checks it over real crawls, byte for byte).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar


def _text(value: Any) -> str | None:
    # Stored values are strings or null; anything else (a hand-made file) reads as text,
    # as the readers' ``str(...)`` did.
    return value if value is None or isinstance(value, str) else str(value)


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of ``params``: ``kind`` a ``ParamKind`` value (common/params.py), or
    None for a name only a field list documents; ``name`` None for an unnamed C one."""

    name: str | None
    kind: str | None
    type: str | None
    default: str | None
    description: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Param:
        return cls(
            _text(d.get("name")),
            _text(d.get("kind")),
            _text(d.get("type")),
            _text(d.get("default")),
            _text(d.get("description")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "type": self.type,
            "default": self.default,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class DocParam:
    """One entry of ``doc_only_params``: a name the docstring documents that the
    signature lacks."""

    name: str | None
    description: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DocParam:
        return cls(_text(d.get("name")), _text(d.get("description")))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description}


@dataclass(frozen=True, slots=True)
class Returned:
    """One value of ``returns``: ``name`` None for the one unnamed value."""

    name: str | None
    type: str | None
    description: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Returned:
        return cls(_text(d.get("name")), _text(d.get("type")), _text(d.get("description")))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "description": self.description}


@dataclass(frozen=True, slots=True)
class Raised:
    """One entry of ``raises``: the exception's name (None: only a description)."""

    type: str | None
    description: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Raised:
        return cls(_text(d.get("type")), _text(d.get("description")))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "description": self.description}


@dataclass(frozen=True, slots=True)
class VersionNote:
    """One entry of ``versions``: ``kind`` added, changed, deprecated or removed."""

    kind: str | None
    version: str | None
    text: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> VersionNote:
        return cls(_text(d.get("kind")), _text(d.get("version")), _text(d.get("text")))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "version": self.version, "text": self.text}


_T = TypeVar("_T")


def _entries(value: Any, decode: Callable[[Mapping[str, Any]], _T]) -> tuple[_T, ...]:
    if isinstance(value, Mapping):  # ``returns`` of before it was a list: one object
        value = [value]
    if not isinstance(value, list | tuple):
        return ()
    return tuple(decode(v) for v in value if isinstance(v, Mapping))


def params_of(item: Mapping[str, Any]) -> tuple[Param, ...]:
    return _entries(item.get("params"), Param.from_json)


def doc_only_params_of(item: Mapping[str, Any]) -> tuple[DocParam, ...]:
    return _entries(item.get("doc_only_params"), DocParam.from_json)


def returns_of(item: Mapping[str, Any]) -> tuple[Returned, ...]:
    return _entries(item.get("returns"), Returned.from_json)


def raises_of(item: Mapping[str, Any]) -> tuple[Raised, ...]:
    return _entries(item.get("raises"), Raised.from_json)


def versions_of(item: Mapping[str, Any]) -> tuple[VersionNote, ...]:
    return _entries(item.get("versions"), VersionNote.from_json)


@dataclass(frozen=True, slots=True)
class Content:
    """The structured content of one item, decoded."""

    params: tuple[Param, ...]
    doc_only_params: tuple[DocParam, ...]
    returns: tuple[Returned, ...]
    raises: tuple[Raised, ...]
    versions: tuple[VersionNote, ...]

    @classmethod
    def of(cls, item: Mapping[str, Any]) -> Content:
        return cls(
            params_of(item),
            doc_only_params_of(item),
            returns_of(item),
            raises_of(item),
            versions_of(item),
        )

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        """The fields as the item's JSON holds them (``doc_only_params`` only when there
        are some: docs/items.md)."""
        out: dict[str, list[dict[str, Any]]] = {"params": [p.to_json() for p in self.params]}
        if self.doc_only_params:
            out["doc_only_params"] = [d.to_json() for d in self.doc_only_params]
        out["returns"] = [r.to_json() for r in self.returns]
        out["raises"] = [r.to_json() for r in self.raises]
        out["versions"] = [v.to_json() for v in self.versions]
        return out
