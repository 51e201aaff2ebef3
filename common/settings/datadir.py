"""Where the embedded Redis and the run files live when ``--data-dir`` is not given: one
index per user, shared by every command run from any folder and by the MCP server an
agent starts in its own project folder (issue 47).

* ``$XDG_DATA_HOME/invcrawl``, else ``~/.local/share/invcrawl`` (the XDG base directory
  specification: a relative ``XDG_DATA_HOME`` is ignored);
* a ``./.invcrawl`` that holds an index (the default before) is still used, so existing
  folders keep working where they are.

Pure: the caller hands in the environment and the working directory
(``common/settings/config.py`` is the one place that reads ``os.environ``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

LEGACY_NAME = ".invcrawl"  # the per-folder data dir of earlier versions
APP_NAME = "invcrawl"
# How docs/configuration.md shows the computed default.
DEFAULT_TEXT = "$XDG_DATA_HOME/invcrawl (~/.local/share/invcrawl; ./.invcrawl if it holds an index)"


def holds_index(data_dir: Path) -> bool:
    """Whether ``data_dir`` holds an embedded Redis's data (its append-only file)."""
    return (data_dir / "appendonlydir").exists() or (data_dir / "appendonly.aof").exists()


def user_data_dir(env: Mapping[str, str]) -> Path:
    """The per-user data dir: ``$XDG_DATA_HOME/invcrawl`` or ``~/.local/share/invcrawl``."""
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_NAME
    home = env.get("HOME", "")
    base = Path(home) if home and Path(home).is_absolute() else Path.home()
    return base / ".local" / "share" / APP_NAME


def default_data_dir(env: Mapping[str, str], cwd: Path) -> Path:
    """The data dir without ``--data-dir``/``INVCRAWL_DATA_DIR``: the working directory's
    legacy ``.invcrawl`` when it holds an index, else the per-user one."""
    legacy = cwd / LEGACY_NAME
    if holds_index(legacy):
        return Path(LEGACY_NAME)  # relative, as it was named before
    return user_data_dir(env)
