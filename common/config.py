"""Typed configuration, built once per process: CLI flags > INVCRAWL_* env vars > defaults.

Every option is declared once in :data:`OPTIONS`. The CLI builds its flags from it,
:func:`load_config` resolves values from it, and ``docs/configuration.md`` is generated
from it (a test keeps the document and this table in sync). This module is the only
place in invcrawl that reads ``os.environ``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

CRAWL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class ConfigError(ValueError):
    """A user-facing, one-line configuration error."""


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false), got {text!r}")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"expected an integer >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise ValueError(f"expected a number > 0, got {value}")
    return value


def _crawl_id(text: str) -> str:
    if not CRAWL_ID_RE.match(text):
        raise ValueError(
            f"invalid crawl id {text!r}: use letters, digits, '.', '_' and '-' (max 100)"
        )
    return text


def _redis_url(text: str) -> str:
    if not re.match(r"^(redis|rediss|unix)://", text):
        raise ValueError(
            f"invalid Redis URL {text!r}: expected redis://host:port/db, rediss://... "
            "or unix:///path/to/socket"
        )
    return text


def _slot_selection(text: str) -> str:
    if text == "auto" or re.match(r"^\d+(,\d+)*$", text):
        return text
    raise ValueError(f"expected 'auto' or a comma-separated list of slots, got {text!r}")


def _partition(text: str) -> str:
    match = re.match(r"^(\d+)/(\d+)$", text)
    if not match or not (0 <= int(match[1]) < int(match[2])):
        raise ValueError(f"expected i/n with 0 <= i < n (e.g. 1/4), got {text!r}")
    return text


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: its CLI flag, its environment variable, its parser and default."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    commands: frozenset[str]
    flag: str | None = None  # None: positional argument
    metavar: str | None = None
    is_switch: bool = False  # a flag without a value (store_true/false)

    @property
    def env(self) -> str:
        return "INVCRAWL_" + self.name.upper()


_ALL = frozenset({"crawl", "produce", "consume", "status", "export", "dlq", "reshard", "report"})
_REDIS_USERS = _ALL
_RUNNERS = frozenset({"crawl", "produce", "consume"})


def _opt(
    name: str,
    parse: Callable[[str], Any],
    default: Any,
    help: str,
    commands: Any,
    *,
    flag: str | None = "",
    metavar: str | None = None,
    switch: bool = False,
) -> Option:
    return Option(
        name=name,
        parse=parse,
        default=default,
        help=help,
        commands=frozenset(commands),
        flag=("--" + name.replace("_", "-")) if flag == "" else flag,
        metavar=metavar,
        is_switch=switch,
    )


OPTIONS: tuple[Option, ...] = (
    _opt(
        "site",
        str,
        None,
        "docs base URL, objects.inv URL, or local directory/file",
        {"crawl", "produce", "inventory"},
        flag=None,
        metavar="SITE",
    ),
    _opt(
        "redis",
        _redis_url,
        None,
        "Redis URL; without it an embedded redis-server is started in --data-dir",
        _REDIS_USERS,
        metavar="URL",
    ),
    _opt(
        "crawl_id",
        _crawl_id,
        None,
        "crawl id (default: derived from the site URL, or the only crawl in Redis)",
        _ALL,
        metavar="ID",
    ),
    _opt(
        "slots",
        _positive_int,
        16,
        "number of queue slots of a new crawl",
        {"crawl", "produce", "reshard"},
        metavar="S",
    ),
    _opt(
        "consumer_slots",
        _slot_selection,
        "auto",
        "slots this consumer serves: 'auto' (shared through Redis) or a list like 0,3",
        {"consume"},
        flag="--slots",  # consume has no --slots of its own (that one is a crawl's count)
        metavar="auto|LIST",
    ),
    _opt(
        "partition",
        _partition,
        None,
        "serve the slots s with s %% n == i",
        {"consume"},
        metavar="i/n",
    ),
    _opt("burst", _bool, False, "exit 0 once the crawl is complete", {"consume"}, switch=True),
    _opt(
        "consume",
        _bool,
        False,
        "then consume until the crawl is complete (the producer runs in a forked child)",
        {"produce"},
        switch=True,
    ),
    _opt(
        "consumers",
        _positive_int,
        max(2, os.cpu_count() or 2),
        "consumer processes to run",
        {"crawl"},
        metavar="N",
    ),
    _opt("concurrency", _positive_int, 8, "pages in flight per consumer", _RUNNERS, metavar="N"),
    _opt(
        "lease",
        _positive_float,
        30.0,
        "task lease, seconds (renewed by a heartbeat)",
        _RUNNERS,
        metavar="SECONDS",
    ),
    _opt(
        "task_deadline",
        _positive_float,
        300.0,
        "hard per-task deadline, seconds: a lease is not renewed past it",
        _RUNNERS,
        metavar="SECONDS",
    ),
    _opt(
        "max_tries",
        _positive_int,
        5,
        "deliveries of a task before it is dead-lettered",
        {"crawl", "produce", "consume"},
        metavar="N",
    ),
    _opt(
        "backoff_base",
        _positive_float,
        2.0,
        "first retry delay, seconds (doubles per try)",
        _RUNNERS,
        metavar="SECONDS",
    ),
    _opt(
        "backoff_max",
        _positive_float,
        300.0,
        "maximum retry delay, seconds",
        _RUNNERS,
        metavar="SECONDS",
    ),
    _opt(
        "robots",
        _bool,
        True,
        "ignore robots.txt (obeyed by default; INVCRAWL_ROBOTS=0 also ignores it)",
        _RUNNERS,
        flag="--no-robots",
        switch=True,
    ),
    _opt(
        "download_timeout",
        _positive_float,
        30.0,
        "HTTP timeout per request, seconds",
        _RUNNERS | {"inventory"},
        metavar="SECONDS",
    ),
    _opt(
        "user_agent",
        str,
        "invcrawl/0.1 (+https://github.com/invcrawl/invcrawl)",
        "HTTP User-Agent",
        _RUNNERS | {"inventory"},
        metavar="UA",
    ),
    _opt(
        "data_dir",
        Path,
        Path(".invcrawl"),
        "directory of the embedded Redis (AOF) and run files",
        _ALL,
        metavar="DIR",
    ),
    _opt(
        "fsync",
        _choice("always", "everysec"),
        "always",
        "embedded Redis appendfsync policy",
        _ALL,
        metavar="always|everysec",
    ),
    _opt(
        "output",
        Path,
        None,
        "JSON Lines output file (default: <crawl-id>.jsonl for crawl)",
        {"crawl", "export"},
        flag="-o",
        metavar="FILE",
    ),
    _opt(
        "follow",
        _bool,
        False,
        "keep reading new and updated items through a consumer group",
        {"export"},
        switch=True,
    ),
    _opt("group", str, "export", "consumer group name for --follow", {"export"}, metavar="NAME"),
    _opt("json", _bool, False, "print JSON", {"status", "inventory", "report", "dlq"}, switch=True),
    _opt("watch", _bool, False, "refresh until the crawl finishes", {"status"}, switch=True),
    _opt(
        "progress",
        _choice("auto", "bar", "lines", "none"),
        "auto",
        "progress display (auto: a bar on a terminal, lines otherwise)",
        {"crawl"},
        metavar="MODE",
    ),
    _opt(
        "log_level",
        _choice("DEBUG", "INFO", "WARNING", "ERROR"),
        "WARNING",
        "log level of the Scrapy processes",
        _ALL | {"inventory"},
        metavar="LEVEL",
    ),
    _opt(
        "max_inflated_mb",
        _positive_int,
        64,
        "refuse inventories inflating beyond this",
        {"crawl", "produce", "inventory"},
        metavar="MB",
    ),
)

OPTIONS_BY_NAME = {o.name: o for o in OPTIONS}


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved settings of one process. Build it with :func:`load_config`."""

    site: str | None = None
    redis: str | None = None
    crawl_id: str | None = None
    slots: int = 16
    consumer_slots: str = "auto"
    partition: str | None = None
    burst: bool = False
    consume: bool = False
    consumers: int = 2
    concurrency: int = 8
    lease: float = 30.0
    task_deadline: float = 300.0
    max_tries: int = 5
    backoff_base: float = 2.0
    backoff_max: float = 300.0
    robots: bool = True
    download_timeout: float = 30.0
    user_agent: str = "invcrawl/0.1"
    data_dir: Path = field(default_factory=lambda: Path(".invcrawl"))
    fsync: str = "always"
    output: Path | None = None
    follow: bool = False
    group: str = "export"
    json: bool = False
    watch: bool = False
    progress: str = "auto"
    log_level: str = "WARNING"
    max_inflated_mb: int = 64

    @property
    def lease_ms(self) -> int:
        return int(self.lease * 1000)

    def pinned_slots(self, slot_count: int) -> list[int] | None:
        """The slots a consumer is pinned to, or None for automatic assignment."""
        if self.partition:
            index, total = (int(x) for x in self.partition.split("/"))
            return [s for s in range(slot_count) if s % total == index]
        if self.consumer_slots != "auto":
            return sorted({int(s) for s in self.consumer_slots.split(",")})
        return None


