"""The deployment, checked as far as a machine without a Docker engine allows.

* ``docker-compose config`` validates ``deploy/docker-compose.yml`` (Debian's
  docker-compose), with no variables set and with ``deploy/.env.example``.
* The compose file keeps its promises: official Redis image with AOF, noeviction, a
  healthcheck, a named volume and no published port; app services wait for a healthy
  Redis; consumers scale (no container name, no crawl id); tools under a profile; every
  variable is an ``INVCRAWL_*`` documented in docs/deploy.md's table.
* The Dockerfile: slim Python base, non-root user, ``invcrawl`` entry point, and its
  build step works on the build context that ``.dockerignore`` leaves (the package
  built from exactly those files holds the Lua scripts and the console script, and
  runs ``invcrawl --help``).
* A rehearsal: each service's exact command and environment (as ``docker-compose
  config`` resolves them) runs as a local process, Redis with the compose server
  arguments on a free port, and crawls a fixture site with 2 consumer replicas.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from invcrawl.common.settings.options import OPTIONS
from invcrawl.localredis.server import RedisServer
from invcrawl.selfcheck import PACKAGES
from support.crawl import (
    REPO,
    Harness,
    OwnerSampler,
    Proc,
    Throttle,
    build_site,
    check_accounting,
    dedupe_jsonl,
    fully_assigned,
    wait_for,
)
from support.httpserver import serve

pytestmark = pytest.mark.e2e

DEPLOY = REPO / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCS = REPO / "docs" / "deploy.md"
APP_SERVICES = ("producer", "consumer", "status", "export", "dashboard", "mcp")
OPTION_VARS = {o.env for o in OPTIONS}
# Variables of the compose file itself (images, Redis server, export mount).
COMPOSE_ONLY_VARS = {
    "INVCRAWL_IMAGE",
    "INVCRAWL_DASHBOARD_PORT",
    "INVCRAWL_REDIS_IMAGE",
    "INVCRAWL_PYTHON_IMAGE",
    "INVCRAWL_REDIS_MAXMEMORY",
    "INVCRAWL_EXPORT_DIR",
    "INVCRAWL_EXPORT_USER",
    "INVCRAWL_SITES_DIR",
    "INVCRAWL_REDIS_ADDRESS",
    "INVCRAWL_REDIS_PRODUCER_PASSWORD",
    "INVCRAWL_REDIS_CONSUMER_PASSWORD",
    "INVCRAWL_REDIS_READER_PASSWORD",
    "INVCRAWL_REDIS_EXPORTER_PASSWORD",
    "INVCRAWL_REDIS_ADMIN_PASSWORD",
}
CLUSTER_NODES = ("redis-node-1", "redis-node-2", "redis-node-3")
# The Redis users' passwords (required by the compose file) for these checks.
ROLES = {
    "producer": "producer",
    "consumer": "consumer",
    "status": "reader",
    "export": "exporter",
    "dashboard": "reader",
    "mcp": "reader",
}
PASSWORDS = {
    f"INVCRAWL_REDIS_{role.upper()}_PASSWORD": f"{role}-test-password-0123"
    for role in ROLES.values()
}
# What else the compose file requires (`${...:?}`): the token of the dashboard and of the
# consumers' metrics (without it every consumer exited at once and was restarted forever).
TOKEN = {"INVCRAWL_DASHBOARD_TOKEN": "dashboard-test-token-0123"}
REQUIRED = {**PASSWORDS, **TOKEN}
docker_compose = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(docker_compose is None, reason="docker-compose not installed")


def compose_config(
    env: dict[str, str] | None = None, *extra: str, passwords: bool = True
) -> dict[str, Any]:
    """``docker-compose config``: validates the file and resolves every variable (with
    the Redis users' passwords of :data:`PASSWORDS` unless ``passwords`` is false)."""
    assert docker_compose
    base = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
    if passwords and "--env-file" not in extra:
        base.update(REQUIRED)
    proc = subprocess.run(
        [docker_compose, "-f", str(COMPOSE), *extra, "config"],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    config: dict[str, Any] = yaml.safe_load(proc.stdout)
    return config


def raw_compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def compose_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Z0-9_]+)", COMPOSE.read_text()))


