"""Typed configuration, built once per process: CLI flags > INVCRAWL_* env vars > defaults.

Three tables, one place each:

* :class:`Config`: every setting with its type and its default (written only here);
* :data:`COMMANDS`: every command, what it does and what it needs (Redis, Scrapy);
* :data:`OPTIONS`: every flag, its parser, help text and the commands that take it.

The CLI builds its parser and dispatch from the last two, :func:`load_config` resolves
values (flag, else variable, else the :class:`Config` default), and
``docs/configuration.md`` is generated from them (a test keeps the document in sync).
This module is the only place in invcrawl that reads ``os.environ``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from common.secrets import mask_url

CRAWL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class ConfigError(ValueError):
    """A user-facing, one-line configuration error."""


# -- the settings ----------------------------------------------------------------------


def _default_consumers() -> int:
    return max(2, os.cpu_count() or 2)


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved settings of one process. Build it with :func:`load_config`."""

    site: str | None = None
    sites: tuple[str, ...] = ()
    sites_file: Path | None = None
    redis: str | None = None
    redis_cluster: bool = False
    crawl_id: str | None = None
    slots: int = 16
    consumer_slots: str = "auto"
    partition: str | None = None
    burst: bool = False
    consume: bool = False
    consumers: int = field(default_factory=_default_consumers)
    concurrency: int = 8
    host_concurrency: int = 4
    host_delay: float = 0.0
    weight: int | None = None  # None: the crawl's own (1 for a new crawl)
    retain_items: str | None = None  # None: the crawl's own ("all" for a new crawl)
    lease: float = 30.0
    task_deadline: float = 300.0
    max_tries: int = 5
    backoff_base: float = 2.0
    backoff_max: float = 300.0
    robots: bool = True
    download_timeout: float = 30.0
    user_agent: str = "invcrawl/0.1 (+https://github.com/invcrawl/invcrawl)"
    data_dir: Path = field(default_factory=lambda: Path(".invcrawl"))
    fsync: str = "always"
    output: Path | None = None
    out_dir: Path = field(default_factory=lambda: Path("."))
    follow: bool = False
    group: str = "export"
    base: Path | None = None
    json: bool = False
    watch: bool = False
    progress: str = "auto"
    log_level: str = "WARNING"
    max_inflated_mb: int = 64
    dlq_action: str = "list"
    task_ids: tuple[str, ...] = ()
    all_tasks: bool = False
    bind: str = "127.0.0.1"
    port: int = 8780
    dashboard_token: str | None = field(default=None, repr=False)  # a secret
    refresh: bool = False
    force: bool = False
    every: float | None = None
    since: str | None = None
    redis_wait: float = 60.0
    redis_ca: Path | None = None
    redis_cert: Path | None = None
    redis_key: Path | None = None
    allow_hosts: tuple[str, ...] = ()
    extract_budget: float = 15.0

    @property
    def lease_ms(self) -> int:
        return int(self.lease * 1000)

    @property
    def crawl_ids(self) -> tuple[str, ...]:
        """``--crawl-id`` as a list (a consumer may be pinned to several crawls)."""
        return tuple(c for c in (self.crawl_id or "").split(",") if c)

    def pinned_slots(self, slot_count: int) -> list[int] | None:
        """The slots a consumer is pinned to, or None for automatic assignment."""
        if self.partition:
            index, total = (int(x) for x in self.partition.split("/"))
            return [s for s in range(slot_count) if s % total == index]
        if self.consumer_slots != "auto":
            return sorted({int(s) for s in self.consumer_slots.split(",")})
        return None


def default_of(name: str) -> Any:
    """The default of a :class:`Config` field (the only place defaults are written)."""
    spec = Config.__dataclass_fields__[name]
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


# -- the commands ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    """One ``invcrawl`` command; its handler is ``invcrawl.commands.cmd_<name>``."""

    name: str
    help: str
    redis: bool = True  # talks to Redis (takes --redis, --data-dir...)
    crawls: bool = False  # runs Scrapy: fetches pages or inventories


