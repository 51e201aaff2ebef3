"""Scrapy's crawler components imported before the producer is forked
(:class:`invcrawl.producer.run.ForkedProducer`).

A Scrapy crawler imports its middlewares, extensions, download handlers, scheduler,
queues and stats collector only when it is built. The forked producer builds its crawler
in the child, and the consumer builds its own in the parent right after the fork, so
both processes imported the same ~290 modules (Scrapy 2.19 imports every component it
is given, even one disabled with ``None``: those invcrawl never runs are left out of its
settings, ``fetch/settings.py``). Imported once before the fork, the child inherits
them: measured on the CPython docs, ~0.3 CPU-s less per crawl (docs/performance.md,
"Cheaper than scrapy-redis"). The parent would have imported them anyway.

Importing a class never installs a reactor here (the reactor module is imported only when
a crawler process starts; ``tests/unit/test_producer_preload.py`` checks it): the
consumer still installs its asyncio reactor after the fork.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from scrapy.settings import Settings
from scrapy.utils.misc import load_object

# Settings that name components by their import path: {path: order} (DOWNLOAD_HANDLERS:
# {scheme: path}), each merged with its _BASE as Scrapy does.
COMPONENT_LISTS = (
    "DOWNLOADER_MIDDLEWARES",
    "SPIDER_MIDDLEWARES",
    "EXTENSIONS",
    "ITEM_PIPELINES",
    "ADDONS",
)
COMPONENTS = (
    "SCHEDULER",
    "DUPEFILTER_CLASS",
    "SCHEDULER_PRIORITY_QUEUE",
    "SCHEDULER_MEMORY_QUEUE",
    "SCHEDULER_DISK_QUEUE",
    "SCHEDULER_START_MEMORY_QUEUE",
    "SCHEDULER_START_DISK_QUEUE",
    "STATS_CLASS",
    "LOG_FORMATTER",
    "REQUEST_FINGERPRINTER_CLASS",
    "DOWNLOADER",
    "SPIDER_LOADER_CLASS",
    "TWISTED_DNS_RESOLVER",
)


def component_paths(settings: Mapping[str, Any]) -> list[str]:
    """The import paths of every component a crawler with ``settings`` loads."""
    merged = Settings(dict(settings))
    paths: list[str] = []
    for name in COMPONENT_LISTS:
        # every key, even one set to None: Scrapy imports those too
        paths += [path for path in merged.getwithbase(name) if isinstance(path, str)]
    paths += [p for p in merged.getwithbase("DOWNLOAD_HANDLERS").values() if isinstance(p, str)]
    paths += [p for name in COMPONENTS if isinstance(p := merged.get(name), str)]
    return paths


def preload(settings: Mapping[str, Any]) -> None:
    """Import the components of a crawler with ``settings``. One that fails to import is
    left to the crawler, which reports it where it always did."""
    for path in component_paths(settings):
        with contextlib.suppress(Exception):
            load_object(path)
