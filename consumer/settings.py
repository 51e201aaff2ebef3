"""Scrapy settings of the consumer process: the shared ones (``fetch/settings.py``), its
concurrency, the settle pipeline and the site's redirect policy for pages."""

from __future__ import annotations

from typing import Any

from invcrawl.common.settings.config import Config
from invcrawl.consumer.pages import SETTLE, Settle
from invcrawl.fetch.politeness import HostGate
from invcrawl.fetch.settings import base_settings


def consumer_settings(
    config: Config, host_gate: HostGate | None = None, settle: Settle | None = None
) -> dict[str, Any]:
    """``host_gate`` and ``settle``: the Worker's, for the middlewares and the pipeline."""
    settings = base_settings(config, host_gate)
    if settle is not None:
        SETTLE.put(settings, settle)
    settings.update(
        {
            "CONCURRENT_REQUESTS": config.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": config.concurrency,
            # A callback returns exactly one settlement: Scrapy's default of 100 makes
            # it start 100 asyncio tasks per page (scraper._parallel_asyncio).
            "CONCURRENT_ITEMS": 1,
            "ITEM_PIPELINES": {"invcrawl.consumer.pipelines.SettlePipeline": 100},
            # Page redirects within the site only (fetch/redirects.py), meta refreshes
            # included: Scrapy's own follows them anywhere.
            "DOWNLOADER_MIDDLEWARES": {
                **settings["DOWNLOADER_MIDDLEWARES"],
                "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
                "invcrawl.fetch.redirects.SiteRedirectMiddleware": 585,  # after decompression
            },
        }
    )
    return settings
