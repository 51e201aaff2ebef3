"""Refresh validators of one page: what the next refresh needs to tell, without
extracting it again, that a page has not changed.

A page's validators are stored in Redis after each fetch (``invcrawl:{C}:pages``) and
copied into its next refresh task. The consumer then sends them as a conditional GET
(``If-None-Match`` / ``If-Modified-Since``); a ``304``, or a body whose hash is the one
stored (for servers that send no validators), settles the task with no extraction and
no new item. ``entries`` is a digest of the inventory entries the page was extracted
for: when the inventory gives the page other entries, the producer attaches no
validators, so the page is fetched and extracted again.

On the wire and in Redis a ``Validators`` is one compact JSON object with short keys
(``{"e": etag, "m": last-modified, "h": body hash, "k": entries digest}``), under 150
bytes for common servers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

HASH_HEX = 16  # 64 bits of SHA-256: a refresh mistaking a changed page for the same is ~2^-64
MAX_VALIDATOR = 200  # longer ETag / Last-Modified values are not kept (hostile or broken)


@dataclass(frozen=True, slots=True)
class Validators:
    etag: str | None = None
    last_modified: str | None = None
    body_hash: str | None = None
    entries: str | None = None

    def encode(self) -> str:
        doc = {
            k: v
            for k, v in (
                ("e", self.etag),
                ("m", self.last_modified),
                ("h", self.body_hash),
                ("k", self.entries),
            )
            if v
        }
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    def conditional_headers(self) -> dict[str, str]:
        return conditional_headers(self.etag, self.last_modified)


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The request headers of a conditional GET (none when the server gave none)."""
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def decode_validators(value: str | bytes | None) -> Validators | None:
    """The stored form back; None for nothing stored or anything unreadable (a page
    without usable validators is simply fetched again)."""
    if not value:
        return None
    try:
        doc: Any = json.loads(value)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    fields = [doc.get(k) for k in ("e", "m", "h", "k")]
    if not all(f is None or isinstance(f, str) for f in fields):
        return None
    return Validators(*fields)


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:HASH_HEX]


def entries_digest(keys_and_anchors: Iterable[tuple[str, str]]) -> str:
    """Digest of the (item key, anchor) pairs a page is extracted for, in task order."""
    h = hashlib.sha256()
    for key, anchor in keys_and_anchors:
        h.update(f"{key}#{anchor}\n".encode())
    return h.hexdigest()[:12]


def response_validators(
    etag: str | None, last_modified: str | None, body: bytes, entries: str | None
) -> Validators:
    """What to store after a fetch: the server's validators (if sane) and the body hash."""
    return Validators(
        etag=_sane(etag),
        last_modified=_sane(last_modified),
        body_hash=body_hash(body),
        entries=entries,
    )


def _sane(value: str | None) -> str | None:
    if not value or len(value) > MAX_VALIDATOR or "\n" in value or "\r" in value:
        return None
    return value
