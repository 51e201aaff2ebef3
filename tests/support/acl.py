"""The shipped Redis configuration for tests: the ACL file of deploy/redis, rendered by
deploy/redis/start.sh as the compose redis service renders it, with fixed test
passwords, and the URL each role logs in with.

``render_acl(path, inspector=True)`` appends one superuser for the tests' own looking
(SCAN, ACL DRYRUN, the fault harness's progress reads); every other user, the default
one included, is the shipped file's, verbatim.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.cli import REPO

START = REPO / "deploy" / "redis" / "start.sh"
PASSWORDS = {
    "producer": "producer-0123456789abcdef",
    "consumer": "consumer-0123456789abcdef",
    "reader": "reader-0123456789abcdef",
    "exporter": "exporter-0123456789abcdef",
}
ENV = {f"INVCRAWL_REDIS_{role.upper()}_PASSWORD": pw for role, pw in PASSWORDS.items()}
INSPECTOR = ("invcrawl-test-inspector", "inspector-0123456789abcdef")


def render_acl(out: Path, *, inspector: bool = False) -> None:
    subprocess.run(
        ["sh", str(START), "render", str(out)],
        env={**os.environ, **ENV},
        check=True,
        capture_output=True,
    )
    if inspector:
        with out.open("a") as acl:
            acl.write(f"user {INSPECTOR[0]} on >{INSPECTOR[1]} ~* &* +@all\n")


def role_url(port: int, role: str) -> str:
    """The Redis URL of an invcrawl user (``producer``...) or of the test ``inspector``."""
    if role == "inspector":
        return f"redis://{INSPECTOR[0]}:{INSPECTOR[1]}@127.0.0.1:{port}/0"
    return f"redis://invcrawl-{role}:{PASSWORDS[role]}@127.0.0.1:{port}/0"