COMMANDS: tuple[Command, ...] = (
    Command(
        "crawl",
        "all-in-one: produce, run N consumers, show progress, write JSON Lines",
        crawls=True,
    ),
    Command("produce", "read a site's objects.inv and enqueue one task per page", crawls=True),
    Command(
        "consume", "claim page tasks, fetch, extract, commit items (one per process)", crawls=True
    ),
    Command("status", "show crawls, progress, per-slot queues, consumers, rate and ETA"),
    Command("export", "write the latest version of every item as JSON Lines"),
    Command("dashboard", "serve a read-only live web page of every crawl, host and consumer"),
    Command("changes", "print added, changed and removed items (JSON Lines) since a cursor"),
    Command("dlq", "list or redrive dead-lettered pages"),
    Command("reshard", "move queued and delayed tasks to a new slot count"),
    Command("report", "extraction coverage per domain:role (statuses, empty signatures/docs)"),
    Command("inventory", "load and summarise an objects.inv (no Redis)", redis=False),
)
COMMAND_NAMES = frozenset(c.name for c in COMMANDS)
_REDIS = frozenset(c.name for c in COMMANDS if c.redis)
_CRAWLERS = frozenset(c.name for c in COMMANDS if c.crawls)
_RUNNERS = frozenset({"crawl", "produce", "consume"})  # deliver pages: leases, retries


# -- the options -----------------------------------------------------------------------


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
    """One crawl id, or several separated by commas (``consume`` serves them all)."""
    for crawl_id in text.split(","):
        if not CRAWL_ID_RE.match(crawl_id):
            raise ValueError(
                f"invalid crawl id {crawl_id!r}: use letters, digits, '.', '_' and '-' (max 100)"
            )
    return text


def _non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(f"expected a number >= 0, got {value}")
    return value


def _sites(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split() if s)


def _redis_url(text: str) -> str:
    if not re.match(r"^(redis|rediss|unix)://", text):
        raise ValueError(
            f"invalid Redis URL {mask_url(text)!r}: expected redis://host:port/db, rediss://... "
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


def _duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``15m``, ``6h`` or ``1d``."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", text)
    if not match or float(match[1]) <= 0:
        raise ValueError(f"expected a duration such as 90s, 15m, 6h or 1d, got {text!r}")
    return float(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]


def _cursor(text: str) -> str:
    if not re.match(r"^(0|\d+-\d+|\$)$", text):
        raise ValueError(
            f"expected a cursor printed by `invcrawl changes` (e.g. 1732400000000-0), got {text!r}"
        )
    return text


def _hosts(text: str) -> tuple[str, ...]:
    hosts = tuple(h.strip().lower() for h in re.split(r"[\s,]+", text) if h.strip())
    for host in hosts:
        if not re.match(r"^[a-z0-9._\-\[\]:]+$", host):
            raise ValueError(f"expected host names (e.g. cdn.example.org), got {host!r}")
    return hosts


def _task_ids(text: str) -> tuple[str, ...]:
    return tuple(t for t in re.split(r"[\s,]+", text) if t)


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"expected a TCP port 0-65535, got {value}")
    return value


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    return parse


@dataclass(frozen=True, slots=True)
class Option:
    """One setting as the user gives it: flags (none: positional), environment variable,
    parser, help, and the commands that take it. Its default is the Config field's."""

    name: str
    parse: Callable[[str], Any]
    help: str
    commands: frozenset[str]
    flags: tuple[str, ...] = ()  # () = the default: --name-with-dashes
    metavar: str | None = None
    positional: bool = False
    many: bool = False  # a positional taking any number of values
    switch: bool | None = None  # a flag without a value; the value it sets
    inherited: bool = False  # passed on to the consumer processes `crawl` starts
    default_text: str | None = None  # how docs show a computed default

    @property
    def env(self) -> str:
        return "INVCRAWL_" + self.name.upper()

    @property
    def flag(self) -> str:
        """The first flag (or the metavar of a positional), as docs show it."""
        if self.positional:
            return self.metavar or self.name
        return self.flags[0] if self.flags else "--" + self.name.replace("_", "-")

    @property
    def all_flags(self) -> tuple[str, ...]:
        return self.flags or (self.flag,)

    @property
    def default(self) -> Any:
        return default_of(self.name)


