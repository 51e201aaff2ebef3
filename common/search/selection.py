"""Which project and which version a search (or an MCP tool) means (pure).

A project is named case-insensitively (``requests`` finds ``Requests``). A version is
an exact version, an X-range (``2.x``, ``2.1.x``: the highest version it matches), or
none (the project's latest finished version). A version is never substituted: when
nothing matches, :class:`UnknownVersion` names the versions that exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from invcrawl.common.version_order import version_key

_LISTED = 20  # names listed in an error message, at most


class SelectionError(ValueError):
    """A project or version that names nothing: its message is one line, safe to print
    or to return as a tool error."""


class UnknownProject(SelectionError):
    pass


class UnknownVersion(SelectionError):
    pass


class AmbiguousVersion(SelectionError):
    """A version that several crawls of the project hold (the same docs crawled from two
    paths): never one of them picked silently (issue 47.3)."""


class VersionChoice(Protocol):
    """A version of a project (``invcrawl.frontier.versions.CrawlVersion`` is one)."""

    @property
    def version(self) -> str: ...
    @property
    def crawl_id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def crawled_at(self) -> int | None: ...


V = TypeVar("V", bound=VersionChoice)


def listing(names: Sequence[str]) -> str:
    """Names for a one-line error: the first few, quoted, and how many more."""
    shown = ", ".join(repr(n) for n in names[:_LISTED])
    more = len(names) - _LISTED
    return shown + (f" and {more} more" if more > 0 else "") if names else "none"


def match_project(requested: str, projects: Sequence[str]) -> str:
    """The project ``requested`` names: the exact name, else the only one equal to it
    case-insensitively."""
    wanted = requested.strip()
    if wanted in projects:
        return wanted
    folded = [p for p in projects if p.casefold() == wanted.casefold()]
    if len(folded) == 1:
        return folded[0]
    ordered = sorted(set(projects), key=lambda p: (p.casefold(), p))
    if folded:
        raise UnknownProject(
            f"project {requested!r} is ambiguous: {listing(sorted(folded))}; give the exact name"
        )
    raise UnknownProject(f"no project {requested!r} (projects: {listing(ordered)})")


def is_x_range(requested: str) -> bool:
    parts = requested.split(".")
    return len(parts) >= 2 and parts[-1] in ("x", "X", "*") and all(parts[:-1])


def finished(choice: VersionChoice) -> bool:
    """Crawled to the end at least once (a crawl refreshing now was finished before)."""
    return choice.state == "finished" or (choice.state != "failed" and bool(choice.crawled_at))


def select_version(requested: str | None, versions: Sequence[V]) -> V:
    """The version ``requested`` names among ``versions`` (one project's): exact, else
    the highest an X-range matches; None: the latest finished. Failed crawls are no
    versions. Nothing matching raises :class:`UnknownVersion` naming those that exist."""
    usable = sorted(
        (v for v in versions if v.state != "failed"), key=lambda v: version_key(v.version)
    )
    names = [v.version for v in usable]
    if requested is None:
        done = [v for v in usable if finished(v)]
        if not done:
            raise UnknownVersion(
                f"no finished version yet (versions: {listing(names)}); name one to search it"
            )
        return done[-1]
    wanted = requested.strip()
    by_id = [v for v in usable if v.crawl_id == wanted]
    if by_id:  # a crawl id goes wherever a version does
        return by_id[0]
    exact = [v for v in usable if v.version == wanted]
    if not exact and not is_x_range(wanted):
        exact = [v for v in usable if v.version.casefold() == wanted.casefold()]
    if exact:
        return _only(exact, exact[-1])
    if is_x_range(wanted):
        stem = wanted.rsplit(".", 1)[0]
        matched = [v for v in usable if v.version == stem or v.version.startswith(stem + ".")]
        if matched:
            return _only(matched, matched[-1])
    raise UnknownVersion(f"no version {requested!r} (versions: {listing(names)})")


def _only(matched: Sequence[V], chosen: V) -> V:
    """``chosen``, unless other crawls hold its very version: then which one is meant
    is the user's to say, by crawl id."""
    same = [v.crawl_id for v in matched if v.version == chosen.version]
    if len(same) > 1:
        raise AmbiguousVersion(
            f"version {chosen.version!r} is {len(same)} crawls ({listing(sorted(same))}): "
            "give one crawl id in its place"
        )
    return chosen
