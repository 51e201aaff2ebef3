"""The README's exit codes, command by command, as a user's shell sees them: usage errors
exit 2 in one line; SIGINT ends any command with 130 and SIGTERM with 143, after it
stopped cleanly (the embedded Redis stopped, nothing half-written); -q leaves only
errors on the terminal, -v adds log records; crawl --json prints one JSON summary."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from invcrawl.common.settings.commands import COMMANDS
from invcrawl.localredis.server import free_port
from support.cli import clean_env, invcrawl
from support.crawl import build_site, wait_for
from support.httpserver import serve

pytestmark = pytest.mark.e2e

SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def args_of(command: str, site: Path, redis: str) -> list[str]:
    """A valid command line of ``command`` that has to wait for ``redis``."""
    extra = {
        "crawl": [str(site)],
        "produce": [str(site)],
        "dlq": ["list"],
        "reshard": ["--slots", "4"],
        "forget": ["some-crawl", "--yes"],
        "diff": ["lib@1.0", "lib@2.0"],
        "history": ["py:function:lib.f"],
        "search": ["Session"],
        "show": ["py:function:lib.f"],
        "inventory": [],
    }.get(command, [])
    return [command, *extra, "--redis", redis, "--redis-wait", "600"]


IGNORE_AND_EXEC = (
    "import os, signal, sys\n"
    "for number in sys.argv[1].split(','):\n"
    "    signal.signal(int(number), signal.SIG_IGN)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


class Running:
    """A command started in the background, its output (stdout and stderr) in a file."""

    def __init__(
        self, argv: list[str], cwd: Path, name: str, ignored: tuple[int, ...] = ()
    ) -> None:
        """``ignored``: signals the command starts with ignored (as under ``nohup``)."""
        self.err = cwd / f"{name}.err"
        command = [sys.executable, "-m", "invcrawl", *argv]
        if ignored:  # (an ignored signal stays ignored through exec, as nohup relies on)
            numbers = ",".join(str(int(signum)) for signum in ignored)
            command = [sys.executable, "-c", IGNORE_AND_EXEC, numbers, *command]
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(command, cwd=cwd, env=clean_env(), stdout=err, stderr=err)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait_for_line(self, fragment: str) -> None:
        wait_for(
            lambda: fragment in self.stderr() or self.proc.poll() is not None,
            60,
            f"'{fragment}'",
            diagnose=self.stderr,
        )
        assert self.proc.poll() is None, self.stderr()

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        try:
            return self.proc.wait(60)
        finally:
            self.proc.kill()


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(tmp_path / "site", pages=3).root


@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("command", [c.name for c in COMMANDS if c.redis and c.name != "redis"])
def test_every_command_stopped_by_a_signal_exits_128_plus_it(
    command: str, signum: int, site: Path, tmp_path: Path
) -> None:
    """Each command with Redis, stopped while it waits for Redis (it has started, parsed
    its flags and installed what it needs): 130 for SIGINT, 143 for SIGTERM."""
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    running = Running(args_of(command, site, unreachable), tmp_path, command)
    running.wait_for_line("waiting for Redis at")
    code = running.stop(signum)
    assert code == SIGNALS[signum], running.stderr()
    assert "Traceback" not in running.stderr()


@pytest.mark.parametrize("signum", [*SIGNALS, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_the_embedded_redis_command_stops_with_128_plus_the_signal(
    signum: int, tmp_path: Path
) -> None:
    """`invcrawl redis` (which takes no --redis: it runs the data dir's own server), held
    until stopped: SIGINT 130, SIGTERM 143, SIGHUP 129."""
    running = Running(["redis", "--data-dir", str(tmp_path / "data")], tmp_path, "redis")
    running.wait_for_line("runs on 127.0.0.1")
    code = running.stop(signum)
    assert code == 128 + signum, running.stderr()
    assert "Traceback" not in running.stderr()


@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_inventory_stopped_by_a_signal(signum: int, tmp_path: Path) -> None:
    """The one command without Redis, stopped while its inventory download hangs
    (Scrapy's graceful stop records the signal)."""
    with serve(tmp_path, lambda path: "hang", hang_seconds=2) as http:
        running = Running(["inventory", http.url], tmp_path, "inventory")
        wait_for(lambda: http.log, 60, "the inventory request", diagnose=running.stderr)
        time.sleep(0.5)  # Scrapy's handlers are in place one loop turn after start-up
        code = running.stop(signum)
    assert code == SIGNALS[signum], running.stderr()
    assert "Traceback" not in running.stderr()


@pytest.fixture
def crawled(site: Path, tmp_path: Path, redis_url: str) -> Iterator[str]:
    result = invcrawl("crawl", str(site), "--redis", redis_url, "--crawl-id", "c1", cwd=tmp_path)
    assert result.code == 0, result.stderr
    yield redis_url


@pytest.mark.parametrize(
    ("argv", "ready"),
    [
        (["status", "--watch", "--crawl-id", "open"], "crawl open  ["),
        (["export", "--follow", "-o", "out.jsonl"], {"xreadgroup"}),
        (["changes", "--follow"], {"xread"}),
        (["consume"], set()),  # (any command: it has started and reached Redis)
        (["dashboard", "--port", "0"], "invcrawl dashboard: http"),
    ],
    ids=["status-watch", "export-follow", "changes-follow", "consume", "dashboard"],
)
@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_long_running_commands_stop_cleanly_with_128_plus_the_signal(
    argv: list[str], ready: str | set[str], signum: int, crawled: str, tmp_path: Path
) -> None:
    """What runs until stopped (a crawl kept open so that --watch keeps watching), once it
    is under way: the line it prints, or the Redis command it waits in (CLIENT LIST)."""
    import redis

    r = redis.Redis.from_url(crawled, decode_responses=True)
    r.hset("invcrawl:{open}:meta", mapping={"state": "running", "slots": 1, "tasks": 1})
    r.sadd("invcrawl:crawls", "open")
    running = Running([*argv, "--redis", crawled], tmp_path, argv[0])
    if isinstance(ready, str):
        running.wait_for_line(ready)
    else:
        me = r.client_id()

        def under_way() -> bool:
            others = [c["cmd"] for c in r.client_list() if int(c["id"]) != me]
            return any(cmd in ready or not ready for cmd in others if cmd != "client")

        wait_for(
            lambda: under_way() or running.proc.poll() is not None,
            60,
            f"{argv[0]} under way",
            diagnose=running.stderr,
        )
        assert running.proc.poll() is None, running.stderr()
    r.close()
    code = running.stop(signum)
    assert code == SIGNALS[signum], running.stderr()
    assert "Traceback" not in running.stderr()
    if argv[0] == "changes":
        assert "resume with --since c1=" in running.stderr()  # the cursor is still given


def test_usage_errors_exit_2(site: Path, tmp_path: Path, crawled: str) -> None:
    """The cases the issue lists, and the other combinations that cannot work."""
    other = build_site(tmp_path / "other", pages=2).root
    cases = [
        (["crawl", str(site), str(other), "-o", "both.jsonl"], "-o names one output file"),
        (["dlq", "redrive", "--redis", crawled], "dlq redrive needs TASK_ID... or --all"),
        (["reshard", "--redis", crawled], "reshard needs --slots"),
        (["crawl", str(site), "--consumers", "abc"], "--consumers: expected an integer"),
        (["forget", "c1", "--redis", crawled], "confirm with --yes"),
        (["crawl", str(site), "--json", "-o", "-"], "--json prints the summary"),
        (["status", "--redis", crawled, "--crawl-id", "nope"], "no crawl nope"),
    ]
    for argv, fragment in cases:
        result = invcrawl(*argv, cwd=tmp_path)
        assert result.code == 2, (argv, result.stderr)
        assert len(result.error_lines) == 1 and fragment in result.error_lines[0], result.stderr
        assert "Traceback" not in result.stderr
    # Two crawls and a command that acts on one: pick one, a usage error.
    assert invcrawl("crawl", str(other), "--redis", crawled, cwd=tmp_path).code == 0
    result = invcrawl("reshard", "--slots", "2", "--redis", crawled, cwd=tmp_path)
    assert result.code == 2 and "pick one with --crawl-id" in result.stderr


def test_quiet_verbose_and_crawl_json(site: Path, tmp_path: Path, redis_url: str) -> None:
    result = invcrawl(
        "crawl", str(site), "--redis", redis_url, "--crawl-id", "q", "-q", "--json", cwd=tmp_path
    )
    assert result.code == 0 and result.stderr == "", result.stderr
    (line,) = result.stdout.splitlines()  # one JSON document, nothing else
    summary = json.loads(line)
    (crawl,) = summary["crawls"]
    assert crawl["crawl_id"] == "q" and crawl["state"] == "finished"
    assert crawl["written"] == crawl["entries"] == crawl["items"]["total"] > 0
    assert crawl["pages"]["done"] == crawl["pages"]["total"] > 0
    assert Path(tmp_path / crawl["output"]).is_file() and summary["exit_code"] == 0
    assert summary["seconds"] > 0
    # Without -q the summary is on stderr as before; stdout stays the JSON alone.
    again = invcrawl(
        "crawl", str(site), "--redis", redis_url, "--crawl-id", "q", "--json", cwd=tmp_path
    )
    assert "crawl q finished" in again.stderr and json.loads(again.stdout)["crawls"]
    quiet = invcrawl("export", "--redis", redis_url, "-o", "x.jsonl", "-q", cwd=tmp_path)
    assert quiet.code == 0 and quiet.stderr == ""
    loud = invcrawl("export", "--redis", redis_url, "-o", "x.jsonl", cwd=tmp_path)
    assert "items written to x.jsonl" in loud.stderr
    # -v: the consumer's Scrapy log records from INFO up on the terminal.
    verbose = invcrawl(
        "consume", "--redis", redis_url, "--crawl-id", "q", "--burst", "-v", cwd=tmp_path
    )
    assert verbose.code == 0 and "INFO" in verbose.stderr, verbose.stderr
    quiet = invcrawl(
        "consume", "--redis", redis_url, "--crawl-id", "q", "--burst", "-q", cwd=tmp_path
    )
    assert quiet.code == 0 and quiet.stderr == "", quiet.stderr


def test_version_from_the_installed_program(tmp_path: Path) -> None:
    result = invcrawl("--version", cwd=tmp_path)
    assert result.code == 0 and result.stdout.startswith("invcrawl ")


def test_output_fits_the_terminal_and_is_not_cut_when_piped(tmp_path: Path, redis_url: str) -> None:
    """`status` in a 60-column terminal (a pseudo-terminal) fits it; piped, the long
    crawl id and site are whole."""
    import pty

    long_id = "a-crawl-id-long-enough-to-be-cut-" + "x" * 40
    site = build_site(tmp_path / "site", pages=2).root
    result = invcrawl("crawl", str(site), "--redis", redis_url, "--crawl-id", long_id, cwd=tmp_path)
    assert result.code == 0, result.stderr
    piped = invcrawl("status", "--redis", redis_url, cwd=tmp_path)
    assert long_id in piped.stdout
    detail = invcrawl("status", "--redis", redis_url, "--crawl-id", long_id, cwd=tmp_path)
    assert f"crawl {long_id}  [finished]" in detail.stdout and str(site) in detail.stdout
    for columns in ("60", "130"):
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "invcrawl", "status", "--redis", redis_url],
            cwd=tmp_path,
            env=clean_env(COLUMNS=columns),
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert proc.wait(60) == 0
        lines = out.decode().replace("\r\n", "\n").splitlines()
        assert lines and max(len(line) for line in lines) <= int(columns), lines
        if columns == "130":
            assert long_id in out.decode()
        else:
            assert long_id not in out.decode() and long_id[:10] in out.decode()


@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_a_crawl_stopped_mid_way_exits_128_plus_the_signal(
    signum: int, tmp_path: Path, redis_url: str
) -> None:
    """`crawl` stops its consumers (they finish or release their pages) and exits 130 or
    143; run again, it resumes."""
    import redis

    site = build_site(tmp_path / "slow", pages=30).root

    def slow(path: str) -> str | None:
        return "delay:500" if path.startswith("/api/") else None

    r = redis.Redis.from_url(redis_url, decode_responses=True)
    with serve(site, slow) as http:
        argv = ["crawl", http.url, "--redis", redis_url, "--crawl-id", "mid", "--consumers", "2"]
        running = Running(argv, tmp_path, "crawl")
        wait_for(
            lambda: int(r.hget("invcrawl:{mid}:stats", "pages_done") or 0) > 0,
            120,
            "the first pages",
            diagnose=running.stderr,
        )
        code = running.stop(signum)
        assert code == SIGNALS[signum], running.stderr()
        assert "interrupted: run the same command again to resume" in running.stderr()
        assert r.hlen("invcrawl:{mid}:lease") == 0  # finished or released, none left held
        assert r.hget("invcrawl:{mid}:meta", "state") != "finished"
    r.close()


def test_a_metrics_port_in_use_is_one_line(tmp_path: Path, crawled: str) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = invcrawl("consume", "--redis", crawled, "--metrics-port", port, cwd=tmp_path)
    assert result.code == 1 and len(result.error_lines) == 1, result.stderr
    assert f"cannot serve metrics on 127.0.0.1:{port}" in result.error_lines[0]


@pytest.mark.parametrize("ignored", [signal.SIGHUP, signal.SIGINT], ids=["nohup", "background"])
@pytest.mark.parametrize("command", ["crawl --every", "redis"])
def test_a_signal_ignored_at_start_stays_ignored(
    command: str, ignored: int, site: Path, tmp_path: Path
) -> None:
    """`nohup invcrawl ...` must outlive its terminal (SIGHUP ignored), and a background
    job of a script ignores SIGINT: a command started so leaves that signal ignored where
    it installs its own handlers (a crawl waiting for its next round, the embedded Redis
    held), and still stops on SIGTERM with 143 (the first signal it acted on; 129 or 130
    had it acted on the ignored one sent just before)."""
    data = str(tmp_path / "data")
    if command == "redis":
        argv, line = ["redis", "--data-dir", data], "runs on 127.0.0.1"
    else:
        argv = ["crawl", str(site), "--every", "1h", "--data-dir", data, "-o", "-"]
        line = "next refresh in"
    running = Running(argv, tmp_path, command.split(maxsplit=1)[0], ignored=(ignored,))
    running.wait_for_line(line)
    running.proc.send_signal(ignored)
    code = running.stop(signal.SIGTERM)
    assert code == 143, running.stderr()
    assert "Traceback" not in running.stderr()


@pytest.mark.parametrize("signum", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_the_command_starts_ends_it_cleanly(
    signum: int, crawled: str, tmp_path: Path
) -> None:
    """Stopped while it is still importing (the moment its first extension module is
    mapped: seconds on a loaded machine), a command ends as one stopped at work does:
    128 + the signal, no traceback."""
    running = Running(["changes", "--follow", "--redis", crawled], tmp_path, "starting")
    proc = Path(f"/proc/{running.proc.pid}")

    def importing() -> bool:
        # The child of the fork is the test's own process until it executes Python:
        # its maps list the test's extension modules, and a signal then is not one the
        # command could see. So: the command line is invcrawl's, the start-up's SIGTERM
        # handler stands (invcrawl/__main__.py: caught, in /proc's SigCgt mask), and an
        # extension module is mapped (its imports are under way).
        try:
            if b"invcrawl" not in (proc / "cmdline").read_bytes():
                return False
            caught = re.search(r"^SigCgt:\s*([0-9a-f]+)", (proc / "status").read_text(), re.M)
            if not caught or not int(caught[1], 16) >> (signal.SIGTERM - 1) & 1:
                return False
            return ".cpython-" in (proc / "maps").read_text()
        except OSError:
            return running.proc.poll() is not None

    wait_for(importing, 60, "the first extension module", diagnose=running.stderr)
    code = running.stop(signum)
    assert code == SIGNALS[signum], running.stderr()
    assert "Traceback" not in running.stderr()
