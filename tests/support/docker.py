"""Docker for the compose suite (tests/e2e/test_compose.py): is an engine at hand, the
base images (deploy/base-images/build.sh: no registry needed), and one compose project
run as docs/deploy.md says, with a unique project name so that its containers, volumes
and networks are all removed at the end, whatever happened.

Compose is Debian's ``docker-compose`` (1.29) when installed, else the ``docker
compose`` plugin (v2): the compose file works with both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from support.cli import REPO

DEPLOY = REPO / "deploy"
BASE_IMAGES = DEPLOY / "base-images" / "build.sh"
REQUIRE = "INVCRAWL_TESTS_REQUIRE_DOCKER"  # set by .ci/run: a skip is then a failure


def docker_cli() -> str | None:
    # Debian's client first: it matches Debian's engine (another may be earlier on PATH).
    for candidate in ("/usr/bin/docker", shutil.which("docker")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def compose_cli(docker: str) -> list[str] | None:
    found = shutil.which("docker-compose")
    if found:
        return [found]
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, check=False)
    return [docker, "compose"] if probe.returncode == 0 else None


def unavailable() -> str | None:
    """Why the compose suite cannot run here (None: it can)."""
    docker = docker_cli()
    if docker is None:
        return "no docker CLI (apt-get install docker.io; .ci/dockerd.sh starts the engine)"
    info = subprocess.run(
        [docker, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if info.returncode != 0:
        return (
            "no Docker engine answers (`.ci/dockerd.sh` starts one): "
            + (info.stderr.strip().splitlines() or ["docker info failed"])[0]
        )
    if compose_cli(docker) is None:
        return "neither docker-compose nor `docker compose` is installed"
    given = os.environ.get("INVCRAWL_PYTHON_IMAGE") and os.environ.get("INVCRAWL_REDIS_IMAGE")
    if not given and (os.geteuid() != 0 or not shutil.which("debootstrap")):
        return (
            "building the base images needs root and debootstrap "
            "(or set INVCRAWL_PYTHON_IMAGE and INVCRAWL_REDIS_IMAGE)"
        )
    return None


def base_images() -> dict[str, str]:
    """INVCRAWL_PYTHON_IMAGE and INVCRAWL_REDIS_IMAGE: given, or built (cached)."""
    given = {k: os.environ.get(k, "") for k in ("INVCRAWL_PYTHON_IMAGE", "INVCRAWL_REDIS_IMAGE")}
    if all(given.values()):
        return given
    env = {**os.environ, "DOCKER": docker_cli() or "docker"}
    out = subprocess.run(
        ["bash", str(BASE_IMAGES)], capture_output=True, text=True, check=False, env=env
    )
    if out.returncode != 0:
        raise RuntimeError(f"deploy/base-images/build.sh failed:\n{out.stderr[-3000:]}")
    pairs = (line.split("=", 1) for line in out.stdout.split())
    return {k: v for k, v in pairs}


@dataclass
class Compose:
    """``docker-compose -p PROJECT -f deploy/docker-compose.yml [-f extra...]`` with an
    environment of its own (nothing of the caller's INVCRAWL_* leaks in)."""

    env: dict[str, str]
    extra_files: Sequence[Path] = ()
    passwords: dict[str, str] = field(default_factory=dict)  # of the Redis users, by role
    # Read instead of deploy/.env, which a developer's checkout may have: only ``env``.
    env_file: Path | None = None
    project: str = field(default_factory=lambda: f"invcrawl-ci-{uuid.uuid4().hex[:10]}")

    def __post_init__(self) -> None:
        docker = docker_cli()
        assert docker is not None
        self.docker = docker
        cli = compose_cli(docker)
        assert cli is not None
        self.cli = cli
        self.base_env = {k: v for k, v in os.environ.items() if not k.startswith("INVCRAWL_")}
        self.base_env.pop("COMPOSE_PROJECT_NAME", None)

    def argv(self, *args: str) -> list[str]:
        files = [DEPLOY / "docker-compose.yml", *self.extra_files]
        env_file = ["--env-file", str(self.env_file)] if self.env_file else []
        return [
            *self.cli,
            "-p",
            self.project,
            *env_file,
            *(a for f in files for a in ("-f", str(f))),
            *args,
        ]

    def run(
        self,
        *args: str,
        check: bool = True,
        timeout: float = 900,
        env: Mapping[str, str] | None = None,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(*args),
            # CI has no standard input: give compose an empty one, never the caller's.
            **({"input": input_text} if input_text is not None else {"stdin": subprocess.DEVNULL}),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            cwd=REPO,
            env={**self.base_env, **self.env, **(env or {})},
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n"
                f"{done.stderr[-4000:]}"
            )
        return done

    def docker_run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.docker, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)}: {done.stderr[-2000:]}")
        return done

    def logs(self, service: str) -> str:
        """The last lines a service's containers wrote, for a failure's message."""
        return self.run("logs", "--no-color", "--tail", "60", service, check=False).stdout[-4000:]

    def containers(self, service: str) -> list[str]:
        """Ids of the service's containers that are running."""
        out = self.run("ps", "-q", service).stdout.split()
        running = []
        for cid in out:
            state = self.docker_run("inspect", "-f", "{{.State.Running}}", cid).stdout.strip()
            if state == "true":
                running.append(cid)
        return running

    def health(self, service: str) -> str:
        (cid, *_) = self.run("ps", "-q", service).stdout.split()
        state = json.loads(self.docker_run("inspect", "-f", "{{json .State}}", cid).stdout)
        return str(state.get("Health", {}).get("Status", state.get("Status")))

    def down(self) -> None:
        """Remove every container, volume and network of the project (images are kept:
        the next run reuses them)."""
        self.run("--profile", "tools", "down", "-v", "--remove-orphans", "-t", "5", check=False)
        # Anything compose did not know (a one-off container of a run that died).
        for kind, label in (("container", "ps -aq"), ("volume", "volume ls -q"),
                            ("network", "network ls -q")):  # fmt: skip
            ids = self.docker_run(
                *label.split(), "--filter", f"label=com.docker.compose.project={self.project}",
                check=False,
            ).stdout.split()  # fmt: skip
            if ids:
                rm = ["rm", "-f"] if kind == "container" else [kind, "rm"]
                self.docker_run(*rm, *ids, check=False)
