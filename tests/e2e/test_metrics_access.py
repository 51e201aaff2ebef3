"""Who may read a consumer's metrics (issue 36): ``consume --metrics-port --bind 0.0.0.0``
served them to anyone without a word, where the dashboard refuses such a bind without a
token. Now a bind beyond loopback needs ``--metrics-token`` (or INVCRAWL_METRICS_TOKEN):
refused in one line before any work without it; with it, a scrape without
``Authorization: Bearer TOKEN`` gets 401, one with it the metrics."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from support.cli import clean_env, invcrawl
from support.crawl import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

TOKEN = "metrics-token-0123"


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "192.0.2.1"])
def test_a_bind_beyond_loopback_needs_a_token(tmp_path: Path, bind: str) -> None:
    # (Redis is never reached: the check comes first)
    args = ["consume", "--redis", "redis://127.0.0.1:9/0", "--metrics-port", "0"]
    result = invcrawl(*args, "--bind", bind, cwd=tmp_path)
    assert result.code == 2, result.stderr
    assert result.error_lines == [
        f"invcrawl: error: --bind {bind} makes this consumer's metrics reachable from other "
        "machines: give it a token for Prometheus to send (INVCRAWL_METRICS_TOKEN or "
        "--metrics-token; Authorization: Bearer TOKEN)"
    ]
    by_variable = invcrawl(*args, cwd=tmp_path, env=clean_env(INVCRAWL_BIND=bind))
    assert by_variable.code == 2 and len(by_variable.error_lines) == 1


def get(url: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_with_a_token_the_metrics_ask_for_it(tmp_path: Path, redis_url: str) -> None:
    log = tmp_path / "consumer.log"
    argv = [sys.executable, "-m", "invcrawl", "consume", "--redis", redis_url,
            "--metrics-port", "0", "--bind", "0.0.0.0"]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=clean_env(INVCRAWL_METRICS_TOKEN=TOKEN), stdout=out, stderr=out
        )
    try:

        def port() -> str | None:
            found = re.search(r"metrics at http://[^:]+:(\d+)/metrics", log.read_text())
            return found[1] if found else None

        url = f"http://127.0.0.1:{wait_for(port, 60, 'the metrics endpoint')}/metrics"
        assert get(url)[0] == 401
        assert get(url, "wrong")[0] == 401
        status, body = get(url, TOKEN)
        assert status == 200 and b"invcrawl_redis_errors_total" in body
        assert TOKEN not in log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143, log.read_text()[-2000:]
