from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from scrapy import exceptions as scrapy_exceptions
from scrapy.exceptions import IgnoreRequest
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TimeoutError

from invcrawl.fetch.failures import (
    backoff_delay,
    classify_exception,
    classify_status,
    parse_retry_after,
)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (200, "extract"),
        (203, "extract"),
        (404, "not_found"),
        (410, "not_found"),
        (429, "retry"),
        (500, "retry"),
        (503, "retry"),
        (408, "retry"),
        (599, "retry"),
        (403, "dead"),
        (401, "dead"),
        (400, "dead"),
        (301, "dead"),
    ],
)
def test_status_classification(status: int, kind: str) -> None:
    assert classify_status(status).kind == kind


def test_retry_after_is_honoured_in_seconds_and_dates() -> None:
    assert classify_status(429, "120").retry_after == 120.0
    now = datetime(2026, 1, 1, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(date, now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after("soon") is None


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TimeoutError(), "retry"),
        (scrapy_exceptions.DownloadTimeoutError("t"), "retry"),
        (scrapy_exceptions.DownloadConnectionRefusedError("r"), "retry"),
        (scrapy_exceptions.CannotResolveHostError("d"), "retry"),
        (scrapy_exceptions.DownloadFailedError("f"), "retry"),
        (scrapy_exceptions.ResponseDataLossError("l"), "retry"),
        (ConnectionRefusedError(), "retry"),
        (DNSLookupError(), "retry"),
        (ConnectionResetError(), "retry"),
        (FileNotFoundError(2, "No such file or directory"), "not_found"),
        (IgnoreRequest("Forbidden by robots.txt"), "skipped"),
        (ValueError("bug"), "dead"),
    ],
)
def test_exception_classification(exc: BaseException, kind: str) -> None:
    assert classify_exception(exc).kind == kind


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    rng = random.Random(1)
    for deliveries, expected in [(1, 2.0), (2, 4.0), (3, 8.0), (10, 300.0)]:
        delays = [backoff_delay(deliveries, 2.0, 300.0, rng=rng) for _ in range(200)]
        assert expected / 2 <= min(delays) and max(delays) <= expected
        assert max(delays) - min(delays) > expected / 10  # really jittered
    assert backoff_delay(1, 2.0, 300.0, retry_after=60.0) == 60.0
    assert backoff_delay(1, 2.0, 300.0, retry_after=10_000.0) == 300.0
