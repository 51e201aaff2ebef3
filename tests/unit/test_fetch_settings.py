"""fetch/settings.py: what every Scrapy process of invcrawl is given."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from scrapy.settings import default_settings

from invcrawl.common.settings.config import Config
from invcrawl.fetch.settings import NEVER_RUN, base_settings


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


CHECK_IMPORTS = """
import json
import sys
from scrapy.settings import Settings
from invcrawl.common.settings.config import Config
from invcrawl.fetch.settings import NEVER_RUN, base_settings

settings = base_settings(Config())
if sys.argv[1] == "none":  # the control: disabled with None, as before
    for name in ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES"):
        settings[name] = {**settings.get(name, {}), **dict.fromkeys(NEVER_RUN)}
        del settings[name + "_BASE"]
# what Scrapy's extension and middleware managers read first (and import for)
merged = Settings(settings)
lists = [sorted(merged.get_component_priority_dict_with_base(name))
         for name in ("EXTENSIONS", "DOWNLOADER_MIDDLEWARES")]
print(json.dumps([lists, "aiohttp.web" in sys.modules, "tldextract" in sys.modules]))
"""


@pytest.mark.parametrize(("disabled", "imported"), [("left-out", False), ("none", True)])
def test_components_never_run_are_never_imported(disabled: str, imported: bool) -> None:
    # Scrapy imports every key of EXTENSIONS and DOWNLOADER_MIDDLEWARES to normalise it,
    # even one set to None (the control), and builds each entry of their _BASE: the
    # remote control's aiohttp.web and the cookies middleware's tldextract, in every
    # process. Left out of the _BASE dicts they are not imported, and the components
    # that run are the same.
    result = subprocess.run(
        [sys.executable, "-c", CHECK_IMPORTS, disabled],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    lists, aiohttp_web, tldextract = json.loads(result.stdout)
    assert (aiohttp_web, tldextract) == (imported, imported)
    extensions, middlewares = lists
    assert extensions == sorted(set(default_settings.EXTENSIONS_BASE) - NEVER_RUN)
    assert set(middlewares) == (set(default_settings.DOWNLOADER_MIDDLEWARES_BASE) - NEVER_RUN) | {
        "invcrawl.fetch.robots.SharedRobotsTxtMiddleware",
        "invcrawl.fetch.permits.HostPermitMiddleware",
        "invcrawl.fetch.addresses.AddressGuardMiddleware",
    }
