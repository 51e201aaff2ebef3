"""The embedded Redis started before a command's imports (localredis/embedded.prestart,
issue 47, 5): redis-server loads the AOF while the command imports its modules, and the
command then joins it as any user does; nothing is left running or locked when it
never joins."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from invcrawl.cli import uses_embedded_redis
from invcrawl.common.settings.config import Config, load_config
from invcrawl.common.settings.datadir import holds_index
from invcrawl.localredis import embedded
from invcrawl.localredis.embedded import embedded_redis
from support.cli import clean_env
from support.crawl import wait_for
from support.embedded import server_processes, wait_stopped


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A data dir holding a key in its AOF, its Redis stopped."""
    data = tmp_path / "data"
    with embedded_redis(data, "everysec") as url:
        client = redis.Redis.from_url(url)
        client.set("kept", "yes")
        client.close()
    wait_stopped(data)
    # (its processes gone from /proc, their locks a moment later)
    wait_for(
        lambda: lock_free(data, "service.lock") and lock_free(data, "server.lock"), 30, "locks"
    )
    assert holds_index(data)
    yield data
    embedded.let_go()
    wait_stopped(data)


def server_lock_free(data: Path) -> bool:
    return lock_free(data, "server.lock")


def lock_free(data: Path, name: str) -> bool:
    with open(data / name, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_the_server_starts_before_the_command_joins_it(data_dir: Path) -> None:
    embedded.prestart(data_dir, "everysec")
    assert not server_lock_free(data_dir)  # as while any user starts it
    # started, nobody joined yet (the spawned service shows in /proc once it runs)
    wait_for(lambda: server_processes(data_dir), 60, "the prestarted service")
    with embedded_redis(data_dir, "everysec") as url:
        assert server_lock_free(data_dir)
        client = redis.Redis.from_url(url)
        assert client.get("kept") == b"yes"
        client.close()
    assert not embedded._STARTING
    wait_stopped(data_dir)  # the last user gone: it stops, as ever


def test_a_running_server_is_joined_as_before(data_dir: Path) -> None:
    with embedded_redis(data_dir, "everysec") as first:
        embedded.prestart(data_dir, "everysec")
        assert not embedded._STARTING  # one runs: nothing started
        with embedded_redis(data_dir, "everysec") as second:
            assert second == first


def test_a_command_that_never_joins_leaves_nothing(data_dir: Path) -> None:
    embedded.prestart(data_dir, "everysec")
    wait_for(lambda: server_processes(data_dir), 60, "the prestarted service")
    embedded.let_go()
    assert server_lock_free(data_dir)
    wait_stopped(data_dir)  # no user: it stops after its grace
    with embedded_redis(data_dir, "everysec") as url:  # and starts again as usual
        client = redis.Redis.from_url(url)
        assert client.get("kept") == b"yes"
        client.close()


def test_a_cold_command_answers_through_it(data_dir: Path) -> None:
    env = {**clean_env(), "INVCRAWL_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "invcrawl", "versions"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "no crawl" in (done.stdout + done.stderr).lower()


def test_which_commands_start_it_early(data_dir: Path, tmp_path: Path) -> None:
    def config(**values: object) -> Config:
        return load_config({"data_dir": data_dir, **values}, {})

    assert uses_embedded_redis("versions", config())
    assert uses_embedded_redis("crawl", config())
    assert not uses_embedded_redis("inventory", config())
    assert not uses_embedded_redis("versions", config(redis="redis://127.0.0.1:1/0"))
    empty = load_config({"data_dir": tmp_path / "empty"}, {})
    assert not uses_embedded_redis("versions", empty)  # nothing to load: the usual path
