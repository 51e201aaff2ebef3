"""fetch/settings.py: what every Scrapy process of invcrawl is given."""

from __future__ import annotations

import pytest

from common.settings.config import Config
from fetch.settings import base_settings


@pytest.mark.parametrize(
    ("level", "looked_up"), [("DEBUG", True), ("INFO", True), ("WARNING", False), ("ERROR", False)]
)
def test_dependency_versions_are_looked_up_only_when_they_are_logged(
    level: str, looked_up: bool
) -> None:
    # Scrapy's default list (its `Versions:` INFO line) when INFO is shown; none else,
    # since finding them runs `uname -p` and reads the interpreter's binary.
    settings = base_settings(Config(log_level=level))
    assert ("LOG_VERSIONS" not in settings) is looked_up
    if not looked_up:
        assert settings["LOG_VERSIONS"] == []
