"""How option values are read from text (flags and INVCRAWL_* variables alike): one
parser per kind of value, each raising ValueError with a message fit for the user.
Pure: no I/O."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from invcrawl.process.secrets import encode_userinfo, mask_url

CRAWL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false), got {text!r}")


def _number(text: str, kind: type[int] | type[float], expected: str) -> float:
    """``text`` as an int or a float, or a ValueError that says what was expected (not
    Python's ``invalid literal for int() with base 10``)."""
    try:
        value = kind(text.strip())
    except ValueError:
        raise ValueError(f"expected {expected}, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected {expected}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = int(_number(text, int, "an integer >= 1"))
    if value < 1:
        raise ValueError(f"expected an integer >= 1, got {value}")
    return value


def answer_chars(text: str) -> int:
    """``mcp --max-chars``: 2,000 to 1,000,000 (mcpserver/bounded.py's range)."""
    value = int(_number(text, int, "an integer"))
    if not 2_000 <= value <= 1_000_000:
        raise ValueError(f"expected an integer from 2000 to 1000000, got {value}")
    return value


def positive_float(text: str) -> float:
    value = _number(text, float, "a number > 0")
    if value <= 0:
        raise ValueError(f"expected a number > 0, got {value:g}")
    return value


def crawl_id(text: str) -> tuple[str, ...]:
    """One crawl id, or several separated by commas (``consume`` serves them all); each
    may be ``PROJECT@VERSION`` (resolved once Redis is up: invcrawl/live_redis.py)."""
    return tuple(crawl_ref(one) for one in text.split(","))


def crawl_ref(text: str) -> str:
    """A crawl id, or ``PROJECT@VERSION`` of a crawl (docs/versions.md)."""
    project, at, version = text.rpartition("@")
    if at and project.strip() and version.strip():
        return text
    if not CRAWL_ID_RE.match(text):
        raise ValueError(
            f"invalid crawl id {text!r}: use letters, digits, '.', '_' and '-' (max 100), "
            "or PROJECT@VERSION"
        )
    return text


def crawl_ids(text: str) -> tuple[str, ...]:
    """Crawl ids given as positionals (each validated like ``--crawl-id``)."""
    return tuple(crawl_ref(one) for one in re.split(r"[\s,]+", text) if one)


def non_negative_float(text: str) -> float:
    value = _number(text, float, "a number >= 0")
    if value < 0:
        raise ValueError(f"expected a number >= 0, got {value:g}")
    return value


def site(text: str) -> tuple[str, ...]:
    """One command-line SITE: the argument whole (a path may hold spaces; the shell
    already split the command line)."""
    return (text,) if text.strip() else ()


def sites(text: str) -> tuple[str, ...]:
    """The sites of ``INVCRAWL_SITES``: one per line when the value has several lines (a
    path holding a space), else separated by white space."""
    parts = text.splitlines() if "\n" in text.strip() else text.split()
    return tuple(s.strip() for s in parts if s.strip())


def redis_url(text: str) -> str:
    """A Redis URL, its user information percent-encoded where a URL parser would cut it
    short (``load_config`` registers its password for masking)."""
    if not re.match(r"^(redis|rediss|unix)://", text):
        raise ValueError(
            f"invalid Redis URL {mask_url(text)!r}: expected redis://host:port/db, rediss://... "
            "or unix:///path/to/socket"
        )
    return encode_userinfo(text)


def slot_selection(text: str) -> tuple[int, ...]:
    """The slots a consumer serves, sorted: ``0,3``; ``auto`` (shared through Redis) is
    ``()``."""
    if text == "auto":
        return ()
    if re.match(r"^\d+(,\d+)*$", text):
        return tuple(sorted({int(s) for s in text.split(",")}))
    raise ValueError(f"expected 'auto' or a comma-separated list of slots, got {text!r}")


def partition(text: str) -> tuple[int, int]:
    """``i/n``: the slots s with s % n == i, as ``(i, n)``."""
    match = re.match(r"^(\d+)/(\d+)$", text)
    if not match or not (0 <= int(match[1]) < int(match[2])):
        raise ValueError(f"expected i/n with 0 <= i < n (e.g. 1/4), got {text!r}")
    return int(match[1]), int(match[2])


def duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``15m``, ``6h`` or ``1d``."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", text)
    if not match or float(match[1]) <= 0:
        raise ValueError(f"expected a duration such as 90s, 15m, 6h or 1d, got {text!r}")
    return float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]


AUTO = "auto"


def every(text: str) -> float | str:
    """A refresh period (:func:`duration`), or ``auto``: each crawl its own interval,
    adapted to how often it changes (``common/refresh_interval.py``)."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        return duration(text)
    except ValueError:
        raise ValueError(
            f"expected a duration such as 90s, 15m, 6h or 1d, or 'auto', got {text!r}"
        ) from None


STREAM_ID_RE = re.compile(r"^\d+-\d+$")


def cursor(text: str) -> str:
    """A position in the change feed: ``0`` (the start), ``$`` (what comes next), a
    stream entry id (``1732400000000-0``), or the cursor of several crawls that
    ``invcrawl changes`` prints without ``--crawl-id``: ``CRAWL=ID,CRAWL=ID...``
    (``frontier/changes.py``)."""
    if text in ("0", "$") or STREAM_ID_RE.match(text):
        return text
    parts = [part.partition("=") for part in text.split(",")]
    if all(sep and CRAWL_ID_RE.match(c) and STREAM_ID_RE.match(i) for c, sep, i in parts):
        return text
    raise ValueError(
        f"expected a cursor printed by `invcrawl changes` (e.g. 1732400000000-0), got {text!r}"
    )


def hosts(text: str) -> tuple[str, ...]:
    hosts = tuple(h.strip().lower() for h in re.split(r"[\s,]+", text) if h.strip())
    for host in hosts:
        if not re.match(r"^[a-z0-9._\-\[\]:]+$", host):
            raise ValueError(f"expected host names (e.g. cdn.example.org), got {host!r}")
    return hosts


def task_ids(text: str) -> tuple[str, ...]:
    return tuple(t for t in re.split(r"[\s,]+", text) if t)


def port(text: str) -> int:
    value = int(_number(text, int, "a TCP port 0-65535"))
    if not 0 <= value <= 65535:
        raise ValueError(f"expected a TCP port 0-65535, got {value}")
    return value


def choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse
