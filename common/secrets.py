"""Masking credentials before anything is printed, logged or stored.

A Redis URL (``redis://user:s3cret@host:6379/0``, ``rediss://:s3cret@host``,
``redis://host?password=s3cret``) or a proxy URL (``http://user:pw@proxy:3128``) may
carry a password. Every message invcrawl shows (one-line errors, log lines, ``status``,
dead-letter reasons) goes through :func:`mask_secrets`; :func:`mask_url` masks one URL.
The user name stays visible (it says which ACL user is meant), the password becomes
``***``.

:class:`MaskingRecordFactory` applies the same masking to every log record of a
process (Scrapy logs its overridden settings, which include ``REDIS_URL``, and
exceptions may quote a URL).
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


class MaskingRecordFactory:
    """A ``logging`` record factory that masks secrets in the formatted message and in
    the exception text of every record (records are made only for enabled levels, so
    the cost is one format per emitted line)."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error path
            return record
        masked = mask_secrets(message)
        if masked != message or record.args:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = mask_secrets(text)
        return record


def install_log_masking() -> None:
    """Mask secrets in every log record of this process (idempotent)."""
    current = logging.getLogRecordFactory()
    if not isinstance(current, MaskingRecordFactory):
        logging.setLogRecordFactory(MaskingRecordFactory(current))
