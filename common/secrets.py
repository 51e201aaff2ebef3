"""Masking credentials before anything is printed, logged or stored.

A Redis URL (``redis://user:s3cret@host:6379/0``, ``rediss://:s3cret@host``,
``redis://host?password=s3cret``) or a proxy URL (``http://user:pw@proxy:3128``) may
carry a password. Every message invcrawl shows (one-line errors, log lines, ``status``,
dead-letter reasons) goes through :func:`mask_secrets`; :func:`mask_url` masks one URL.
The user name stays visible (it says which ACL user is meant), the password becomes
``***``.

:class:`MaskingRecordFactory` applies the same masking to every log record of a
process (Scrapy logs its overridden settings, which include ``REDIS_URL``, and
exceptions may quote a URL), when a handler formats it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

MASK = "***"

# scheme://user:password@  (user may be empty; the password runs to the last '@' before
# the host part, so a password containing '@' or ':' is masked whole)
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s'\"]*):(?P<password>[^\s'\"/]*)@"
    r"(?=[^\s'\"@]*(?:[\s'\"]|$))"
)
# a password given as a query parameter (redis-py accepts ?password=...)
_QUERY = re.compile(r"(?P<key>[?&](?:password|pass|passwd|pwd)=)(?P<value>[^&\s'\"#]*)", re.I)
# a password-like value after a Redis AUTH command or an Authorization header
_AUTH = re.compile(
    r"(?P<key>\b(?:AUTH|Proxy-Authorization:\s*Basic)\s+)(?P<value>\S+(?:\s+\S+)?)", re.I
)


def mask_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``."""
    return mask_secrets(url)


def mask_secrets(text: str) -> str:
    """``text`` with every URL password, ``?password=`` value and AUTH argument masked."""
    if not text:
        return text
    if "@" in text:
        text = _USERINFO.sub(_mask_userinfo, text)
    if "=" in text:
        text = _QUERY.sub(lambda m: m["key"] + MASK, text)
    if "uth" in text or "UTH" in text:
        text = _AUTH.sub(lambda m: m["key"] + MASK, text)
    return text


def _mask_userinfo(match: re.Match[str]) -> str:
    if not match["password"]:  # "user:@host": nothing to hide
        return match[0]
    return f"{match['scheme']}{match['user']}:{MASK}@"


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (then it must not go on a command line)."""
    return mask_secrets(url) != url


class MaskedLogRecord(logging.LogRecord):
    """A log record whose message and exception text come out masked. Masking happens
    when a handler formats the record, so records that no handler emits (Scrapy's
    DEBUG lines under ``--log-level WARNING``) cost nothing more."""

    def getMessage(self) -> str:
        return mask_secrets(super().getMessage())

    @property
    def exc_text(self) -> str | None:
        return self.__dict__.get("_masked_exc_text")

    @exc_text.setter
    def exc_text(self, value: str | None) -> None:
        self.__dict__["_masked_exc_text"] = mask_secrets(value) if value else value


class MaskingRecordFactory:
    """A ``logging`` record factory making every record a :class:`MaskedLogRecord`."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        if type(record) is logging.LogRecord:  # (a custom record class is left alone)
            exc_text = record.__dict__.pop("exc_text", None)
            record.__class__ = MaskedLogRecord
            record.exc_text = exc_text
        return record


def install_log_masking() -> None:
    """Mask secrets in every log record of this process (idempotent)."""
    current = logging.getLogRecordFactory()
    if not isinstance(current, MaskingRecordFactory):
        logging.setLogRecordFactory(MaskingRecordFactory(current))
