"""The command and option tables: every ``invcrawl`` command, what it does and what it
needs; every option, its flags, environment variable, parser, help text and the commands
that take it. The CLI builds its parser and dispatch from them, ``common/config.py``
resolves values with them, and ``docs/configuration.md`` is generated from them. Each
option's default is its :class:`common.config.Config` field's (written only there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import option_values as values

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
    Command("versions", "list the projects in Redis and, for each, its versions (crawls)"),
    Command("diff", "compare two crawls symbol by symbol: typed API changes, breaking first"),
    Command("history", "a symbol across the versions of its project: typed changes per step"),
    Command("inventory", "load and summarise an objects.inv (no Redis)", redis=False),
)
COMMAND_NAMES = frozenset(c.name for c in COMMANDS)
_REDIS = frozenset(c.name for c in COMMANDS if c.redis)
_CRAWLERS = frozenset(c.name for c in COMMANDS if c.crawls)
_RUNNERS = frozenset({"crawl", "produce", "consume"})  # deliver pages: leases, retries


# -- the options -----------------------------------------------------------------------


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
        values.sites,
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
        values.choice("list", "redrive"),
        "list the dead-lettered pages, or put them back in their queues",
        frozenset({"dlq"}),
        positional=True,
        metavar="list|redrive",
    ),
    Option(
        "task_ids",
        values.task_ids,
        "dead task ids to redrive",
        frozenset({"dlq"}),
        positional=True,
        many=True,
        metavar="TASK_ID",
    ),
    Option(
        "all_tasks",
        values.boolean,
        "redrive every dead task",
        frozenset({"dlq"}),
        ("--all",),
        switch=True,
    ),
    Option(
        "project_name",
        str,
        "list this project only",
        frozenset({"versions"}),
        positional=True,
        metavar="PROJECT",
    ),
    Option(
        "old_crawl",
        values.crawl_ref,
        "the older crawl: a crawl id or PROJECT@VERSION",
        frozenset({"diff"}),
        positional=True,
        metavar="OLD",
    ),
    Option(
        "new_crawl",
        values.crawl_ref,
        "the newer crawl: a crawl id or PROJECT@VERSION",
        frozenset({"diff"}),
        positional=True,
        metavar="NEW",
    ),
    Option(
        "symbol",
        str,
        "the item key of the symbol, domain:role:name (e.g. py:function:json.dumps)",
        frozenset({"history"}),
        positional=True,
        metavar="KEY",
    ),
    Option(
        "project",
        str,
        "crawl, produce: the crawl's project name (default: the inventory's '# Project:' "
        "line; kept by later runs that do not give it); history: the project to read",
        frozenset({"crawl", "produce", "history"}),
        metavar="NAME",
        inherited=True,
    ),
    Option(
        "version",
        str,
        "the crawl's version (default: the inventory's '# Version:' line; kept by later "
        "runs that do not give it). `invcrawl --version` alone prints invcrawl's version",
        frozenset({"crawl", "produce"}),
        metavar="V",
        inherited=True,
    ),
    Option(
        "redis",
        values.redis_url,
        "Redis URL; without it an embedded redis-server is started in --data-dir",
        _REDIS,
        metavar="URL",
        inherited=True,
    ),
    Option(
        "redis_cluster",
        values.boolean,
        "--redis names a node of a Redis Cluster (each crawl's keys live on one shard)",
        _REDIS,
        switch=True,
        inherited=True,
    ),
    Option(
        "crawl_id",
        values.crawl_id,
        "crawl id (default: derived from the site URL, or the only crawl in Redis), or "
        "PROJECT@VERSION of an existing crawl; consume takes a comma-separated list and "
        "serves those crawls only",
        _REDIS,
        metavar="ID",
    ),
    Option(
        "slots",
        values.positive_int,
        "number of queue slots of a new crawl",
        frozenset({"crawl", "produce", "reshard"}),
        metavar="S",
        inherited=True,
    ),
    Option(
        "consumer_slots",
        values.slot_selection,
        "slots this consumer serves: 'auto' (shared through Redis) or a list like 0,3",
        frozenset({"consume"}),
        ("--slots",),  # consume has no --slots of its own (that one is a crawl's count)
        metavar="auto|LIST",
    ),
    Option(
        "partition",
        values.partition,
        "serve the slots s with s %% n == i",
        frozenset({"consume"}),
        metavar="i/n",
    ),
    Option(
        "burst",
        values.boolean,
        "exit 0 once the crawls it serves are complete",
        frozenset({"consume"}),
        switch=True,
    ),
    Option(
        "consume",
        values.boolean,
        "then consume until the crawl is complete (the producer runs in a forked child)",
        frozenset({"produce"}),
        switch=True,
    ),
    Option(
        "consumers",
        values.positive_int,
        "consumer processes to run",
        frozenset({"crawl"}),
        metavar="N",
        default_text="auto (CPU count, min 2)",
    ),
    Option(
        "concurrency",
        values.positive_int,
        "pages in flight per consumer",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "host_concurrency",
        values.positive_int,
        "requests in flight per host across every consumer of the fleet",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "host_delay",
        values.non_negative_float,
        "seconds between two request starts on a host, fleet-wide (robots.txt "
        "Crawl-delay raises it)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "weight",
        values.positive_int,
        "share of the consumers' claims the crawl gets against the others (kept by later "
        "runs that do not give it)",
        frozenset({"crawl", "produce"}),
        metavar="N",
        inherited=True,
        default_text="1",
    ),
    Option(
        "retain_items",
        values.choice("all", "exported"),
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
        values.positive_float,
        "task lease, seconds (renewed by a heartbeat)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "task_deadline",
        values.positive_float,
        "hard per-task deadline, seconds: a lease is not renewed past it",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "max_tries",
        values.positive_int,
        "deliveries of a task before it is dead-lettered",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "backoff_base",
        values.positive_float,
        "first retry delay, seconds (doubles per try)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "backoff_max",
        values.positive_float,
        "maximum retry delay, seconds",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "robots",
        values.boolean,
        "ignore robots.txt (obeyed by default; INVCRAWL_ROBOTS=0 also ignores it)",
        _RUNNERS,
        ("--no-robots",),
        switch=False,
        inherited=True,
    ),
    Option(
        "download_timeout",
        values.positive_float,
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
        values.choice("always", "everysec"),
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
        values.boolean,
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
        values.port,
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
        values.boolean,
        "re-check a finished crawl: conditional GETs, only changed items, removed keys",
        frozenset({"crawl", "produce"}),
        switch=True,
        inherited=True,
    ),
    Option(
        "force",
        values.boolean,
        "with --refresh: fetch and extract every page again (no validators)",
        frozenset({"crawl", "produce"}),
        switch=True,
        inherited=True,
    ),
    Option(
        "every",
        values.duration,
        "keep running and refresh every crawl on this period, jittered (e.g. 6h)",
        frozenset({"crawl", "produce"}),
        metavar="DURATION",
    ),
    Option(
        "since",
        values.cursor,
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
        values.boolean,
        "print JSON (diff: one JSON line per symbol that differs)",
        frozenset({"status", "inventory", "report", "dlq", "versions", "diff", "history"}),
        switch=True,
    ),
    Option(
        "markdown",
        values.boolean,
        "write release-notes Markdown: a section per module, breaking changes first",
        frozenset({"diff"}),
        switch=True,
    ),
    Option(
        "watch",
        values.boolean,
        "refresh until the crawl finishes",
        frozenset({"status"}),
        switch=True,
    ),
    Option(
        "progress",
        values.choice("auto", "bar", "lines", "none"),
        "progress display (auto: a bar on a terminal, lines otherwise)",
        frozenset({"crawl"}),
        metavar="MODE",
    ),
    Option(
        "log_level",
        values.choice("DEBUG", "INFO", "WARNING", "ERROR"),
        "log level of the Scrapy processes",
        COMMAND_NAMES,
        metavar="LEVEL",
        inherited=True,
    ),
    Option(
        "max_inflated_mb",
        values.positive_int,
        "refuse inventories inflating beyond this",
        frozenset({"crawl", "produce", "inventory"}),
        metavar="MB",
        inherited=True,
    ),
    Option(
        "redis_wait",
        values.non_negative_float,
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
        values.hosts,
        "other hosts pages may be fetched from or redirect to, comma-separated (e.g. a "
        "docs CDN); by default only the site's own origin",
        _RUNNERS,
        ("--allow-host",),
        metavar="HOST[,HOST]",
        inherited=True,
    ),
    Option(
        "extract_budget",
        values.non_negative_float,
        "seconds extracting one page may take (keep it below --lease); a page past it is "
        "retried, then dead-lettered (0: no limit)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
)

OPTIONS_BY_NAME = {o.name: o for o in OPTIONS}