def documented_variables() -> set[str]:
    """Variables in the first column of docs/deploy.md's variable table."""
    return set(re.findall(r"^\| `(INVCRAWL_[A-Z0-9_]+)`", DOCS.read_text(), re.M))


# -- static checks --------------------------------------------------------------------------


@needs_compose
def test_compose_file_validates() -> None:
    config = compose_config()
    assert set(config["services"]) == {"redis", *APP_SERVICES, *CLUSTER_NODES, "redis-cluster-init"}
    # The example .env is valid too, and its values reach the services.
    example = compose_config({}, "--env-file", str(DEPLOY / ".env.example"))
    producer = example["services"]["producer"]["environment"]
    assert producer["INVCRAWL_SITES"].startswith("https://")
    assert producer["INVCRAWL_REDIS"] == "redis://invcrawl-producer:CHANGE-ME@redis:6379/0"


@needs_compose
def test_compose_refuses_to_run_without_the_redis_passwords() -> None:
    assert docker_compose
    proc = subprocess.run(
        [docker_compose, "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")},
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "PASSWORD" in proc.stderr and "set it in deploy/.env" in proc.stderr, proc.stderr


@needs_compose
def test_compose_refuses_to_run_without_the_dashboard_token() -> None:
    """Issue 47.9: with the four passwords but no token, `up` reported success and every
    consumer exited at once (its metrics on 0.0.0.0 need a token), restarted forever.
    The token is required as the passwords are: refused before anything starts."""
    assert docker_compose
    base = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
    for token in ({}, {"INVCRAWL_DASHBOARD_TOKEN": ""}):
        proc = subprocess.run(
            [docker_compose, "-f", str(COMPOSE), "config"],
            capture_output=True,
            text=True,
            env={**base, **PASSWORDS, **token},
            timeout=60,
            check=False,
        )
        assert proc.returncode != 0, proc.stdout
        assert "INVCRAWL_DASHBOARD_TOKEN" in proc.stderr, proc.stderr
        assert "set it in deploy/.env" in proc.stderr, proc.stderr
    # the control: with it, the file resolves and the consumers get it as metrics token
    consumer = compose_config()["services"]["consumer"]["environment"]
    assert consumer["INVCRAWL_METRICS_TOKEN"] == TOKEN["INVCRAWL_DASHBOARD_TOKEN"]
    assert consumer["INVCRAWL_BIND"] == "0.0.0.0"


def test_every_required_variable_is_required_with_a_message() -> None:
    """The compose file itself: each variable a service cannot run without is written
    `${NAME:?message}`, never with an empty default (read without docker-compose)."""
    text = COMPOSE.read_text()
    for name in [*PASSWORDS, *TOKEN]:
        uses = re.findall(r"\$\{" + name + r"(:[-?][^}]*)?\}", text)
        assert any(use.startswith(":?") for use in uses), (name, uses)
        assert not any(use.startswith(":-") for use in uses), (name, uses)


