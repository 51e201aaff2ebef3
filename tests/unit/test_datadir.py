"""The data dir without --data-dir (issue 47.2): one per user, the XDG base directory,
a legacy ./.invcrawl holding an index still used."""

from __future__ import annotations

import os
from pathlib import Path

from invcrawl.common.settings.config import load_config
from invcrawl.common.settings.datadir import default_data_dir, user_data_dir


def test_xdg_data_home_else_the_home_share(tmp_path: Path) -> None:
    assert user_data_dir({"XDG_DATA_HOME": "/x/data", "HOME": "/h"}) == Path("/x/data/invcrawl")
    assert user_data_dir({"HOME": "/h"}) == Path("/h/.local/share/invcrawl")
    # the XDG specification: a relative XDG_DATA_HOME (or an empty one) is ignored
    assert user_data_dir({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == Path("/h/.local/share/invcrawl")
    assert user_data_dir({"XDG_DATA_HOME": "", "HOME": "/h"}) == Path("/h/.local/share/invcrawl")


def test_a_legacy_folder_with_an_index_keeps_its_index(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert default_data_dir(env, tmp_path) == tmp_path / "xdg" / "invcrawl"
    (tmp_path / ".invcrawl").mkdir()  # an empty (or logs-only) one is not an index
    assert default_data_dir(env, tmp_path) == tmp_path / "xdg" / "invcrawl"
    (tmp_path / ".invcrawl" / "appendonlydir").mkdir()
    assert default_data_dir(env, tmp_path) == Path(".invcrawl")


def test_the_flag_and_the_variable_win(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "INVCRAWL_DATA_DIR": str(tmp_path / "v")}
    assert load_config({}, env).data_dir == tmp_path / "v"
    assert load_config({"data_dir": tmp_path / "f"}, env).data_dir == tmp_path / "f"


def test_no_test_reads_the_real_home() -> None:
    """tests/conftest.py gives every test an XDG_DATA_HOME of its own."""
    data_dir = load_config({}, {}).data_dir
    assert data_dir == user_data_dir(os.environ)
    assert data_dir.is_relative_to(Path(os.environ["XDG_DATA_HOME"]))
    assert not data_dir.is_relative_to(Path.home())
