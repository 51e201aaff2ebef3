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
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote

MASK = "***"
# Known secrets shorter than this are not masked as bare substrings (a one-letter
# password would mask every such letter of every message); their URL forms still are.
MIN_KNOWN = 4

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
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class KnownSecrets:
    """The secrets this process was given (Redis and proxy passwords, tokens), masked
    wherever they appear, whatever their characters: the URL patterns above cannot
    tell where a password with quotes, spaces, ``/``, ``#`` or ``?`` ends, and a
    library's message may quote a piece of a URL without its scheme. Each secret is
    kept as given, percent-decoded and percent-encoded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: tuple[str, ...] = ()

    def add(self, secret: str | None) -> None:
        if not secret:
            return
        forms = {secret, unquote(secret), quote(unquote(secret), safe="")}
        with self._lock:
            known = set(self._values) | {f for f in forms if len(f) >= MIN_KNOWN}
            self._values = tuple(sorted(known, key=len, reverse=True))  # longest first

    def mask(self, text: str) -> str:
        for secret in self._values:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


KNOWN = KnownSecrets()


def _userinfo(url: str) -> tuple[int, int] | None:
    """Where the user information of ``url`` is (``user:password`` between
    ``scheme://`` and the LAST ``@``: a host holds none), as read the way a person
    means it; None when it has no password there. A user name never holds / ? # (they
    would be encoded): an '@' after one is in a path or query
    (``https://docs.example.org/a:b@c``), not after a password."""
    match = _SCHEME.match(url)
    if not match or "@" not in url:
        return None
    start, cut = match.end(), url.rindex("@")
    user, colon, password = url[start:cut].partition(":")
    if colon and password and not any(c in user for c in "/?#"):
        return start, cut
    return None


def url_password(url: str) -> str | None:
    """The password of ``url`` as written (not decoded): from its user information, else
    a ``?password=`` value. None: no password."""
    span = _userinfo(url)
    if span:
        return url[span[0] : span[1]].partition(":")[2]
    found = _QUERY.search(url)
    return found["value"] if found and found["value"] else None


def encode_userinfo(url: str) -> str:
    """``url`` with its user name and password percent-encoded where they hold
    characters that would end them early for a URL parser (``/ ? # @ :``, spaces,
    quotes...): ``redis://u:pa/ss@host`` means the password ``pa/ss``, which redis-py
    would read as host ``u``, port ``pa``. Existing ``%`` escapes are kept."""
    span = _userinfo(url)
    if not span:
        return url
    user, _, password = url[span[0] : span[1]].partition(":")
    safe = "%!$&()*+,;=-._~"  # RFC 3986 sub-delims and unreserved, but the quote

    return f"{url[: span[0]]}{quote(user, safe=safe)}:{quote(password, safe=safe)}{url[span[1] :]}"


def register_secret(secret: str | None) -> None:
    """Mask ``secret`` in every message of this process from now on."""
    KNOWN.add(secret)


def register_url(url: str | None) -> None:
    """Mask the password of ``url`` (as written, decoded and encoded) from now on."""
    if url:
        KNOWN.add(url_password(url))


def mask_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``, whatever characters it
    holds."""
    span = _userinfo(url)
    if span:
        user = url[span[0] : span[1]].partition(":")[0]
        url = f"{url[: span[0]]}{user}:{MASK}{url[span[1] :]}"
    return mask_secrets(url)


def mask_secrets(text: str) -> str:
    """``text`` with every known secret, URL password, ``?password=`` value and AUTH
    argument masked."""
    if not text:
        return text
    text = KNOWN.mask(text)
    if "@" in text:
        text = _USERINFO.sub(_mask_userinfo, text)
    if "=" in text:
        text = _QUERY.sub(lambda m: m["key"] + MASK, text)
    if "uth" in text or "UTH" in text:
        text = _AUTH.sub(lambda m: m["key"] + MASK, text)
    return text


def _mask_userinfo(match: re.Match[str]) -> str:
    if not match["password"] or match["password"] == MASK:  # nothing (more) to hide
        return match[0]
    return f"{match['scheme']}{match['user']}:{MASK}@"


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (then it must not go on a command line)."""
    return url_password(url) is not None or mask_secrets(url) != url


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