@needs_compose
def test_compose_keeps_its_promises() -> None:
    services = compose_config()["services"]
    redis = services["redis"]
    assert re.fullmatch(r"redis:[\w.-]+", redis["image"]), "the official redis image"
    args = redis["command"]
    assert args[0] == "redis-server"
    flags = dict(zip(args[1::2], args[2::2], strict=True))
    assert flags["--appendonly"] == "yes"
    assert flags["--appendfsync"] in ("always", "everysec")
    assert flags["--maxmemory-policy"] == "noeviction"
    assert redis["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL")
    # Least privilege: the ACL file is rendered by deploy/redis/start.sh (mounted), and
    # every app service logs in as its own user.
    assert redis["entrypoint"] == ["/bin/sh", "/etc/invcrawl/redis/start.sh"]
    assert any(str(v).endswith("/etc/invcrawl/redis:ro") for v in redis["volumes"][1:]) or any(
        isinstance(v, dict) and v.get("target") == "/etc/invcrawl/redis" for v in redis["volumes"]
    )
    assert set(PASSWORDS) <= set(redis["environment"])
    volume = redis["volumes"][0]
    source = volume["source"] if isinstance(volume, dict) else volume.split(":")[0]
    assert source in compose_config().get("volumes", {}), "a named volume"
    # Not reachable from other hosts: no port at all, or loopback only.
    for port in redis.get("ports", []):
        assert str(port).startswith("127.0.0.1:"), port

    for name in APP_SERVICES:
        service = services[name]
        assert service["depends_on"] == {"redis": {"condition": "service_healthy"}}, name
        assert "container_name" not in service, f"{name} could not be scaled"
        role = ROLES[name]
        password = PASSWORDS[f"INVCRAWL_REDIS_{role.upper()}_PASSWORD"]
        expected = f"redis://invcrawl-{role}:{password}@redis:6379/0"
        assert service["environment"]["INVCRAWL_REDIS"] == expected, name
        for var in service["environment"]:
            assert var in OPTION_VARS, f"{name}: {var} is not an invcrawl option"
    assert services["producer"]["command"][0] == "produce"
    assert services["producer"]["restart"] == "no"
    consumer = services["consumer"]
    assert consumer["command"] == ["consume", "--slots", "auto"]
    assert consumer["restart"] in ("unless-stopped", "always", "on-failure")
    # Replicas must not stop when a crawl completes (burst) or be tied to one crawl.
    assert "INVCRAWL_CRAWL_ID" not in consumer["environment"]
    assert "INVCRAWL_BURST" not in consumer["environment"]
    for name in ("status", "export"):
        assert services[name]["profiles"] == ["tools"], name
        assert services[name]["command"] == [name]
    dashboard = services["dashboard"]
    assert dashboard["profiles"] == ["tools"]
    assert dashboard["command"][0] == "dashboard"
    # published on the host's loopback only
    assert all(
        str(p.get("host_ip", p) if isinstance(p, dict) else p).startswith("127.0.0.1")
        for p in dashboard["ports"]
    ), dashboard["ports"]
    assert "INVCRAWL_DASHBOARD_TOKEN" in dashboard["environment"]
    mcp = services["mcp"]
    assert mcp["profiles"] == ["tools"]
    assert mcp["command"][:2] == ["mcp", "--http"]
    assert all(
        str(p.get("host_ip", p) if isinstance(p, dict) else p).startswith("127.0.0.1")
        for p in mcp["ports"]
    ), mcp["ports"]
    assert "INVCRAWL_MCP_TOKEN" in mcp["environment"]


