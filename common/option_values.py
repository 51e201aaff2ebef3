"""How option values are read from text (flags and INVCRAWL_* variables alike): one
parser per kind of value, each raising ValueError with a message fit for the user.
Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable

from common.secrets import mask_url

CRAWL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false), got {text!r}")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"expected an integer >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise ValueError(f"expected a number > 0, got {value}")
    return value


def crawl_id(text: str) -> str:
    """One crawl id, or several separated by commas (``consume`` serves them all); each
    may be ``PROJECT@VERSION`` (resolved once Redis is up: invcrawl/commands.py)."""
    for one in text.split(","):
        crawl_ref(one)
    return text


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


def non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(f"expected a number >= 0, got {value}")
    return value


def sites(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split() if s)


def redis_url(text: str) -> str:
    if not re.match(r"^(redis|rediss|unix)://", text):
        raise ValueError(
            f"invalid Redis URL {mask_url(text)!r}: expected redis://host:port/db, rediss://... "
            "or unix:///path/to/socket"
        )
    return text


def slot_selection(text: str) -> str:
    if text == "auto" or re.match(r"^\d+(,\d+)*$", text):
        return text
    raise ValueError(f"expected 'auto' or a comma-separated list of slots, got {text!r}")


def partition(text: str) -> str:
    match = re.match(r"^(\d+)/(\d+)$", text)
    if not match or not (0 <= int(match[1]) < int(match[2])):
        raise ValueError(f"expected i/n with 0 <= i < n (e.g. 1/4), got {text!r}")
    return text


def duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``15m``, ``6h`` or ``1d``."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", text)
    if not match or float(match[1]) <= 0:
        raise ValueError(f"expected a duration such as 90s, 15m, 6h or 1d, got {text!r}")
    return float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]


def cursor(text: str) -> str:
    if not re.match(r"^(0|\d+-\d+|\$)$", text):
        raise ValueError(
            f"expected a cursor printed by `invcrawl changes` (e.g. 1732400000000-0), got {text!r}"
        )
    return text


def hosts(text: str) -> tuple[str, ...]:
    hosts = tuple(h.strip().lower() for h in re.split(r"[\s,]+", text) if h.strip())
    for host in hosts:
        if not re.match(r"^[a-z0-9._\-\[\]:]+$", host):
            raise ValueError(f"expected host names (e.g. cdn.example.org), got {host!r}")
    return hosts


def task_ids(text: str) -> tuple[str, ...]:
    return tuple(t for t in re.split(r"[\s,]+", text) if t)


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"expected a TCP port 0-65535, got {value}")
    return value


def choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse
