"""The shipped deployment on a real Docker engine: deploy/docker-compose.yml run as
docs/deploy.md says (the four Redis passwords, ``up -d --scale consumer=3``), over three
Sphinx sites this test writes and builds (so it knows every inventory entry), served by
a container on the compose network. Mid-crawl a consumer container is SIGKILLed, then
the ``redis`` service is SIGKILLed and started again (it loads its AOF under the ACL
users). At the end every crawl's export (the ``export`` tool service) holds every
inventory entry exactly once, the item streams hold no duplicate, the Redis log shows no
command refused while loading, and the dashboard and MCP services answer (the MCP one
``list_projects``, to the SDK's client, with its token).

No registry is needed: the base images come from deploy/base-images/build.sh (Debian
bookworm by debootstrap, cached). Only the compose project's own network and the host's
loopback (the dashboard's and the MCP server's published ports) are used. Skipped, with
the reason, without Docker; ``.ci/run`` starts dockerd and sets
INVCRAWL_TESTS_REQUIRE_DOCKER=1, which turns the skip into a failure. Every container,
volume and network of the (uniquely named) project is removed at the end, even on
failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import plan_crawl
from invcrawl.common.site import crawl_id_for
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import free_port
from support.docker import REQUIRE, Compose, base_images, unavailable

pytestmark = [pytest.mark.compose, pytest.mark.timeout(2400)]

SITES = ("a", "b", "c")
PAGES = 30  # per site
STALL = 180.0  # seconds without progress before a wait fails (not a total budget)
ROLES = ("producer", "consumer", "reader", "exporter")
Progress = tuple[int, int, list[str]]  # pages done, pages planned, the crawls' states


@pytest.fixture(scope="module")
def docker() -> None:
    reason = unavailable()
    if reason:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{REQUIRE}=1 but the compose suite cannot run: {reason}")
        pytest.skip(reason)


# -- three Sphinx sites -------------------------------------------------------------------


def write_sources(src: Path, name: str) -> None:
    """A Sphinx project: an index and PAGES module pages, each with a module, three
    functions and a class with two methods (py domain directives, no autodoc)."""
    src.mkdir(parents=True)
    (src / "conf.py").write_text(f"project = 'Site {name}'\nversion = release = '1.0'\n")
    pages = [f"mod{n:02d}" for n in range(PAGES)]
    toc = "\n".join(f"   {page}" for page in pages)
    (src / "index.rst").write_text(f"Site {name}\n=======\n\n.. toctree::\n\n{toc}\n")
    for n, page in enumerate(pages):
        module = f"pkg{name}.{page}"
        body = f"""\
        {module}
        {"=" * len(module)}

        .. py:module:: {module}

        Module {n} of site {name}.

        .. py:function:: first(x: int, y: int = {n}) -> int

           Add *x* and *y* (page {n}).

           :param x: the first number
           :param y: the second number
           :returns: the sum

        .. py:function:: second(name: str) -> str

           Greet *name*.

        .. py:function:: third() -> None

           Do nothing, on site {name}.

        .. py:class:: Thing{n}(size: int)

           A thing of a given size.

           .. py:method:: grow(by: int = 1) -> None

              Grow by *by*.

           .. py:method:: shrink() -> None

              Shrink by one.
        """
        (src / f"{page}.rst").write_text(textwrap.dedent(body))


def build_sites(root: Path) -> None:
    for name in SITES:
        write_sources(root / "src" / name, name)
        subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", "html", "-q",
             str(root / "src" / name), str(root / "docs" / name)],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip


def site_url(name: str) -> str:
    # Three host names (network aliases of one server container): politeness is per host.
    return f"http://docs-{name}:8000/{name}/"


def expected(root: Path, name: str) -> tuple[set[str], int]:
    """(every inventory key, the pages planned) of a site, from its built objects.inv."""
    inventory = parse_inventory((root / "docs" / name / "objects.inv").read_bytes())
    plan = plan_crawl(inventory, site_url(name) + "objects.inv")
    return {t.key for page in plan.pages for t in page.targets}, len(plan.pages)


# -- the deployment -----------------------------------------------------------------------


@pytest.fixture
def compose(tmp_path: Path, docker: None) -> Iterator[Compose]:
    images = base_images()
    build_sites(tmp_path)
    (tmp_path / "export").mkdir()
    # The test's docs server: one more service on the project's network.
    override = tmp_path / "docs-server.yml"
    override.write_text(
        json.dumps(
            {
                "version": "3.8",
                "services": {
                    "docs": {
                        "image": images["INVCRAWL_PYTHON_IMAGE"],
                        "command": "python3 -m http.server 8000 --directory /srv/docs",
                        "volumes": [f"{tmp_path / 'docs'}:/srv/docs:ro"],
                        "networks": {"default": {"aliases": [f"docs-{name}" for name in SITES]}},
                    }
                },
            }
        )
    )
    passwords = {role: secrets.token_hex(24) for role in ROLES}
    env = {
        **images,
        **{f"INVCRAWL_REDIS_{role.upper()}_PASSWORD": pw for role, pw in passwords.items()},
        "INVCRAWL_IMAGE": "invcrawl-ci/invcrawl:test",
        "INVCRAWL_SITES": " ".join(site_url(name) for name in SITES),
        # Slow enough per host that the faults land mid-crawl; leases short enough that
        # the killed consumer's pages come back soon.
        "INVCRAWL_HOST_DELAY": "0.4",
        "INVCRAWL_LEASE": "6",
        "INVCRAWL_EXPORT_DIR": str(tmp_path / "export"),
        "INVCRAWL_EXPORT_USER": f"{os.getuid()}:{os.getgid()}",
        "INVCRAWL_DASHBOARD_TOKEN": secrets.token_hex(16),
        "INVCRAWL_DASHBOARD_PORT": str(free_port()),
        "INVCRAWL_MCP_TOKEN": secrets.token_hex(16),
        "INVCRAWL_MCP_PORT": str(free_port()),
    }
    (tmp_path / "empty.env").write_text("")
    project = Compose(
        env=env, extra_files=[override], passwords=passwords, env_file=tmp_path / "empty.env"
    )
    try:
        yield project
    finally:
        # The services' logs stay beside the test's files (pytest keeps the last runs').
        logs = project.run("--profile", "tools", "logs", "--no-color", check=False)
        (tmp_path / "compose.log").write_text(logs.stdout + logs.stderr)
        project.down()


class Crawls:
    """Progress of the three crawls, read inside the redis container with redis-cli as
    the read-only user (Redis publishes no port)."""

    def __init__(self, compose: Compose) -> None:
        self.compose = compose
        self.ids = [crawl_id_for(site_url(name)) for name in SITES]
        self.password = compose.passwords["reader"]

    def cli(self, commands: list[str]) -> list[str] | None:
        done = self.compose.run(
            "exec", "-T", "redis", "redis-cli", "--no-auth-warning", "--user",
            "invcrawl-reader", "--pass", self.password,
            check=False, input_text="\n".join(commands) + "\n",
        )  # fmt: skip
        if done.returncode != 0:
            return None  # Redis down or loading: the caller waits
        return done.stdout.splitlines()

    def progress(self) -> Progress | None:
        """(pages done, pages planned, the states) over the three crawls."""
        commands = []
        for crawl in self.ids:
            keys = CrawlKeys(crawl)
            commands += [f"HGET {keys.stats} pages_done", f"HGET {keys.meta} tasks",
                         f"HGET {keys.meta} state"]  # fmt: skip
        out = self.cli(commands)
        if out is None or len(out) != len(commands):
            return None
        done = sum(int(v or 0) for v in out[0::3])
        tasks = sum(int(v or 0) for v in out[1::3])
        return done, tasks, out[2::3]

    def wait(self, until: str, condition: Callable[[Progress], object]) -> Progress:
        """Poll until ``condition(progress)``; fail when nothing moved for STALL s."""
        last, since = None, time.monotonic()
        while True:
            seen = self.progress()
            if seen is not None and condition(seen):
                return seen
            if seen != last:
                last, since = seen, time.monotonic()
            if time.monotonic() - since >= STALL:
                # what each side was doing when nothing moved, for the failure's message
                running = len(self.compose.containers("consumer"))
                pytest.fail(
                    f"no progress towards {until} for {STALL:.0f} s: {seen}; "
                    f"{running} consumer containers running\n"
                    f"-- consumer logs --\n{self.compose.logs('consumer')}\n"
                    f"-- redis logs --\n{self.compose.logs('redis')[-1500:]}"
                )
            time.sleep(0.5)


def test_compose_deployment(compose: Compose, tmp_path: Path) -> None:
    compose.run("build", timeout=1800)  # one image for every invcrawl service
    compose.run("up", "-d", "docs")
    compose.run("up", "-d", "--scale", "consumer=3")
    crawls = Crawls(compose)
    assert len(compose.containers("consumer")) == 3

    # Mid-crawl: SIGKILL a consumer container, then SIGKILL Redis and start it again.
    crawls.wait("a fifth of the pages", lambda p: p[1] and p[0] >= p[1] // 5)
    victim = compose.containers("consumer")[0]
    compose.docker_run("kill", "--signal", "KILL", victim)
    done, tasks, _ = crawls.wait("two fifths", lambda p: p[0] >= 2 * p[1] // 5)
    assert done < tasks, "the crawl ended before Redis could be killed mid-crawl"
    compose.run("kill", "-s", "SIGKILL", "redis")
    compose.run("start", "redis")
    crawls.wait("Redis back with its data", lambda p: p[0] >= done)
    assert compose.health("redis") in ("healthy", "starting")

    _, tasks, _ = crawls.wait("every crawl finished", lambda p: set(p[2]) == {"finished"})
    assert tasks == sum(expected(tmp_path, name)[1] for name in SITES)

    # Redis restarted from its AOF under the ACL users, refusing nothing.
    log = compose.run("logs", "--no-color", "redis").stdout
    assert log.count("Ready to accept connections") >= 2, log[-3000:]
    assert "NOPERM" not in log and "CRITICAL" not in log, log[-3000:]

    # Every crawl's export holds every inventory entry exactly once; no duplicate in the
    # stream either (one entry per key: no refresh ran).
    for name, crawl in zip(SITES, crawls.ids, strict=True):
        compose.run("--profile", "tools", "run", "--rm", "-e", f"INVCRAWL_CRAWL_ID={crawl}",
                    "-e", f"INVCRAWL_OUTPUT={crawl}.jsonl", "export")  # fmt: skip
        lines = (tmp_path / "export" / f"{crawl}.jsonl").read_text().splitlines()
        items = [json.loads(line) for line in lines]
        counts = Counter(item["key"] for item in items)
        keys, _ = expected(tmp_path, name)
        assert set(counts) == keys, (name, keys ^ set(counts))
        assert max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
        assert {item["status"] for item in items} <= {"ok", "skipped"}, name
        (length,) = crawls.cli([f"XLEN {CrawlKeys(crawl).items}"]) or ["?"]
        assert int(length) == len(keys), (name, length)

    # The dashboard service answers, as the read-only user, with the token.
    compose.run("--profile", "tools", "up", "-d", "dashboard")
    port = compose.env["INVCRAWL_DASHBOARD_PORT"]
    token = compose.env["INVCRAWL_DASHBOARD_TOKEN"]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"Bearer {token}"}
    )
    status = None
    for _ in range(240):  # its start-up, not a budget: each try fails fast
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                status = json.loads(answer.read())
                break
        except OSError:
            assert compose.containers("dashboard"), "the dashboard container exited"
            time.sleep(0.5)
    assert status is not None, "the dashboard never answered:\n" + compose.logs("dashboard")
    shown = {c["crawl_id"]: c["state"] for c in status["crawls"]}
    assert shown == dict.fromkeys(crawls.ids, "finished")

    # The MCP service answers list_projects (the SDK's client), as the read-only user,
    # with its token; without it, 401.
    compose.run("--profile", "tools", "up", "-d", "mcp")
    url = f"http://127.0.0.1:{compose.env['INVCRAWL_MCP_PORT']}/mcp"
    listed = None
    for _ in range(240):  # its start-up, not a budget: each try fails fast
        try:
            listed = asyncio.run(mcp_projects(url, compose.env["INVCRAWL_MCP_TOKEN"]))
            break
        except Exception:  # connection refused while it starts (wrapped by the SDK)
            assert compose.containers("mcp"), "the mcp container exited"
            time.sleep(0.5)
    assert listed is not None, "the MCP server never answered:\n" + compose.logs("mcp")
    crawled = {v["crawl_id"]: v["state"] for p in listed["projects"] for v in p["versions"]}
    assert crawled == dict.fromkeys(crawls.ids, "finished")
    anonymous = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert anonymous.status_code == 401


async def mcp_projects(url: str, token: str) -> dict[str, Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool("list_projects", {})
    assert not result.is_error and result.structured_content, result.content
    return result.structured_content
