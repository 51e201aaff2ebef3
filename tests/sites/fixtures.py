"""Build the fixture sites once per test session, for end-to-end tests.

A test module declares its own fixture around ``built_sites_or_skip`` (a shared
``tests/e2e/conftest.py`` would shadow the root ``conftest`` module that other tests import
by name)::

    @pytest.fixture(scope="session")
    def built_sites() -> dict[str, BuiltSite]:
        return built_sites_or_skip()

The build runs once per process whichever module asks first. A cold build takes one to two
minutes on 2 cores: tests using it need a ``pytest.mark.timeout`` above the project's 120 s.
"""

from __future__ import annotations

import sys
from functools import cache

import pytest

from sites.build import BuildError, BuiltSite, PipUnreachable, build_all


def _log(msg: str) -> None:
    if "up to date" not in msg:  # only report real work
        print(f"[sites] {msg}", file=sys.__stderr__, flush=True)


@cache
def _build() -> dict[str, BuiltSite] | BuildError:
    try:
        return build_all(log=_log)
    except BuildError as exc:
        return exc


def built_sites_or_skip() -> dict[str, BuiltSite]:
    """Combo id -> built site (``.html``, ``.inventory``, ``.combo``). Skips the test when pip
    cannot reach the package index, fails it with pip's/Sphinx's message on any other error."""
    result = _build()
    if isinstance(result, PipUnreachable):
        first = str(result).splitlines()[0]
        pytest.skip(f"fixture sites cannot be built, pip cannot reach the package index: {first}")
    if isinstance(result, BuildError):
        pytest.fail(f"fixture sites failed to build:\n{result}", pytrace=False)
    return result
