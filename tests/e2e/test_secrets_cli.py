"""Secrets never printed, whatever their characters, end to end: a real redis-server
whose password holds quotes, spaces and ``/ # ? @``, reached by the CLI and the
dashboard as a user types the URL; and site URLs with credentials refused."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import redis

from invcrawl.localredis.server import RedisServer, free_port
from support.cli import clean_env, invcrawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PASSWORD = "Sec'ret\"Pass Word99/#?@x"


@pytest.fixture
def locked(tmp_path: Path) -> RedisServer:
    server = RedisServer(tmp_path / "redis", fsync="everysec")
    server.start()
    client = redis.Redis(port=server.port)
    client.config_set("requirepass", PASSWORD)  # quotes and spaces: not on argv
    client.close()
    yield server
    with redis.Redis(port=server.port, password=PASSWORD) as client:
        client.shutdown(nosave=True)


def url(port: int, password: str = PASSWORD) -> str:
    return f"redis://default:{password}@127.0.0.1:{port}/0"


def test_a_password_with_any_characters_works_and_is_never_shown(
    locked: RedisServer, tmp_path: Path
) -> None:
    ok = invcrawl("status", "--redis", url(locked.port), "--json", cwd=tmp_path)
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout)["crawls"] == []
    wrong = invcrawl("status", "--redis", url(locked.port, "Wr'ong Pass/#?@1"), cwd=tmp_path)
    down = invcrawl("status", "--redis", url(free_port()), "--redis-wait", "0.2", cwd=tmp_path)
    for result in (ok, wrong, down):
        text = result.stdout + result.stderr
        for piece in (PASSWORD, "Wr'ong", "Pass Word99", "Word99/", 'ret"Pass'):
            assert piece not in text, text
    assert wrong.code == 1 and "default:***@127.0.0.1" in wrong.stderr
    assert down.code == 1 and "default:***@127.0.0.1" in down.stderr
    assert "Traceback" not in wrong.stderr + down.stderr


def test_the_dashboard_never_shows_the_password(locked: RedisServer, tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(INVCRAWL_REDIS=url(locked.port))
    dash = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "dashboard", "--port", str(port)],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert dash.stderr is not None
        header = dash.stderr.readline()
        assert f":{port}/" in header and "default:***@" in header, header
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=30) as reply:
            body = reply.read().decode()
        assert json.loads(body)["redis"].startswith("redis://default:***@")
        for text in (header, body):
            assert "Pass Word99" not in text and "Sec'ret" not in text
    finally:
        dash.terminate()
        dash.wait(30)


@pytest.mark.parametrize(
    ("site", "secret"),
    [
        ("https://reader:hunter2secret@docs.example.org/en/latest/", "hunter2secret"),
        ("https://reader:hun'ter2/ec#ret@docs.example.org/", "ter2/ec"),
        ("http://token-only-secret@docs.example.org/", "token-only-secret"),
    ],
)
def test_a_site_url_with_credentials_is_refused(site: str, secret: str, tmp_path: Path) -> None:
    result = invcrawl("crawl", site, "--redis", f"redis://127.0.0.1:{free_port()}/0", cwd=tmp_path)
    assert result.code == 2, result.stderr
    (line,) = result.error_lines
    assert "user name or password" in line
    assert secret not in result.stderr + result.stdout
