"""The embedded Redis as a shared local service (localredis/embedded.py), with real
processes and real signals: commands run in one directory without ``--redis`` share
one server, which stops only after the last of them has gone, whatever ended it; the
server takes only its owner's password, which shows on no command line and in no
output; ``crawl`` works from a folder holding modules named like the project's; each
site's file is final as soon as its crawl is, and an interrupted run keeps it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from invcrawl.common.site import crawl_id_for
from invcrawl.localredis.server import free_port
from support.cli import clean_env
from support.crawl import Proc, Site, Throttle, build_site, wait_for
from support.embedded import (
    client,
    password,
    raw_client,
    redis_pid,
    server_processes,
    wait_stopped,
)
from support.httpserver import StaticServer, serve

pytestmark = pytest.mark.e2e


@dataclass
class Sites:
    """Two sites on one HTTP server: ``small`` (fast) and ``slow`` (every page waits
    ``throttle.delay`` seconds: set it to 0 to let the crawl finish)."""

    http: StaticServer
    small: Site
    slow: Site
    throttle: Throttle

    def url(self, site: Site) -> str:
        return f"{self.http.url}{site.root.name}/"

    def crawl_id(self, site: Site) -> str:
        return crawl_id_for(self.url(site))


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[Sites]:
    root = tmp_path / "www"
    small = build_site(root / "small", pages=6)
    slow = build_site(root / "slow", pages=30)
    throttle = Throttle(delay=0.1, only=lambda path: path.startswith("/slow/") and ".html" in path)
    with serve(root, throttle) as http:
        yield Sites(http, small, slow, throttle)


class Cli:
    """``invcrawl`` subprocesses in one working directory, on one per-user data dir (so one
    embedded Redis): an XDG_DATA_HOME of its own, as a module's fixture outlives a test's."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.data_home = work.parent / "xdg-data"
        self.data = self.data_home / "invcrawl"
        self.procs: list[Proc] = []
        work.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, *args: str) -> Proc:
        # the installed entry point, as a user runs it (`python -m` would import an
        # invcrawl.py of the working directory: the user's choice, not a child's)
        argv = [str(Path(sys.executable).parent / "invcrawl"), *args]
        env = clean_env(XDG_DATA_HOME=str(self.data_home))
        proc = Proc(name, argv, self.work / f"{name}.log", env, self.work)
        self.procs.append(proc)
        return proc

    def run(self, name: str, *args: str, timeout: float = 180) -> tuple[int, str]:
        proc = self.start(name, *args)
        code = proc.wait(timeout)
        return code, proc.output()

    def close(self) -> None:
        for proc in self.procs:
            if proc.alive:
                proc.close()


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    runner = Cli(tmp_path / "work")
    try:
        yield runner
    finally:
        runner.close()
        if runner.data.exists():
            wait_stopped(runner.data)


def items(path: Path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


def finished(proc: Proc, code: int = 0, timeout: float = 180) -> str:
    assert proc.wait(timeout) == code, proc.tail()
    out = proc.output()
    assert "Traceback" not in out, out
    return out


def crawl_started(cli: Cli, crawl_id: str, pages: int = 1) -> None:
    """Wait until the crawl has ``pages`` pages done (read from its Redis)."""

    def done() -> bool:
        try:
            value = client(cli.data).hget(f"invcrawl:{{{crawl_id}}}:stats", "pages_done")
        except Exception:
            return False
        return int(value or 0) >= pages

    wait_for(done, 120, f"crawl {crawl_id} to have {pages} page(s) done", interval=0.1)


# -- shared by commands started in any order -------------------------------------------------


@pytest.mark.parametrize("gap", [0.5, 1.0, 1.5])
def test_two_crawls_in_one_directory(sites: Sites, cli: Cli, gap: float) -> None:
    """The second crawl of the same site, started while the first one starts up or
    runs: both end with exit 0 and the complete file, and the server stops after them."""
    url = sites.url(sites.slow)
    first = cli.start("first", "crawl", url, "-o", "out.jsonl", "--consumers", "2")
    time.sleep(gap)  # (the order of events under test, not a bound)
    second = cli.start("second", "crawl", url, "-o", "out.jsonl", "--consumers", "2")
    for proc in (first, second):
        out = finished(proc)
        assert f"{sites.slow.entries} items written to out.jsonl" in out
    keys = items(cli.work / "out.jsonl")
    assert sorted(keys) == sorted(sites.slow.keys)
    assert not list(cli.work.glob("out.jsonl.part*"))
    wait_stopped(cli.data)


def test_status_and_status_watch_during_a_crawl(sites: Sites, cli: Cli) -> None:
    """`status` run during a two-site crawl, and `status --watch` started with it,
    share its Redis: the crawl completes, the watch ends with it; no process shows the
    Redis password on its command line, and no output prints it."""
    crawl = cli.start(
        "crawl", "crawl", sites.url(sites.small), sites.url(sites.slow), "--consumers", "2"
    )
    wait_for((cli.data / "port").exists, 120, "the embedded Redis")
    crawl_started(cli, sites.crawl_id(sites.slow))
    watch = cli.start("watch", "status", "--watch")
    secret = password(cli.data)
    for round_ in range(3):
        code, out = cli.run(f"status-{round_}", "status")
        assert code == 0 and "Traceback" not in out, out
        for pid in server_processes(cli.data) + [p.pid for p in cli.procs if p.alive]:
            for child in [pid, *_descendants(pid)]:
                assert secret.encode() not in _cmdline(child), _cmdline(child)
    out = finished(crawl)
    assert "2 of 2 crawls finished" in out
    watched = finished(watch, timeout=60)  # settled: it ends by itself
    assert "finished" in watched
    for proc in cli.procs:
        assert secret not in proc.output()
    assert secret not in "".join(p.read_text() for p in (cli.data / "logs").rglob("*.log"))
    wait_stopped(cli.data)


def test_dashboard_and_crawls_in_any_order(sites: Sites, cli: Cli) -> None:
    """A dashboard started on the data of a finished crawl keeps serving while another
    crawl starts, shares and finishes on its Redis; the server stops when the dashboard
    is stopped."""
    code, out = cli.run("first", "crawl", sites.url(sites.small), "-o", "small.jsonl")
    assert code == 0, out
    port = free_port()
    dashboard = cli.start("dashboard", "dashboard", "--port", str(port))

    def api() -> dict[str, object] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5) as r:
                return json.loads(r.read())  # type: ignore[no-any-return]
        except OSError:
            return None

    wait_for(api, 60, "the dashboard to answer", interval=0.2)
    server = redis_pid(cli.data)
    second = cli.start("second", "crawl", sites.url(sites.slow), "-o", "slow.jsonl")
    finished(second)
    assert redis_pid(cli.data) == server  # one server all along
    assert sorted(items(cli.work / "slow.jsonl")) == sorted(sites.slow.keys)
    status = api()
    assert status is not None and len(json.dumps(status)) > 0
    assert dashboard.alive
    dashboard.signal(signal.SIGTERM)
    finished(dashboard, code=143, timeout=60)  # stopped gracefully by SIGTERM
    wait_stopped(cli.data)


# -- no signal leaves a server behind ---------------------------------------------------------

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL]
COMMANDS = {
    "crawl": ("crawl", "{slow}", "--crawl-id", "{name}", "-o", "{name}.jsonl", "--consumers", "2"),
    "export-follow": (
        "export",
        "--crawl-id",
        "done",
        "--follow",
        "-o",
        "{name}.jsonl",
        "--group",  # (each case reads the crawl from its start)
        "{name}",
    ),
    "changes-follow": ("changes", "--crawl-id", "done", "--follow", "-o", "{name}.jsonl"),
    "status-watch": ("status", "--watch"),
    "dashboard": ("dashboard", "--port", "{port}"),
}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sites, Cli]]:
    """One working directory for every signal case: a finished crawl (`done`) and one
    that never settles (`pending`: produced, no consumer, so `status --watch` keeps
    watching). Each case leaves the server stopped for the next."""
    tmp = tmp_path_factory.mktemp("signals")
    root = tmp / "www"
    small, slow = build_site(root / "small", pages=6), build_site(root / "slow", pages=30)
    throttle = Throttle(delay=0.1, only=lambda path: path.startswith("/slow/") and ".html" in path)
    with serve(root, throttle) as http:
        sites = Sites(http, small, slow, throttle)
        runner = Cli(tmp / "work")
        try:
            code, out = runner.run("done", "crawl", sites.url(small), "--crawl-id", "done")
            assert code == 0, out
            code, out = runner.run("pending", "produce", sites.url(slow), "--crawl-id", "pending")
            assert code == 0, out
            yield sites, runner
        finally:
            runner.close()
            wait_stopped(runner.data)