OPTIONS: tuple[Option, ...] = (
    Option(
        "site",
        str,
        "docs base URL, objects.inv URL, or local directory/file",
        frozenset({"inventory"}),
        positional=True,
        metavar="SITE",
    ),
    Option(
        "sites",
        _sites,
        "docs base URLs, objects.inv URLs or local directories: one crawl each",
        frozenset({"crawl", "produce"}),
        positional=True,
        many=True,
        metavar="SITE",
    ),
    Option(
        "sites_file",
        Path,
        "a file of sites, one per line (# starts a comment), added to SITE...",
        frozenset({"crawl", "produce"}),
        ("--sites",),
        metavar="FILE",
    ),
    Option(
        "dlq_action",
        _choice("list", "redrive"),
        "list the dead-lettered pages, or put them back in their queues",
        frozenset({"dlq"}),
        positional=True,
        metavar="list|redrive",
    ),
    Option(
        "task_ids",
        _task_ids,
        "dead task ids to redrive",
        frozenset({"dlq"}),
        positional=True,
        many=True,
        metavar="TASK_ID",
    ),
    Option(
        "all_tasks", _bool, "redrive every dead task", frozenset({"dlq"}), ("--all",), switch=True
    ),
    Option(
        "redis",
        _redis_url,
        "Redis URL; without it an embedded redis-server is started in --data-dir",
        _REDIS,
        metavar="URL",
        inherited=True,
    ),
    Option(
        "redis_cluster",
        _bool,
        "--redis names a node of a Redis Cluster (each crawl's keys live on one shard)",
        _REDIS,
        switch=True,
        inherited=True,
    ),
    Option(
        "crawl_id",
        _crawl_id,
        "crawl id (default: derived from the site URL, or the only crawl in Redis); "
        "consume takes a comma-separated list and serves those crawls only",
        _REDIS,
        metavar="ID",
    ),
    Option(
        "slots",
        _positive_int,
        "number of queue slots of a new crawl",
        frozenset({"crawl", "produce", "reshard"}),
        metavar="S",
        inherited=True,
    ),
    Option(
        "consumer_slots",
        _slot_selection,
        "slots this consumer serves: 'auto' (shared through Redis) or a list like 0,3",
        frozenset({"consume"}),
        ("--slots",),  # consume has no --slots of its own (that one is a crawl's count)
        metavar="auto|LIST",
    ),
    Option(
        "partition",
        _partition,
        "serve the slots s with s %% n == i",
        frozenset({"consume"}),
        metavar="i/n",
    ),
    Option(
        "burst",
        _bool,
        "exit 0 once the crawls it serves are complete",
        frozenset({"consume"}),
        switch=True,
    ),
    Option(
        "consume",
        _bool,
        "then consume until the crawl is complete (the producer runs in a forked child)",
        frozenset({"produce"}),
        switch=True,
    ),
    Option(
        "consumers",
        _positive_int,
        "consumer processes to run",
        frozenset({"crawl"}),
        metavar="N",
        default_text="auto (CPU count, min 2)",
    ),
    Option(
        "concurrency",
        _positive_int,
        "pages in flight per consumer",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "host_concurrency",
        _positive_int,
        "requests in flight per host across every consumer of the fleet",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "host_delay",
        _non_negative_float,
        "seconds between two request starts on a host, fleet-wide (robots.txt "
        "Crawl-delay raises it)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "weight",
        _positive_int,
        "share of the consumers' claims the crawl gets against the others (kept by later "
        "runs that do not give it)",
        frozenset({"crawl", "produce"}),
        metavar="N",
        inherited=True,
        default_text="1",
    ),
    Option(
        "retain_items",
        _choice("all", "exported"),
        "what the crawl keeps of its item stream: all (every version) or exported (an "
        "entry until every export group has acknowledged it; the export files then hold "
        "the items: docs/architecture.md); kept by later runs that do not give it",
        frozenset({"crawl", "produce"}),
        metavar="all|exported",
        inherited=True,
        default_text="all",
    ),
    Option(
        "lease",
        _positive_float,
        "task lease, seconds (renewed by a heartbeat)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "task_deadline",
        _positive_float,
        "hard per-task deadline, seconds: a lease is not renewed past it",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "max_tries",
        _positive_int,
        "deliveries of a task before it is dead-lettered",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "backoff_base",
        _positive_float,
        "first retry delay, seconds (doubles per try)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "backoff_max",
        _positive_float,
        "maximum retry delay, seconds",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "robots",
        _bool,
        "ignore robots.txt (obeyed by default; INVCRAWL_ROBOTS=0 also ignores it)",
        _RUNNERS,
        ("--no-robots",),
        switch=False,
        inherited=True,
    ),
    Option(
        "download_timeout",
        _positive_float,
        "HTTP timeout per request, seconds",
        _CRAWLERS | {"inventory"},
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "user_agent",
        str,
        "HTTP User-Agent",
        _CRAWLERS | {"inventory"},
        metavar="UA",
        inherited=True,
    ),
    Option(
        "data_dir",
        Path,
        "directory of the embedded Redis (AOF) and run files",
        _REDIS,
        metavar="DIR",
    ),
    Option(
        "fsync",
        _choice("always", "everysec"),
        "embedded Redis appendfsync policy",
        _REDIS,
        metavar="always|everysec",
    ),
    Option(
        "output",
        Path,
        "JSON Lines output file (crawl: one site only; default <crawl-id>.jsonl in --out-dir)",
        frozenset({"crawl", "export", "changes"}),
        ("-o", "--output"),
        metavar="FILE",
    ),
    Option(
        "out_dir",
        Path,
        "directory of the JSON Lines files of crawl, one <crawl-id>.jsonl per site",
        frozenset({"crawl"}),
        metavar="DIR",
    ),
    Option(
        "follow",
        _bool,
        "keep reading new and updated items (export: through a consumer group)",
        frozenset({"export", "changes"}),
        switch=True,
    ),
    Option(
        "bind",
        str,
        "address the dashboard listens on (anything but loopback requires --token, or a "
        "Redis user that can only read in --redis)",
        frozenset({"dashboard"}),
        metavar="ADDRESS",
    ),
    Option(
        "port",
        _port,
        "port of the dashboard (0: any free port)",
        frozenset({"dashboard"}),
        metavar="N",
    ),
    Option(
        "dashboard_token",
        str,
        "token the dashboard page asks for (or send Authorization: Bearer TOKEN); prefer "
        "the variable: flags show in ps",
        frozenset({"dashboard"}),
        ("--token",),
        metavar="TOKEN",
    ),
    Option(
        "refresh",
        _bool,
        "re-check a finished crawl: conditional GETs, only changed items, removed keys",
        frozenset({"crawl", "produce"}),
        switch=True,
        inherited=True,
    ),
    Option(
        "force",
        _bool,
        "with --refresh: fetch and extract every page again (no validators)",
        frozenset({"crawl", "produce"}),
        switch=True,
        inherited=True,
    ),
    Option(
        "every",
        _duration,
        "keep running and refresh every crawl on this period, jittered (e.g. 6h)",
        frozenset({"crawl", "produce"}),
        metavar="DURATION",
    ),
    Option(
        "since",
        _cursor,
        "print the changes after this cursor (default: from the start)",
        frozenset({"changes"}),
        metavar="CURSOR",
    ),
    Option(
        "group",
        str,
        "consumer group name for --follow",
        frozenset({"export"}),
        metavar="NAME",
    ),
    Option(
        "base",
        Path,
        "a crawl with --retain-items exported: its earlier complete export (e.g. the crawl's "
        "output file), merged with what the stream still holds",
        frozenset({"export"}),
        metavar="FILE",
    ),
    Option(
        "json",
        _bool,
        "print JSON",
        frozenset({"status", "inventory", "report", "dlq"}),
        switch=True,
    ),
    Option("watch", _bool, "refresh until the crawl finishes", frozenset({"status"}), switch=True),
    Option(
        "progress",
        _choice("auto", "bar", "lines", "none"),
        "progress display (auto: a bar on a terminal, lines otherwise)",
        frozenset({"crawl"}),
        metavar="MODE",
    ),
    Option(
        "log_level",
        _choice("DEBUG", "INFO", "WARNING", "ERROR"),
        "log level of the Scrapy processes",
        COMMAND_NAMES,
        metavar="LEVEL",
        inherited=True,
    ),
    Option(
        "max_inflated_mb",
        _positive_int,
        "refuse inventories inflating beyond this",
        frozenset({"crawl", "produce", "inventory"}),
        metavar="MB",
        inherited=True,
    ),
    Option(
        "redis_wait",
        _non_negative_float,
        "at start-up, retry connecting to Redis with backoff for up to this many seconds "
        "(0: fail at once)",
        _REDIS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "redis_ca",
        Path,
        "CA certificate file that signed the Redis server's certificate (rediss:// URLs)",
        _REDIS,
        metavar="FILE",
        inherited=True,
    ),
    Option(
        "redis_cert",
        Path,
        "client certificate file for Redis over TLS (with --redis-key)",
        _REDIS,
        metavar="FILE",
        inherited=True,
    ),
    Option(
        "redis_key",
        Path,
        "private key file of --redis-cert",
        _REDIS,
        metavar="FILE",
        inherited=True,
    ),
    Option(
        "allow_hosts",
        _hosts,
        "other hosts pages may be fetched from or redirect to, comma-separated (e.g. a "
        "docs CDN); by default only the site's own origin",
        _RUNNERS,
        ("--allow-host",),
        metavar="HOST[,HOST]",
        inherited=True,
    ),
    Option(
        "extract_budget",
        _non_negative_float,
        "seconds extracting one page may take (keep it below --lease); a page past it is "
        "retried, then dead-lettered (0: no limit)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
)

OPTIONS_BY_NAME = {o.name: o for o in OPTIONS}


def load_config(
    cli: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Resolve every option: a CLI value that is not None wins, then INVCRAWL_<NAME>,
    then the :class:`Config` default.

    CLI values arrive already typed (argparse applies the same parsers); environment
    values are parsed here, and a bad one raises ConfigError naming the variable.
    """
    cli = cli or {}
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for spec in fields(Config):
        option = OPTIONS_BY_NAME[spec.name]
        if cli.get(option.name) is not None:
            values[option.name] = cli[option.name]
        elif option.env in env and env[option.env] != "":
            try:
                values[option.name] = option.parse(env[option.env])
            except ValueError as exc:
                raise ConfigError(f"{option.env}: {exc}") from None
    config = Config(**values)
    if config.backoff_max < config.backoff_base:
        raise ConfigError("--backoff-max must be at least --backoff-base")
    return config


def configuration_table() -> str:
    """The Markdown table of every option (docs/configuration.md embeds it)."""
    rows = [
        "| flag | environment variable | default | commands | meaning |",
        "|---|---|---|---|---|",
    ]
    for o in OPTIONS:
        default = o.default_text or o.default
        if isinstance(default, tuple):
            default = " ".join(default) or "none"
        rows.append(
            f"| `{o.flag}` | `{o.env}` | `{default}` | {', '.join(sorted(o.commands))} | "
            f"{o.help.replace('%%', '%')} |"
        )
    return "\n".join(rows) + "\n"


def update_configuration_doc(text: str) -> str:
    """``docs/configuration.md`` with its option table regenerated (the table runs from
    its header row to the first blank line)."""
    start = text.index("| flag | environment variable |")
    end = text.find("\n\n", start)
    return text[:start] + configuration_table() + (text[end + 1 :] if end != -1 else "")


if __name__ == "__main__":  # python -m common.config docs/configuration.md
    import sys

    doc = Path(sys.argv[1])
    doc.write_text(update_configuration_doc(doc.read_text(encoding="utf-8")), encoding="utf-8")
