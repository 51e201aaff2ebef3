"""Reading a Scrapy response (the producer's inventory, the consumer's pages)."""

from __future__ import annotations

from scrapy.http import Response


def header(response: Response, name: bytes) -> str | None:
    """A response header as text (HTTP headers are Latin-1), None when absent."""
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
