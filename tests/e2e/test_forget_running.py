"""``forget --force`` of a crawl that ``invcrawl crawl`` is running (issue 36): the docs say
output files are kept, but the run deleted that crawl's partial ``.part`` file when its
crawl vanished. The items it had written stay in ``OUT.part``, and the run says so."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import clean_env, invcrawl
from support.crawl import build_site, wait_for
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_forget_force_keeps_the_running_crawls_partial_output(
    redis_url: str, tmp_path: Path
) -> None:
    site = build_site(tmp_path / "site", pages=40)

    def slow(path: str) -> str | None:  # the crawl runs long enough to be forgotten
        return "delay:400" if path.startswith("/api/") else None

    out = tmp_path / "out.jsonl"
    part = tmp_path / "out.jsonl.part"
    log = tmp_path / "crawl.log"
    with serve(site.root, slow) as http:
        argv = [sys.executable, "-m", "invcrawl", "crawl", http.url, "--redis", redis_url,
                "--crawl-id", "run", "-o", str(out), "--consumers", "1"]  # fmt: skip
        with open(log, "wb") as stderr:
            crawl = subprocess.Popen(argv, cwd=tmp_path, env=clean_env(), stderr=stderr)
        try:
            wait_for(lambda: lines(part) >= 3, 120, "items in the .part file",
                     diagnose=lambda: log.read_text()[-2000:])  # fmt: skip
            forced = invcrawl("forget", "run", "--yes", "--force", "--redis", redis_url,
                              cwd=tmp_path)  # fmt: skip
            assert forced.code == 0, forced.stderr
            written = lines(part)
            code = crawl.wait(120)
        finally:
            if crawl.poll() is None:
                crawl.send_signal(signal.SIGKILL)
                crawl.wait(30)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert part.exists(), text[-3000:]
    assert lines(part) >= written >= 3
    assert not out.exists()  # not complete: never renamed over the output
    assert (
        f"crawl run was forgotten: the {lines(part)} items written so far are kept in {part}"
        in text
    )
    assert code == 1, text[-3000:]
