"""Page fingerprints, task ids and slots. Pure: no Redis, no Scrapy.

A page's fingerprint is Scrapy's default request fingerprint of a GET of the page URL
without its fragment (``scrapy.utils.request.RequestFingerprinter``, format 2.7+:
SHA1 of the JSON of method, canonical URL, body and no headers). It is recomputed here
with w3lib's ``canonicalize_url`` so that the producer, the Lua scripts and any
operator with ``redis-cli`` agree on it without importing Scrapy; a unit test checks it
against Scrapy's own fingerprinter.

The task id is the first 16 hex digits of the fingerprint, and the slot of a task is
``int(first 8 hex digits, 16) % slots``, the same rule ``reshard.lua`` applies inside
Redis. Deriving the slot from the id (instead of storing it) means resharding moves ids
between queues without rewriting any payload.
"""

from __future__ import annotations

import hashlib
import json

from w3lib.url import canonicalize_url

TASK_ID_HEX = 16


def page_fingerprint(url: str) -> str:
    """Hex SHA1 fingerprint of ``GET url`` (fragment dropped), as Scrapy computes it."""
    data = {
        "method": "GET",
        "url": canonicalize_url(url, keep_fragments=False),
        "body": "",
        "headers": {},
    }
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()


def task_id_for(url: str) -> str:
    return page_fingerprint(url)[:TASK_ID_HEX]


def slot_for(task_id: str, slots: int) -> int:
    """The slot of a task id under ``slots`` slots (mirrors reshard.lua's slot_of)."""
    if slots < 1:
        raise ValueError("slot count must be >= 1")
    return int(task_id[:8], 16) % slots