@needs_compose
def test_the_cluster_profile() -> None:
    """Three cluster-mode masters with the single Redis's durability, users and health
    check, a one-shot init joining them as the cluster admin user, and every app
    service switched over by INVCRAWL_REDIS_CLUSTER and INVCRAWL_REDIS_ADDRESS."""
    env = {
        "INVCRAWL_REDIS_CLUSTER": "1",
        "INVCRAWL_REDIS_ADDRESS": "redis-node-1:6379",
        "INVCRAWL_REDIS_ADMIN_PASSWORD": "admin-test-password-0123",
    }
    services = compose_config(env, "--profile", "cluster")["services"]
    volumes = set()
    for name in CLUSTER_NODES:
        node = services[name]
        assert node["profiles"] == ["cluster"]
        args = node["command"]
        flags = dict(zip(args[1::2], args[2::2], strict=True))
        assert flags["--cluster-enabled"] == "yes" and flags["--appendonly"] == "yes"
        assert flags["--appendfsync"] == "always"
        assert flags["--maxmemory-policy"] == "noeviction"
        assert node["entrypoint"] == ["/bin/sh", "/etc/invcrawl/redis/start.sh"]
        assert (
            node["environment"]["INVCRAWL_REDIS_ADMIN_PASSWORD"]
            == env["INVCRAWL_REDIS_ADMIN_PASSWORD"]
        )
        assert "ports" not in node, "no published port"
        volume = node["volumes"][0]
        volumes.add(volume["source"] if isinstance(volume, dict) else volume.split(":")[0])
    assert len(volumes) == 3, "a volume per node"
    init = services["redis-cluster-init"]
    assert set(init["depends_on"]) == set(CLUSTER_NODES)
    script = init["entrypoint"][-1]
    assert "--cluster create" in script and "--user invcrawl-admin" in script
    assert all(n in script for n in CLUSTER_NODES)
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        assert environment["INVCRAWL_REDIS_CLUSTER"] == "1", name
        assert "@redis-node-1:6379/0" in environment["INVCRAWL_REDIS"], name
    # The rendered ACL has the admin user only when its password is set, with cluster
    # commands and no key.
    acl_env = {**PASSWORDS, "PATH": os.environ.get("PATH", "")}
    for admin in ("", "admin-test-password-0123"):
        out = Path(tempfile.mkdtemp()) / "users.acl"
        subprocess.run(
            ["sh", str(DEPLOY / "redis" / "start.sh"), "render", str(out)],
            env={**acl_env, "INVCRAWL_REDIS_ADMIN_PASSWORD": admin},
            check=True,
        )
        lines = [line for line in out.read_text().splitlines() if "invcrawl-admin" in line]
        if not admin:
            assert lines == []
        else:
            (line,) = lines
            assert "+cluster" in line and "resetkeys" in line and "~" not in line


def test_every_variable_is_documented() -> None:
    used = compose_variables()
    assert used, "no variables found in the compose file"
    assert used <= OPTION_VARS | COMPOSE_ONLY_VARS, used - OPTION_VARS - COMPOSE_ONLY_VARS
    documented = documented_variables()
    assert used <= documented, f"not in docs/deploy.md's table: {sorted(used - documented)}"
    assert documented <= OPTION_VARS | COMPOSE_ONLY_VARS, documented - OPTION_VARS
    example = set(
        re.findall(r"^(INVCRAWL_[A-Z0-9_]+)=", (DEPLOY / ".env.example").read_text(), re.M)
    )
    assert used <= example, f"not in deploy/.env.example: {sorted(used - example)}"


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile() -> None:
    steps = dockerfile_instructions()
    args = dict(rest.split("=", 1) for word, rest in steps if word == "ARG" and "=" in rest)
    bases = [
        re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], rest.split()[0])
        for word, rest in steps
        if word == "FROM"
    ]
    assert bases and all(re.fullmatch(r"python:3\.1[1-9][\w.-]*-slim[\w.-]*", b) for b in bases)
    users = [rest for word, rest in steps if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), "the image runs as root"
    entrypoint = [json.loads(rest) for word, rest in steps if word == "ENTRYPOINT"]
    assert entrypoint == [["invcrawl"]]
    assert 'invcrawl = "invcrawl.cli:main"' in (REPO / "pyproject.toml").read_text()