@pytest.mark.parametrize("signum", SIGNALS, ids=[s.name for s in SIGNALS])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_signal_leaves_redis_running(
    prepared: tuple[Sites, Cli], command: str, signum: signal.Signals
) -> None:
    sites, cli = prepared
    wait_stopped(cli.data)
    port = free_port()
    name = f"{command}-{signum.name}"
    args = [a.format(slow=sites.url(sites.slow), port=port, name=name) for a in COMMANDS[command]]
    # a crawl slow enough to be signalled mid-way: 30 pages, 4 at a time, 1 s each
    sites.throttle.delay = 1.0 if command == "crawl" else 0.1
    proc = cli.start(name, *args)
    try:
        wait_for((cli.data / "port").exists, 120, "the embedded Redis")
        _wait_working(cli, command, proc, name)
        proc.signal(signum)
        code = proc.wait(60)
    finally:
        cli.close()
    out = proc.output()
    assert "Traceback" not in out, out
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert code == 128 + signum, out  # a graceful stop, and the signal that asked for it
    wait_stopped(cli.data)
    # nothing of the crawl is left running either (its consumers stop with it)
    assert not _descendants(proc.pid)


def _wait_working(cli: Cli, command: str, proc: Proc, name: str) -> None:
    if command == "crawl":
        crawl_started(cli, name)
    elif command == "dashboard":
        wait_for(lambda: "invcrawl dashboard: http" in proc.output(), 60, "the dashboard")
    elif command == "status-watch":
        wait_for(lambda: "pending" in proc.output(), 60, "the first status")
    else:
        output = cli.work / f"{name}.jsonl"
        wait_for(lambda: output.exists() and output.stat().st_size > 0, 60, "the first items")
    assert proc.alive, proc.output()


