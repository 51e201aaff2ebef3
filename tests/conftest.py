"""Shared fixtures. Redis-facing tests run against a real redis-server that this test
session starts on a free port (never the machine's own Redis)."""

from __future__ import annotations

import asyncio
import importlib.abc
import os
import signal
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis

import invcrawl.common
from invcrawl.localredis.server import RedisServer


class _OneNamespace(importlib.abc.MetaPathFinder):
    """invcrawl's layers are ``invcrawl.common``, ``invcrawl.frontier``...: ``python -m
    pytest`` puts this checkout's root on sys.path, where a bare ``common`` or
    ``dashboard`` would still import (and pass here, then fail in a wheel: a
    ``resources.files("dashboard")`` once did). Refused here as it fails installed."""

    BARE = frozenset(
        {"process", "common", "frontier", "localredis", "fetch", "producer", "consumer",
         "dashboard", "mcpserver"}
    )  # fmt: skip

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in self.BARE:
            raise ModuleNotFoundError(f"No module named {name!r} (invcrawl's is invcrawl.{name})")


sys.meta_path.insert(0, _OneNamespace())

# invcrawl's layers are mapped from this checkout's folders by the editable install
# (pyproject.toml's package-dir): a venv installed from another clone would test that
# clone's common/ beside this one's invcrawl/. Say so once instead of testing a mixture.
_REPO = Path(__file__).resolve().parents[1]
if Path(invcrawl.common.__file__).resolve().parent != _REPO / "common":
    raise pytest.UsageError(
        f"invcrawl.common is imported from {Path(invcrawl.common.__file__).parent}, not this "
        f"checkout ({_REPO}): run `pip install -e '.[test]'` here"
    )

T = TypeVar("T")

# The tests stop the commands they start with SIGINT and SIGHUP, as a terminal would. A
# test run started in the background of a script (SIGINT ignored) or under nohup (SIGHUP
# ignored) would hand those down to every command, and a command keeps a signal that was
# ignored when it started ignored (process/interrupts.IGNORED_AT_START): the commands start
# from the defaults a terminal gives. (Before anything imports invcrawl.process.interrupts here.)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.fixture(scope="session", autouse=True)
def _session_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Without --data-dir a command's index is the user's (common/settings/datadir.py),
    which no test may read or write: the session's fixtures (module-scoped ones start
    before any test's own) get this XDG_DATA_HOME, each test one of its own below."""
    home = tmp_path_factory.mktemp("xdg-data-session")
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(home)
    yield home
    if before is None:
        os.environ.pop("XDG_DATA_HOME", None)
    else:
        os.environ["XDG_DATA_HOME"] = before


@pytest.fixture(autouse=True)
def _own_data_home(
    _session_data_home: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """Every test its own XDG_DATA_HOME (commands started as subprocesses inherit it:
    tests/support/cli.clean_env keeps it)."""
    home = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def run(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion in a fresh event loop (no pytest-asyncio needed)."""
    return asyncio.run(coro)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), fsync="everysec")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """A clean database on the session's server."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture
def sync_redis(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def fresh_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A private server per test, for tests that kill and restart Redis."""
    server = RedisServer(tmp_path / "redis", fsync="always")
    server.start()
    yield server
    server.stop()


def pytest_collection_modifyitems(items: list[Any]) -> None:
    # Tests under tests/integration talk to Redis: mark them so `-m "not integration"`
    # gives the fast, pure suite.
    for item in items:
        path = str(item.fspath)
        if "/integration/" in path and not item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.integration)
