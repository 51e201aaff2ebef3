"""What a careless user can do to a run: secrets in URLs, unwritable outputs, a closed
pipe, a full disk, Redis still starting. Each ends in one line (or quietly), never a
traceback, with Redis left as the table in docs/deploy.md ("Bad inputs") says."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import RedisServer, free_port
from support.cli import Result, clean_env, invcrawl
from support.crawl import Throttle, build_site, wait_for
from support.datahome import user_data_dir
from support.httpserver import serve
from support.redisproc import LoggedRedisServer

pytestmark = pytest.mark.e2e


def one_line(result: Result, code: int, fragment: str) -> str:
    assert result.code == code, (result.code, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert len(result.error_lines) == 1, result.stderr
    assert fragment in result.error_lines[0], result.error_lines[0]
    return result.error_lines[0]


def test_redis_password_is_masked_everywhere(tmp_path: Path) -> None:
    url = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"
    for args in (
        ["status", "--redis", url, "--redis-wait", "0"],
        ["status", "--redis", url, "--redis-wait", "0.5"],  # the "waiting" line too
        ["status", "--redis", url.replace("/0", ":x/0")],  # an invalid port
        ["status", "--redis", "mysql://user:s3cret@h/0"],  # argparse's own error
    ):
        result = invcrawl(*args, cwd=tmp_path)
        assert result.code in (1, 2), result.stderr
        assert "s3cret" not in result.stderr + result.stdout, result.stderr
        assert "user:***@" in result.stderr and "Traceback" not in result.stderr
    env = clean_env(INVCRAWL_REDIS=url, INVCRAWL_REDIS_WAIT="0")
    result = invcrawl("status", cwd=tmp_path, env=env)
    assert "s3cret" not in result.stderr and "user:***@" in result.stderr


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        ("/no/such/dir/out.jsonl", "no such directory /no/such/dir"),
        ("{tmp}", "it is a directory"),
        ("/etc/hostname/out.jsonl", "is not a directory"),
        ("/proc/out.jsonl", "cannot write -o /proc/out.jsonl"),
    ],
)
def test_unwritable_output_is_refused_before_crawling(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis, output: str, fragment: str
) -> None:
    site = build_site(tmp_path / "site", pages=2)
    output = output.format(tmp=tmp_path)
    result = invcrawl("crawl", str(site.root), "-o", output, "--redis", redis_url, cwd=tmp_path)
    one_line(result, 2, fragment)
    assert sync_redis.dbsize() == 0  # nothing was produced, nothing crawled
    result = invcrawl("export", "-o", output, "--redis", redis_url, cwd=tmp_path)
    one_line(result, 2, fragment)


def test_unwritable_out_dir_is_refused(tmp_path: Path) -> None:
    site = build_site(tmp_path / "site", pages=2)
    result = invcrawl("crawl", str(site.root), "--out-dir", "/proc/nope", cwd=tmp_path)
    one_line(result, 2, "cannot create --out-dir /proc/nope")
    assert not user_data_dir().exists()  # no embedded Redis was even started


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    site = build_site(tmp_path / "site", pages=400, functions=3)
    for args in (["inventory", str(site.root)], ["inventory", str(site.root), "--json"]):
        proc = subprocess.run(
            f"{sys.executable} -m invcrawl {' '.join(args)} | head -c 10; "
            'echo " code=${PIPESTATUS[0]}"',
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(),
            timeout=60,
            check=False,
        )
        assert proc.stderr == "", proc.stderr
        code = int(proc.stdout.rsplit("code=", 1)[1])
        assert code in (0, 141), proc.stdout  # 0: it all fit in the pipe before head left


def test_a_closed_pipe_on_export(tmp_path: Path, redis_url: str) -> None:
    site = build_site(tmp_path / "site", pages=60, functions=3)
    done = invcrawl("crawl", str(site.root), "--redis", redis_url, "--consumers", "1", cwd=tmp_path)
    assert done.code == 0, done.stderr
    proc = subprocess.run(
        f"{sys.executable} -m invcrawl export --redis {redis_url} -o - | head -n 1 >/dev/null; "
        'echo "code=${PIPESTATUS[0]}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() in ("code=141", "code=0"), proc.stdout


def _limit_file_size(limit: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        # A write beyond `limit` bytes fails with EFBIG, as a full disk fails with ENOSPC
        # (SIGXFSZ ignored, so the write returns the error instead of killing).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_keeps_the_crawl_and_a_rerun_completes_the_file(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis
) -> None:
    site = build_site(tmp_path / "site", pages=30, functions=3)
    out = tmp_path / "out" / "items.jsonl"
    out.parent.mkdir()
    argv = [sys.executable, "-m", "invcrawl", "crawl", str(site.root), "-o", str(out)]
    argv += ["--redis", redis_url, "--consumers", "1"]
    proc = subprocess.run(
        argv,
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_file_size(16 * 1024),
        check=False,
    )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    line = one_line(result, 1, f"cannot write {out}")
    assert "run the same command again" in line
    assert not out.exists()
    assert not out.with_name(out.name + ".part").exists()  # removed: it freed the space
    (crawl,) = sync_redis.smembers("invcrawl:crawls")
    assert sync_redis.hget(f"invcrawl:{{{crawl}}}:meta", "state") in ("running", "finished")
    again = invcrawl(*argv[3:], cwd=tmp_path)
    assert again.code == 0, again.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["key"] for r in rows} == site.keys and len(rows) == site.entries


def test_export_to_a_full_device(tmp_path: Path, redis_url: str) -> None:
    site = build_site(tmp_path / "site", pages=5)
    done = invcrawl("crawl", str(site.root), "--redis", redis_url, "--consumers", "1", cwd=tmp_path)
    assert done.code == 0, done.stderr
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "invcrawl", "export", "--redis", redis_url],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=clean_env(),
            timeout=60,
            check=False,
        )
    one_line(Result(proc.returncode, "", proc.stderr), 1, "no space left on device")


def test_commands_wait_for_a_redis_that_is_starting(tmp_path: Path) -> None:
    """Started before Redis, a consumer waits (saying so once) instead of exiting 1.

    Redis starts only once the command has said it is waiting: a slow start of the
    command on a loaded machine cannot make it miss the outage."""
    site = build_site(tmp_path / "site", pages=3)
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = RedisServer(tmp_path / "redis", port=port)
    producer = subprocess.Popen(
        [sys.executable, "-m", "invcrawl", "produce", str(site.root), "--redis", url],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert producer.stderr is not None
        first = ""
        while "waiting for Redis" not in first:
            line = producer.stderr.readline()
            assert line, f"the command ended without waiting for Redis: {first}"
            first += line
        server.start()
        _out, rest = producer.communicate(timeout=120)
        stderr = first + rest
        assert producer.returncode == 0, stderr
        assert stderr.count("waiting for Redis") == 1, stderr
        assert "Redis at " in stderr and "is up" in stderr
        consumed = invcrawl("consume", "--burst", "--redis", url, cwd=tmp_path)
        assert consumed.code == 0, consumed.stderr
        assert "waiting" not in consumed.stderr
    finally:
        if producer.poll() is None:
            producer.kill()
            producer.communicate()
        server.stop()
    result = invcrawl("consume", "--redis", url, "--redis-wait", "1.5", cwd=tmp_path)
    one_line(result, 1, "after waiting 1.5s")


def test_status_never_shows_a_password(tmp_path: Path) -> None:
    """`status` of a server that needs a password: the URL it shows is masked."""
    port = free_port()
    with LoggedRedisServer(tmp_path / "redis", port=port, extra=["--requirepass", "s3cret"]):
        url = f"redis://:s3cret@127.0.0.1:{port}/0"
        result = invcrawl("status", "--redis", url, cwd=tmp_path)
        assert "s3cret" not in result.stdout + result.stderr
        wrong = invcrawl("status", "--redis", url.replace("s3cret", "wrong"), cwd=tmp_path)
        line = one_line(wrong, 1, "cannot connect to Redis at redis://:***@127.0.0.1")
        assert "wrong" not in line.split("127.0.0.1")[0]


# -- outputs are regular files the user named -------------------------------------------------


def _node(tmp_path: Path, kind: str) -> Path:
    node = tmp_path / f"{kind}.jsonl"
    if kind == "fifo":
        os.mkfifo(node)
    elif kind == "device":  # a /dev/null of our own: (1, 3)
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        (tmp_path / "elsewhere.jsonl").write_text("precious\n")
        node.symlink_to(tmp_path / "elsewhere.jsonl")
    return node


@pytest.mark.parametrize("kind", ["fifo", "device", "symlink"])
def test_an_output_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis, kind: str
) -> None:
    """Renaming the finished file over a FIFO, a device or a symlink would replace it:
    refused before any work (exit 2), the node left as it was."""
    site = build_site(tmp_path / "site", pages=2)
    node = _node(tmp_path, kind)
    before = node.lstat()
    for args in (["crawl", str(site.root), "-o", str(node)], ["export", "-o", str(node)]):
        result = invcrawl(*args, "--redis", redis_url, cwd=tmp_path)
        kind_word = "symbolic link" if kind == "symlink" else kind.replace("fifo", "FIFO")
        one_line(result, 2, kind_word)
        assert sync_redis.dbsize() == 0
    after = node.lstat()
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    if kind == "symlink":
        assert (tmp_path / "elsewhere.jsonl").read_text() == "precious\n"
    # in --out-dir: the crawl's own file there, or the folder itself as a symlink
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    node.rename(out_dir / f"{crawl_id_for(str(site.root))}.jsonl")
    result = invcrawl(
        "crawl", str(site.root), "--out-dir", str(out_dir), "--redis", redis_url, cwd=tmp_path
    )
    one_line(result, 2, "--out-dir")
    (tmp_path / "linked").symlink_to(out_dir)
    result = invcrawl(
        "crawl",
        str(site.root),
        "--out-dir",
        str(tmp_path / "linked"),
        "--redis",
        redis_url,
        cwd=tmp_path,
    )
    one_line(result, 2, "symbolic link")
    assert sync_redis.dbsize() == 0


def test_dev_fd_1_is_standard_output(tmp_path: Path, redis_url: str) -> None:
    """`-o /dev/stdout` (or /dev/fd/1) is written in place, as `-o -`. (/dev/fd/1 here:
    run as root on a version without this, the test must not replace /dev/stdout.)"""
    site = build_site(tmp_path / "site", pages=3)
    result = invcrawl(
        "crawl", str(site.root), "-o", "/dev/fd/1", "--redis", redis_url, cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    keys = {json.loads(line)["key"] for line in result.stdout.splitlines()}
    assert keys == site.keys
    assert f"{site.entries} items written to /dev/fd/1" in result.stderr


def test_a_symlink_planted_at_the_part_file_is_not_followed(tmp_path: Path, redis_url: str) -> None:
    site = build_site(tmp_path / "site", pages=3)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.part").symlink_to(victim)
    result = invcrawl("crawl", str(site.root), "-o", str(out), "--redis", redis_url, cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert {json.loads(line)["key"] for line in out.read_text().splitlines()} == site.keys
    assert not (tmp_path / "out.jsonl.part").exists()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_part_file_lost_mid_crawl_is_reported(
    tmp_path: Path, redis_url: str, sync_redis: redis.Redis, how: str
) -> None:
    """Someone removes (or replaces) OUT.part while the crawl writes it: one line
    saying so (not "free some space"), exit 1, nothing moved over OUT; the crawl is
    kept, and the same command again writes the complete file."""
    site = build_site(tmp_path / "site", pages=30)
    out = tmp_path / "out.jsonl"
    part = tmp_path / "out.jsonl.part"
    throttle = Throttle(delay=0.2)
    with serve(site.root, throttle) as http:
        argv = ["crawl", http.url, "-o", str(out), "--redis", redis_url, "--consumers", "1"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", *argv],
            cwd=tmp_path,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for(
                lambda: (
                    part.exists()
                    and any(sync_redis.xlen(k) for k in sync_redis.scan_iter("invcrawl:*:items"))
                ),
                60,
                "the first items",
            )
            if how == "removed":
                part.unlink()
            else:
                (tmp_path / "other").write_text("not the crawl's\n")
                os.replace(tmp_path / "other", part)
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
        result = Result(proc.returncode, stdout, stderr)
        line = one_line(result, 1, f"{part} was {how} while it was written")
        assert "free some space" not in line and "run the same command again" in line
        assert not out.exists()
        throttle.delay = 0
        again = invcrawl(*argv, cwd=tmp_path)
    assert again.code == 0, again.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["key"] for r in rows} == site.keys and len(rows) == site.entries