def _dockerignore_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            if pattern.startswith("/", i):
                out = out[:-2] + "(.*/)?"
                i += 1
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i:]:
            end = pattern.index("]", i)
            out += "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]"
            i = end + 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def build_context() -> list[str]:
    """Files of the repository that ``.dockerignore`` lets into the build context
    (Docker's rules: last matching pattern wins; a pattern matching a parent directory
    matches everything below it)."""
    rules = []
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        rules.append((negate, pattern, _dockerignore_regex(pattern)))

    def excluded(rel: str) -> bool:
        parts = rel.split("/")
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        out = False
        for negate, _, regex in rules:
            if any(regex.match(p) for p in prefixes):
                out = not negate
        return out

    def may_reinclude(rel_dir: str) -> bool:
        """A negation could match something below this excluded directory."""
        return any(
            negate and (pattern.startswith(rel_dir + "/") or "**" in pattern)
            for negate, pattern, _ in rules
        )

    included = []
    for top, dirs, files in os.walk(REPO):
        rel_top = Path(top).relative_to(REPO).as_posix()
        prefix = "" if rel_top == "." else rel_top + "/"
        dirs[:] = [d for d in dirs if not excluded(prefix + d) or may_reinclude(prefix + d)]
        included += [prefix + f for f in files if not excluded(prefix + f)]
    return sorted(included)


