"""What to do with a page download that did not give a usable 2xx response.

* 404 / 410: the page is gone: commit its entries as ``page_not_found``.
* 408, 425, 429, 5xx, timeouts, resets, refused connections, DNS errors: transient:
  retry later as a delayed task in Redis, with exponential backoff and jitter, honouring
  ``Retry-After``.
* Any other 4xx, redirect loops, oversized pages: permanent: dead-letter at once with
  the reason, so it is visible and can be redriven after a fix.
* robots.txt disallows the page: its entries are committed as ``skipped``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from enum import StrEnum

TRANSIENT_STATUSES = frozenset(
    {408, 425, 429, 500, 502, 503, 504, 507, 509, 520, 521, 522, 523, 524}
)
GONE_STATUSES = frozenset({404, 410})

# Exception class names of Twisted/Scrapy download failures that are worth retrying.
TRANSIENT_ERRORS = frozenset(
    {
        "TimeoutError",
        "TCPTimedOutError",
        "ConnectionRefusedError",
        "ConnectionDone",
        "ConnectionLost",
        "ConnectError",
        "ConnectingCancelledError",
        "ResponseNeverReceived",
        "ResponseFailed",
        "PotentialDataLoss",
        "DNSLookupError",
        "NoRouteError",
        "ConnectionAborted",
        "H2Error",
        "TunnelError",
        "OSError",
        "ConnectionResetError",
        # Scrapy >= 2.13 wraps Twisted's errors in its own classes:
        "CannotResolveHostError",
        "DownloadConnectionRefusedError",
        "DownloadFailedError",
        "DownloadTimeoutError",
        "ResponseDataLossError",
    }
)


class OutcomeKind(StrEnum):
    """What becomes of a downloaded (or failed) page."""

    EXTRACT = "extract"  # a usable 2xx response
    NOT_FOUND = "not_found"  # committed as ``page_not_found``
    RETRY = "retry"  # transient: a delayed task
    DEAD = "dead"  # permanent: dead-lettered with the reason
    SKIPPED = "skipped"  # robots.txt: committed as ``skipped``


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: OutcomeKind
    reason: str
    retry_after: float | None = None


def classify_status(status: int, retry_after: str | None = None) -> Outcome:
    if 200 <= status < 300:
        return Outcome(OutcomeKind.EXTRACT, f"HTTP {status}")
    if status in GONE_STATUSES:
        return Outcome(OutcomeKind.NOT_FOUND, f"HTTP {status}")
    if status in TRANSIENT_STATUSES or status >= 500:
        return Outcome(OutcomeKind.RETRY, f"HTTP {status}", parse_retry_after(retry_after))
    return Outcome(OutcomeKind.DEAD, f"HTTP {status}")


def refused_by_robots(exc: object) -> bool:
    """Scrapy's robots.txt middleware refused the request (an ``IgnoreRequest``)."""
    return type(exc).__name__ == "IgnoreRequest" and "robots" in str(exc).lower()


def too_large(exc: object) -> bool:
    """The download was cut at ``DOWNLOAD_MAXSIZE`` (Scrapy says so only in the text)."""
    text = str(exc).lower()
    return "maxsize" in text or "max size" in text


def classify_exception(exc: BaseException) -> Outcome:
    name = type(exc).__name__
    message = f"{name}: {exc}".strip().rstrip(":")[:300]
    if refused_by_robots(exc):
        return Outcome(OutcomeKind.SKIPPED, "disallowed by robots.txt")
    if name == "AddressRefused":  # fetch/addresses.py: never retried
        return Outcome(OutcomeKind.DEAD, str(exc))
    if isinstance(exc, FileNotFoundError):  # a file:// page that does not exist
        return Outcome(OutcomeKind.NOT_FOUND, "no such file")
    if too_large(exc):
        return Outcome(OutcomeKind.DEAD, f"page larger than the download size limit ({message})")
    if name in TRANSIENT_ERRORS or any(b.__name__ in TRANSIENT_ERRORS for b in type(exc).__mro__):
        return Outcome(OutcomeKind.RETRY, message)
    return Outcome(OutcomeKind.DEAD, message)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(
    deliveries: int,
    base: float,
    maximum: float,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random, so retries of
    many pages that failed together spread out, but none comes back too early."""
    exp = min(maximum, base * 2.0 ** max(0, deliveries - 1))
    delay = exp / 2 + (rng or random).uniform(0, exp / 2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, maximum))
    return delay