def _descendants(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                child = int(entry.name)
                out += [child, *_descendants(child)]
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


# -- the working directory ----------------------------------------------------------------------


def test_a_crawl_from_a_folder_holding_project_module_names(sites: Sites, cli: Cli) -> None:
    """`crawl`'s children do not import from the working directory."""
    (cli.work / "common").mkdir()
    (cli.work / "common" / "__init__.py").write_text("raise SystemExit('not the project')\n")
    for name in ("producer.py", "consumer.py", "frontier.py", "invcrawl.py"):
        (cli.work / name).write_text("raise SystemExit('not the project')\n")
    proc = cli.start("crawl", "crawl", sites.url(sites.small), "-o", "out.jsonl")
    finished(proc, timeout=120)
    assert sorted(items(cli.work / "out.jsonl")) == sorted(sites.small.keys)


# -- finished output is kept --------------------------------------------------------------------


def test_a_finished_site_file_is_final_at_once_and_kept_on_interrupt(
    sites: Sites, cli: Cli
) -> None:
    """Two sites, one slow: the small site's file is in place (complete, fsynced, its
    `crawl-output` group moved) while the slow one still runs; SIGINT then keeps it
    and leaves no partial file; the same command again completes the other."""
    sites.throttle.delay = 2.0  # the slow site: 30 pages, 4 at a time: 15 s at least
    argv = ("crawl", sites.url(sites.small), sites.url(sites.slow), "--out-dir", "out")
    argv += ("--consumers", "2", "--retain-items", "exported")
    small_id, slow_id = sites.crawl_id(sites.small), sites.crawl_id(sites.slow)
    small_out, slow_out = (cli.work / "out" / f"{c}.jsonl" for c in (small_id, slow_id))
    proc = cli.start("crawl", *argv)
    wait_for(small_out.exists, 120, "the small site's file")
    assert proc.alive, proc.output()
    assert sorted(items(small_out)) == sorted(sites.small.keys)
    redis = client(cli.data)
    assert redis.hget(f"invcrawl:{{{slow_id}}}:meta", "state") != "finished"
    # the retention contract: the output group moved through the last item, once the
    # file was in place (the stream may be trimmed already)
    stream = f"invcrawl:{{{small_id}}}:items"
    groups = {g["name"]: g["last-delivered-id"] for g in redis.xinfo_groups(stream)}
    # (not decoded: the stream's last entry, in the reply, is a binary frame)
    last = raw_client(cli.data).xinfo_stream(stream)["last-generated-id"].decode()
    assert groups.get("crawl-output") == last
    slow_stream = f"invcrawl:{{{slow_id}}}:items"
    slow_groups = redis.xinfo_groups(slow_stream) if redis.exists(slow_stream) else []
    assert {g["last-delivered-id"] for g in slow_groups if g["name"] == "crawl-output"} <= {"0-0"}
    assert (cli.work / "out" / f"{slow_id}.jsonl.part").exists()
    proc.signal(signal.SIGINT)
    out = finished(proc, code=130, timeout=60)
    assert "interrupted" in out
    # what is kept, said exactly: the unfinished crawl's items are in Redis, not in a file
    assert f"crawl {slow_id} is not finished, the items so far are kept in Redis" in out
    assert sorted(items(small_out)) == sorted(sites.small.keys)  # kept
    assert not slow_out.exists()
    assert not list((cli.work / "out").glob("*.part*"))
    sites.throttle.delay = 0
    again = cli.start("again", *argv)
    finished(again)
    assert sorted(items(slow_out)) == sorted(sites.slow.keys)
    assert sorted(items(small_out)) == sorted(sites.small.keys)
    wait_stopped(cli.data)


def test_the_password_is_in_no_child_argv_or_environment(sites: Sites, cli: Cli) -> None:
    """The children of `crawl` join the embedded Redis themselves: neither their
    command lines nor their environments hold its password (or any INVCRAWL_REDIS)."""
    sites.throttle.delay = 0.5  # 30 pages, 4 at a time: the children live for seconds
    proc = cli.start("crawl", "crawl", sites.url(sites.slow), "-o", "out.jsonl", "--consumers", "2")
    crawl_started(cli, sites.crawl_id(sites.slow))
    secret = password(cli.data).encode()
    children = _descendants(proc.pid)
    assert len(children) >= 2
    for pid in children:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue  # (exited meanwhile)
        assert secret not in environ + _cmdline(pid)
        assert b"INVCRAWL_REDIS=" not in environ
    finished(proc)


# -- the redis-cli cookbook against the embedded Redis -------------------------------------------


def test_the_cookbook_works_against_the_embedded_redis(sites: Sites, cli: Cli) -> None:
    """docs/redis-keys.md as written: `invcrawl redis &` keeps the server up, the first
    block points redis-cli at it (port and password files), every other block runs
    without an error reply; Ctrl-C on `invcrawl redis` lets the server stop."""
    from test_operate import ERROR_REPLY, cookbook_blocks

    dead = "/small" + sites.small.url_path(1)
    sites.throttle.actions[dead] = "403"
    sites.throttle.only = lambda path: ".html" in path
    code, out = cli.run("crawl", "crawl", sites.url(sites.small), "--crawl-id", "cook")
    assert code == 3, out  # finished, one page dead-lettered: the dlq blocks show it
    wait_stopped(cli.data)
    holder = cli.start("redis", "redis")
    wait_for(lambda: "Ctrl-C to release it" in holder.output(), 60, "invcrawl redis")
    client(cli.data).xgroup_create("invcrawl:{cook}:items", "export", id="0")
    connect, setup, *recipes = cookbook_blocks()
    assert connect.startswith('D="${D:-'), connect
    # (the per-user data dir the block names: the test's XDG_DATA_HOME)
    env = {"PATH": os.environ["PATH"], "C": "", "LC_ALL": "C", "HOME": str(cli.work)}
    env["XDG_DATA_HOME"] = str(cli.data_home)
    outputs = []
    for block in recipes:
        proc = subprocess.run(
            ["sh", "-eu", "-c", connect + setup + block],
            env=env,
            cwd=cli.work,
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # XRANGE prints the items' binary zstd frames
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, f"{block}\n--- exit {proc.returncode}:\n{proc.stderr}"
        assert not ERROR_REPLY.search(proc.stdout), f"{block}\n--- error reply:\n{proc.stdout}"
        for refusal in ("NOAUTH", "Could not connect", "AUTH failed", "WRONGPASS"):
            assert refusal not in proc.stdout + proc.stderr, f"{block}\n{proc.stderr}"
        outputs.append(proc.stdout.removeprefix("crawl cook\n"))
    assert outputs[0].startswith("cook\n"), outputs[0]  # SMEMBERS: the setup found C
    assert sum(bool(o.strip()) for o in outputs) >= len(recipes) - 3, outputs
    holder.signal(signal.SIGINT)
    assert holder.wait(60) == 130, holder.output()
    wait_stopped(cli.data)