def test_build_context_and_package(tmp_path: Path) -> None:
    """The Dockerfile's COPY sources are in the filtered context, nothing heavy or
    secret is, and `pip install .` on exactly that context gives a working package."""
    context = build_context()
    assert not [f for f in context if f.split("/")[0] in (".git", ".venv", ".cache", "tests")]
    for word, rest in dockerfile_instructions():
        if word == "COPY" and not rest.startswith("--from"):
            for raw in rest.split()[:-1]:
                source = raw.rstrip("/")
                assert any(f == source or f.startswith(source + "/") for f in context), source
    root = tmp_path / "context"
    for rel in context:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    # What `pip install .` builds: the wheel of exactly that context, installed into a
    # fresh venv. One install namespace (issue 45): its only top-level name is invcrawl.
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(wheels), str(root)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = wheels.glob("invcrawl-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    (site,) = venv.glob("lib/python3*/site-packages")
    top_level = sorted(
        p.name
        for p in site.iterdir()
        if not p.name.endswith(".dist-info") and p.name != "__pycache__"
    )
    assert top_level == ["invcrawl"]
    package = site / "invcrawl"
    lua = {p.name for p in (package / "frontier" / "lua").glob("*.lua")}
    assert lua and lua == {p.name for p in (REPO / "frontier" / "lua").glob("*.lua")}
    assert (package / "dashboard" / "static" / "index.html").is_file(), "the dashboard's page"
    (entry_points,) = site.glob("invcrawl-*.dist-info/entry_points.txt")
    assert "invcrawl = invcrawl.cli:main" in entry_points.read_text()
    # The installed package alone runs the CLI (the image's `invcrawl --help`): no site
    # (-S: neither this checkout's editable hook nor its folders), invcrawl from the fresh
    # venv, its dependencies from this one.
    ours = next(Path(p) for p in sys.path if p.endswith("site-packages"))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{site}{os.pathsep}{ours}"}
    help_run = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys, invcrawl.cli, invcrawl.common; "
            "assert invcrawl.cli.__file__.startswith(sys.argv[1]); "
            "assert invcrawl.common.__file__.startswith(sys.argv[1]); "
            "sys.argv = ['invcrawl', '--help']; invcrawl.cli.main()",
            str(package),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert help_run.returncode == 0 and "usage: invcrawl" in help_run.stdout, help_run.stderr
    # ...and every module of every package imports from it (the image's selfcheck): a
    # package left out of the context once built an image whose consumers all exited.
    check = subprocess.run(
        [sys.executable, "-S", "-m", "invcrawl.selfcheck"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    modules = int(check.stdout.split()[2])
    assert modules == len([p for p in package.rglob("*.py") if p.name != "__main__.py"])


def test_selfcheck_names_every_package() -> None:
    """invcrawl.selfcheck imports the packages pyproject.toml installs, all of them."""
    found = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(found["package-dir"]) == sorted(PACKAGES)
    copied = {w.rstrip("/") for word, rest in dockerfile_instructions() if word == "COPY"
              for w in rest.split()[:-1]}  # fmt: skip
    folders = set(found["package-dir"].values())
    assert folders <= copied, folders - copied


# -- the rehearsal ---------------------------------------------------------------------------


class Rehearsal:
    """Runs compose services as local processes: the image's entry point (the
    ``invcrawl`` console script of this environment) with the service's command, its
    resolved environment (the Redis host rewritten to the local server) and its
    working directory mapped into a temporary directory."""

    def __init__(
        self, services: dict[str, Any], redis_port: int, root: Path, harness: Harness
    ) -> None:
        self.services = services
        self.port = redis_port
        self.root = root
        self.harness = harness
        self.entrypoint = str(Path(sys.executable).with_name("invcrawl"))
        self.transcript: list[str] = []

    def env(self, name: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.root / "home"),
            "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
        for key, value in self.services[name].get("environment", {}).items():
            env[key] = str(value).replace("@redis:6379", f"@127.0.0.1:{self.port}")
        if "INVCRAWL_METRICS_PORT" in env:
            # Each container has a network of its own; local replicas share the host's.
            env.update(INVCRAWL_METRICS_PORT="0", INVCRAWL_BIND="127.0.0.1")
        return env

    def cwd(self, name: str) -> Path:
        workdir = self.services[name].get("working_dir", "/home/invcrawl")
        path = self.root / workdir.strip("/")
        path.mkdir(parents=True, exist_ok=True)
        return path

    def argv(self, name: str) -> list[str]:
        return [self.entrypoint, *self.services[name]["command"]]

    def describe(self, name: str) -> str:
        env = self.env(name)
        shown = " ".join(
            f"{k}={v}" for k, v in sorted(env.items()) if k.startswith("INVCRAWL_") and v
        )
        return f"$ {shown} invcrawl {' '.join(self.services[name]['command'])}"

    def run(self, name: str, shown: int = 40, **extra_env: str) -> subprocess.CompletedProcess[str]:
        self.transcript.append(
            f"[{name}] {self.describe(name)}" + "".join(f" {k}={v}" for k, v in extra_env.items())
        )
        proc = subprocess.run(
            self.argv(name),
            env={**self.env(name), **extra_env},
            cwd=self.cwd(name),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        # stdout, and the CLI's own messages on stderr (not the Scrapy log).
        said = [ln for ln in proc.stderr.splitlines() if re.match(r"(crawl |invcrawl:|\d+ )", ln)]
        out = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        if len(out) > shown:
            out = [*out[:shown], f"... ({len(out) - shown} more lines)"]
        self.transcript += [f"[{name}] {ln}" for ln in out + said]
        self.transcript.append(f"[{name}] exit {proc.returncode}")
        return proc

    def start(self, name: str) -> Proc:
        self.transcript.append(f"[{name}] {self.describe(name)} &")
        return self.harness.spawn(name, self.argv(name), env=self.env(name), cwd=self.cwd(name))


def redis_args(service: dict[str, Any]) -> list[str]:
    command = list(service["command"])
    assert command[0] == "redis-server"
    return command[1:]


def test_compose_rehearsal(tmp_path: Path) -> None:
    """Every compose service, as compose would start it, crawls a site end to end with
    two consumer replicas; then status and export report and write every item."""
    if docker_compose is None:
        pytest.skip("docker-compose not installed")
    site = build_site(tmp_path / "site", pages=30)
    # Slow pages until both replicas serve slots: a consumer leaves a crawl once it is
    # complete, so the crawl must outlast the second replica's start-up.
    throttle = Throttle(delay=2.0)
    with serve(site.root, throttle) as http:
        services = compose_config(
            {
                "INVCRAWL_SITES": http.url,
                "INVCRAWL_CRAWL_ID": "compose",
                "INVCRAWL_LEASE": "2",
                "INVCRAWL_CONCURRENCY": "4",
                "INVCRAWL_LOG_LEVEL": "INFO",
            }
        )["services"]
        redis = services["redis"]
        # The users of deploy/redis (as the redis service's entry point renders them),
        # plus the test's own observer: the default user, on here only (the harness
        # reads every key and CONFIG).
        acl = tmp_path / "users.acl"
        render = ["sh", str(DEPLOY / "redis" / "start.sh"), "render", str(acl)]
        subprocess.run(render, env={**os.environ, **PASSWORDS}, check=True)
        # (in place of the template's own default user: Redis refuses a user twice)
        users = [ln for ln in acl.read_text().splitlines() if not ln.startswith("user default ")]
        acl.write_text("\n".join([*users, "user default on nopass ~* &* +@all", ""]))
        server = RedisServer(tmp_path / "redis", extra=[*redis_args(redis), "--aclfile", str(acl)])
        server.start()
        harness = Harness(server.url, "compose", tmp_path / "work")
        rehearsal = Rehearsal(services, server.port, tmp_path / "root", harness)
        try:
            # The server runs with the compose arguments (they come after RedisServer's
            # defaults, so they win), and the compose healthcheck passes against it.
            cfg = harness.redis.config_get("*")
            flags = dict(zip(redis_args(redis)[::2], redis_args(redis)[1::2], strict=True))
            assert cfg["appendonly"] == "yes"
            assert cfg["maxmemory-policy"] == "noeviction"
            assert cfg["appendfsync"] == flags["--appendfsync"]
            assert cfg["save"] == ""
            kind, check = redis["healthcheck"]["test"][0], redis["healthcheck"]["test"][1:]
            shell = check[0] if kind == "CMD-SHELL" else " ".join(check)
            health = subprocess.run(
                [
                    "bash",
                    "-c",
                    f'redis-cli() {{ command redis-cli -p {server.port} "$@"; }}\n' + shell,
                ],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            rehearsal.transcript.append(f"[redis] healthcheck: {shell} -> {health.returncode}")
            assert health.returncode == 0, health.stdout + health.stderr

            produced = rehearsal.run("producer")
            assert produced.returncode == 0, produced.stderr[-3000:]
            with OwnerSampler(server.url, "compose", 16, interval=0.05) as sampler:
                replicas = [rehearsal.start("consumer"), rehearsal.start("consumer")]
                ids = [harness.wait_joined(p) for p in replicas]
                # The replicas share the 16 slots between them.
                sampler.wait(fully_assigned(ids), 10, "2 replicas to share the slots")
                throttle.delay = 0
                harness.wait_finished(60)
            state = harness.status()["state"]
            rehearsal.transcript.append(f"[consumer] 2 replicas shared the slots; crawl {state}")
            # Neither exits on completion: they wait for the next crawl until stopped.
            time.sleep(0.5)
            assert all(p.alive for p in replicas), harness.logs()
            grace = float(str(services["consumer"]["stop_grace_period"]).rstrip("s"))
            for proc in replicas:
                proc.terminate()
            codes = [p.wait(grace) for p in replicas]
            rehearsal.transcript.append(f"[consumer] SIGTERM both replicas -> exit {codes}")
            assert codes == [143, 143], harness.logs()  # stopped by SIGTERM, cleanly

            status = rehearsal.run("status")
            assert status.returncode == 0, status.stderr
            assert "crawl compose  [finished]" in status.stdout
            assert all(len(line) <= 80 for line in status.stdout.splitlines())
            as_json = rehearsal.run("status", shown=6, INVCRAWL_JSON="1")
            data = json.loads(as_json.stdout)
            assert data["state"] == "finished"
            assert data["pages_done"] == data["pages_total"] == site.tasks

            exported = rehearsal.run("export")
            assert exported.returncode == 0, exported.stderr
            out = rehearsal.cwd("export") / services["export"]["environment"]["INVCRAWL_OUTPUT"]
            lines, items = dedupe_jsonl(out)
            assert lines == len(items) == site.entries
            assert {key for key, _ in items} == site.keys
            check_accounting(harness.redis, "compose", site.keys).assert_ok()
            rehearse_dashboard(rehearsal, harness)
            rehearse_mcp(rehearsal, harness)
        finally:
            print("\n".join(["", "compose rehearsal transcript:", *rehearsal.transcript]))
            harness.close()
            server.stop()


def rehearse_dashboard(rehearsal: Rehearsal, harness: Harness) -> None:
    """The dashboard as compose starts it: as the read-only Redis user, on every interface
    of its container (here on a free port), serving the finished crawl only to a client
    that gives its token."""
    env = {**rehearsal.env("dashboard"), "INVCRAWL_DASHBOARD_TOKEN": "rehearsal-token"}
    argv = ["0" if arg == "8780" else arg for arg in rehearsal.argv("dashboard")]
    assert argv != rehearsal.argv("dashboard"), "the compose command names its port"
    rehearsal.transcript.append(f"[dashboard] {rehearsal.describe('dashboard')} (a token) &")
    proc = harness.spawn("dashboard", argv, env=env)
    port = wait_for(
        lambda: (m := re.search(r"http://0\.0\.0\.0:(\d+)/", proc.output())) and m[1],
        30,
        "the dashboard to listen",
        diagnose=proc.tail,
    )
    url = f"http://127.0.0.1:{port}/api/status"
    with pytest.raises(urllib.error.HTTPError) as anonymous:
        urllib.request.urlopen(url, timeout=10)
    assert anonymous.value.code == 401
    request = urllib.request.Request(url, headers={"Authorization": "Bearer rehearsal-token"})
    with urllib.request.urlopen(request, timeout=10) as response:
        data = json.loads(response.read())
    assert data["error"] is None, data["error"]
    assert [(c["crawl_id"], c["state"]) for c in data["crawls"]] == [("compose", "finished")]
    assert "rehearsal-token" not in json.dumps(data) and "reader-test-password" not in str(data)
    assert data["redis"].startswith("redis://invcrawl-reader:***@")
    rehearsal.transcript.append(
        f"[dashboard] GET /api/status: 401 without the token; with it: {len(data['crawls'])} "
        f"crawl, {data['crawls'][0]['state']}"
    )
    proc.terminate()
    assert proc.wait(10) == 143, proc.tail()


def rehearse_mcp(rehearsal: Rehearsal, harness: Harness) -> None:
    """The MCP server as compose starts it: as the read-only Redis user, on every
    interface of its container (here on a free port), refusing a client without its
    token and answering list_projects and search_symbols (the SDK's client) to one with
    it: the reader ACL user suffices."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    env = {**rehearsal.env("mcp"), "INVCRAWL_MCP_TOKEN": "rehearsal-token"}
    argv = ["0" if arg == "8781" else arg for arg in rehearsal.argv("mcp")]
    assert argv != rehearsal.argv("mcp"), "the compose command names its port"
    rehearsal.transcript.append(f"[mcp] {rehearsal.describe('mcp')} (a token) &")
    proc = harness.spawn("mcp", argv, env=env)
    port = wait_for(
        lambda: (m := re.search(r"http://0\.0\.0\.0:(\d+)/mcp", proc.output())) and m[1],
        30,
        "the MCP server to listen",
        diagnose=proc.tail,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    anonymous = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert anonymous.status_code == 401

    async def projects() -> Any:
        headers = {"Authorization": "Bearer rehearsal-token"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            found = await client.call_tool("search_symbols", {"query": "f1", "limit": 3})
            assert not found.is_error and found.structured_content, found.content  # reads only
            return (await client.call_tool("list_projects", {})).structured_content

    listed = asyncio.run(projects())
    assert [v["crawl_id"] for p in listed["projects"] for v in p["versions"]] == ["compose"]
    rehearsal.transcript.append(
        f"[mcp] POST /mcp: 401 without the token; list_projects with it: "
        f"{[p['project'] for p in listed['projects']]}"
    )
    proc.terminate()
    assert proc.wait(10) == 143, proc.tail()
