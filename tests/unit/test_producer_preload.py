"""The crawler components imported before the producer is forked (producer/preload.py):
every component the crawler loads, and never a reactor (the consumer installs its asyncio
reactor after the fork)."""

from __future__ import annotations

import subprocess
import sys

from invcrawl.common.settings.config import Config
from invcrawl.fetch.settings import base_settings
from invcrawl.producer.preload import component_paths

CHECK = """
import sys
from invcrawl.common.settings.config import Config
from invcrawl.fetch.settings import base_settings
from invcrawl.producer.preload import preload
preload(base_settings(Config()))
print("twisted.internet.reactor" in sys.modules,
      "scrapy.downloadermiddlewares.httpcompression" in sys.modules,
      "scrapy.core.downloader.handlers.http11" in sys.modules,
      "scrapy.extensions.corestats" in sys.modules)
"""


def test_preloading_imports_the_components_and_installs_no_reactor() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True", "True", "True"]


def test_the_components_are_those_the_crawler_loads() -> None:
    # not those invcrawl never runs (fetch/settings.py: NEVER_RUN), which Scrapy never sees
    paths = component_paths(base_settings(Config()))
    assert "scrapy.downloadermiddlewares.cookies.CookiesMiddleware" not in paths
    assert "scrapy.extensions.remote_control.RemoteControl" not in paths
    assert "invcrawl.fetch.permits.HostPermitMiddleware" in paths
    assert "scrapy.core.scheduler.Scheduler" in paths
