"""Page fingerprints, task ids and slots. Pure: no Redis, no Scrapy.

A page's fingerprint is the SHA1 of the JSON of method, URL, body and no headers (the
layout of Scrapy's default request fingerprint) of a GET of the page **as it is
fetched**: the URL without its fragment, through w3lib's ``safe_url_string`` exactly as
Scrapy's ``Request`` sends it (non-ASCII and spaces percent-encoded, nothing else
changed). Two page URLs share a task id only when they are the same request on the wire.

It is not Scrapy's own fingerprint, whose ``canonicalize_url`` sorts query arguments and
decodes percent-escapes: ``q.html?a=1&b=2`` and ``q.html?b=2&a=1`` (two requests a
server may answer differently) had one task id, and the producer's ``seen`` set dropped
the second page with all its entries. ``common/plan.py`` groups entries by this same
fetched URL, so ``caf%C3%A9.html`` and ``café.html`` (one request) are one task.

The task id is the first 16 hex digits of the fingerprint, and the slot of a task is
``int(first 8 hex digits, 16) % slots``, the same rule ``reshard.lua`` applies inside
Redis. Deriving the slot from the id (instead of storing it) means resharding moves ids
between queues without rewriting any payload.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable

TASK_ID_HEX = 16


def fetched_url(url: str) -> str:
    """The URL a GET of ``url`` requests: fragment dropped, then as Scrapy's ``Request``
    sends it (``safe_url_string``)."""
    return _safe_url_string()(url.split("#", 1)[0])


@functools.cache
def _safe_url_string() -> Callable[..., str]:
    """w3lib's ``safe_url_string``, imported when a URL is first fingerprinted: the
    commands that only read crawls (``versions``, ``search``...) load this module for
    :func:`slot_for`, and w3lib's URL patterns cost them ~20 ms each (issue 47, 5)."""
    from w3lib.url import safe_url_string  # noqa: PLC0415

    return safe_url_string


def page_fingerprint(url: str) -> str:
    """Hex SHA1 fingerprint of ``GET url`` as fetched (module docstring)."""
    data = {"method": "GET", "url": fetched_url(url), "body": "", "headers": {}}
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()


def task_id_for(url: str) -> str:
    return page_fingerprint(url)[:TASK_ID_HEX]


def slot_for(task_id: str, slots: int) -> int:
    """The slot of a task id under ``slots`` slots (mirrors reshard.lua's slot_of)."""
    if slots < 1:
        raise ValueError("slot count must be >= 1")
    return int(task_id[:8], 16) % slots