def load_config(
    cli: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Resolve every option: a CLI value that is not None wins, then INVCRAWL_<NAME>.

    CLI values arrive already typed (argparse applies the same parsers); environment
    values are parsed here, and a bad one raises ConfigError naming the variable.
    """
    cli = cli or {}
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    known = {f.name for f in fields(Config)}
    for option in OPTIONS:
        if option.name not in known:
            continue
        if cli.get(option.name) is not None:
            values[option.name] = cli[option.name]
        elif option.env in env and env[option.env] != "":
            try:
                values[option.name] = option.parse(env[option.env])
            except ValueError as exc:
                raise ConfigError(f"{option.env}: {exc}") from None
        else:
            values[option.name] = option.default
    if values["backoff_max"] < values["backoff_base"]:
        raise ConfigError("--backoff-max must be at least --backoff-base")
    return Config(**values)


def configuration_table() -> str:
    """The Markdown table of every option (docs/configuration.md embeds it)."""
    rows = [
        "| flag | environment variable | default | commands | meaning |",
        "|---|---|---|---|---|",
    ]
    for o in OPTIONS:
        flag = o.flag or o.metavar or o.name
        default = "auto (CPU count, min 2)" if o.name == "consumers" else o.default
        rows.append(
            f"| `{flag}` | `{o.env}` | `{default}` | {', '.join(sorted(o.commands))} | "
            f"{o.help.replace('%%', '%')} |"
        )
    return "\n".join(rows) + "\n"
