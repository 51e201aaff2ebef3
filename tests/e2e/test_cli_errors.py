"""Bad input gives one clear line and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import pytest

from invcrawl.localredis.server import RedisServer, free_port
from support.cli import REPO, invcrawl, run
from support.httpserver import serve

pytestmark = pytest.mark.e2e

HEADER = (
    b"# Sphinx inventory version 2\n# Project: P\n# Version: 1\n"
    b"# The remainder of this file is compressed using zlib.\n"
)


def assert_one_line_error(result, code: int, fragment: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == code, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert len(result.error_lines) == 1, result.stderr
    assert fragment in result.error_lines[0], result.error_lines[0]


@pytest.fixture
def site_dir(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "html-inv").mkdir(parents=True)
    (root / "html-inv" / "objects.inv").write_text("<!DOCTYPE html><html>oops</html>")
    (root / "empty").mkdir()
    (root / "empty" / "objects.inv").write_bytes(HEADER + zlib.compress(b""))
    (root / "zero").mkdir()
    (root / "zero" / "objects.inv").write_bytes(b"")
    (root / "bomb").mkdir()
    (root / "bomb" / "objects.inv").write_bytes(HEADER + zlib.compress(b"x" * (8 * 1024 * 1024), 9))
    return root


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("missing/", "HTTP 404"),
        ("html-inv/", "HTML page"),
        ("empty/", "0 entries"),
        ("zero/", "empty (0 bytes)"),
        ("bomb/", "decompression bomb"),
    ],
)
def test_bad_sites(site_dir: Path, tmp_path: Path, path: str, fragment: str) -> None:
    with serve(site_dir) as server:
        result = invcrawl("inventory", server.url + path, "--max-inflated-mb", "1", cwd=tmp_path)
    assert_one_line_error(result, 1, fragment)


def test_unreachable_site(tmp_path: Path) -> None:
    result = invcrawl("inventory", f"http://127.0.0.1:{free_port()}/", cwd=tmp_path)
    assert_one_line_error(result, 1, "connection refused")


def test_missing_local_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = invcrawl("crawl", str(tmp_path / "nope"), cwd=tmp_path)
    assert_one_line_error(result, 2, "no such file or directory")
    # with a crawl id too (it once reached the producer, whose consumer was respawned
    # without end while the other consumer waited for the crawl forever)
    result = invcrawl("crawl", str(tmp_path / "nope"), "--crawl-id", "x", cwd=tmp_path, timeout=60)
    assert_one_line_error(result, 2, "no such file or directory")


def test_produce_every_is_a_usage_error_with_consume_or_a_bad_duration(tmp_path: Path) -> None:
    site = f"http://127.0.0.1:{free_port()}/"
    result = invcrawl("produce", site, "--every", "1h", "--consume", cwd=tmp_path)
    assert_one_line_error(result, 2, "--every and --consume do not go together")
    result = invcrawl("produce", site, "--every", "soon", cwd=tmp_path)
    assert result.code == 2 and "expected a duration" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_redis_url_is_a_usage_error(site_dir: Path, tmp_path: Path) -> None:
    result = invcrawl("produce", str(site_dir / "empty"), "--redis", "mysql://x", cwd=tmp_path)
    assert result.code == 2 and "invalid Redis URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_redis_refusing_connections(site_dir: Path, tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    for command in ("produce", "consume", "status", "crawl"):
        args = [command, "--redis", url, "--redis-wait", "0"]
        if command in ("produce", "crawl"):
            args.append(str(site_dir / "empty"))
        result = invcrawl(*args, cwd=tmp_path)
        assert_one_line_error(result, 1, "cannot connect to Redis")


def test_a_failed_production_is_recorded_with_nothing_to_consume(
    site_dir: Path, tmp_path: Path, redis_server: RedisServer, sync_redis
) -> None:  # type: ignore[no-untyped-def]
    """The producer's error reaches the user in one line and stays in Redis for `status`
    (and the `crawl` supervisor): the crawl is `failed`, has no task, and is not listed
    among the open crawls consumers serve."""
    result = invcrawl("produce", str(site_dir / "empty"), "--redis", redis_server.url, cwd=tmp_path)
    assert_one_line_error(result, 1, "0 entries")
    (crawl,) = sync_redis.smembers("invcrawl:crawls")
    meta = sync_redis.hgetall(f"invcrawl:{{{crawl}}}:meta")
    assert (meta["state"], meta["producer"]) == ("failed", "failed")
    assert "0 entries" in meta["error"] and meta["site"] == str(site_dir / "empty")
    assert sync_redis.zcard("invcrawl:active") == 0
    assert not sync_redis.exists(f"invcrawl:{{{crawl}}}:task", f"invcrawl:{{{crawl}}}:seen")
    status = invcrawl("status", "--redis", redis_server.url, "--json", cwd=tmp_path)
    (listed,) = json.loads(status.stdout)["crawls"]
    assert (listed["state"], listed["error"]) == ("failed", meta["error"])


def test_status_without_any_redis_explains_what_to_do(tmp_path: Path) -> None:
    result = invcrawl("status", cwd=tmp_path)
    assert_one_line_error(result, 1, "no --redis given")


def test_crawl_of_a_bad_inventory_shows_the_producers_error(site_dir: Path, tmp_path: Path) -> None:
    """`crawl` produces in its first consumer process: the producer's one line reaches
    the user, the other consumers are stopped, the exit code is 1."""
    with serve(site_dir) as server:
        result = invcrawl("crawl", server.url + "empty/", "--consumers", "3", cwd=tmp_path)
    assert_one_line_error(result, 1, "0 entries")


def test_produce_consume_without_fork_says_what_to_run(site_dir: Path, tmp_path: Path) -> None:
    """On a platform without os.fork() (the producer of `produce --consume` is a forked
    child), one line names the two commands to run instead."""
    program = (
        "import os, sys\n"
        "del os.fork\n"
        "from invcrawl.cli import main\n"
        "sys.argv = ['invcrawl', *sys.argv[1:]]\n"
        "sys.exit(main())\n"
    )
    with RedisServer(tmp_path / "redis") as server, serve(site_dir) as http:
        argv = [sys.executable, "-c", program, "produce", http.url + "html-inv/", "--consume"]
        result = run([*argv, "--redis", server.url], cwd=REPO, timeout=60)
    assert_one_line_error(result, 1, "run `invcrawl produce` and `invcrawl consume` instead")


def test_an_inventory_redirect_is_followed(tmp_path: Path) -> None:
    """http://host/ answers objects.inv with a redirect to its moved docs root: the crawl
    follows it and plans from the final URL."""
    from support.synthsite import generate

    entries = generate(tmp_path / "www" / "moved", pages=3, per_page=2)

    def fault(path: str) -> str | None:
        return "redirect:301:/moved/objects.inv" if path == "/objects.inv" else None

    with serve(tmp_path / "www", fault) as http, RedisServer(tmp_path / "redis") as server:
        out = tmp_path / "out.jsonl"
        result = invcrawl(
            "crawl", http.url, "--redis", server.url, "-o", str(out), "--consumers", "1",
            "--progress", "none", cwd=tmp_path,
        )  # fmt: skip
    assert result.code == 0, result.stderr[-2000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == entries
    assert all(i["url"].startswith(http.url + "moved/") for i in items)
    assert {i["status"] for i in items} <= {"ok", "skipped"}
