"""The per-user data dir a command uses without --data-dir, in a test: under the
test's own XDG_DATA_HOME (tests/conftest.py), never the real home's."""

from __future__ import annotations

import os
from pathlib import Path


def user_data_dir() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "invcrawl"
