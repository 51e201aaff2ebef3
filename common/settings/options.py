"""The option table: every option, its flags, environment variable, parser, help text and
the commands (of ``common/settings/commands.py``) that take it. The CLI builds its parser
from it, ``common/settings/config.py`` resolves values with it, and
``docs/configuration.md`` is generated from it. Each option's default is its
:class:`invcrawl.common.settings.config.Config` field's (written only there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invcrawl.common import itemfilter
from invcrawl.common.settings import parsers as values
from invcrawl.common.settings.commands import COMMAND_NAMES, COMMANDS
from invcrawl.common.settings.datadir import DEFAULT_TEXT as DATA_DIR_DEFAULT

# The commands that talk to Redis, that run Scrapy, that deliver pages (leases, retries),
# and that read every crawl or --crawl-id's: the groups most options are taken by.
_REDIS = frozenset(c.name for c in COMMANDS if c.redis)
_CRAWLERS = frozenset(c.name for c in COMMANDS if c.crawls)
_RUNNERS = frozenset({"crawl", "produce", "consume"})  # deliver pages: leases, retries
_FLEET_READERS = ("export", "changes", "report", "dlq")  # every crawl, or --crawl-id
_WRITERS = _RUNNERS | {"redis"}  # write crawls to Redis (the others read, or edit a little)


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
    variable: str | None = None  # its environment variable, if not INVCRAWL_<NAME>
    help_for: tuple[tuple[str, str], ...] = ()  # (command, help) where it means more
    # how its environment variable is read, where that differs from one flag's value
    # (INVCRAWL_SITES holds several sites; a SITE argument is one, spaces and all)
    parse_env: Callable[[str], Any] | None = None

    def from_env(self, text: str) -> Any:
        return (self.parse_env or self.parse)(text)

    def help_in(self, command: str) -> str:
        """The option's help as ``invcrawl COMMAND --help`` shows it."""
        return dict(self.help_for).get(command, self.help)

    @property
    def env(self) -> str:
        return self.variable or "INVCRAWL_" + self.name.upper()

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
        values.site,
        "docs base URLs, objects.inv URLs or local directories: one crawl each (the "
        "variable: separated by white space, or one per line)",
        frozenset({"crawl", "produce"}),
        positional=True,
        many=True,
        metavar="SITE",
        parse_env=values.sites,
    ),
    Option(
        "sites_file",
        Path,
        "a file of sites, one per line, the whole line (# starts a comment at the start of "
        "a line or after a space), added to SITE...",
        frozenset({"crawl", "produce"}),
        ("--sites",),
        metavar="FILE",
    ),
    Option(
        "crawl_ids_file",
        Path,
        "a file of crawl ids to serve, one per line, added to --crawl-id (no command-line "
        "limit: `invcrawl crawl` hands its consumers the crawls of many sites so)",
        frozenset({"consume"}),
        ("--crawl-ids",),
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
        "dead task ids to redrive (as `dlq list` shows them)",
        frozenset({"dlq"}),
        positional=True,
        many=True,
        metavar="TASK_ID",
    ),
    Option(
        "all_tasks",
        values.boolean,
        "redrive every dead task (of --crawl-id, else of every crawl)",
        frozenset({"dlq"}),
        ("--all",),
        switch=True,
    ),
    Option(
        "forget_ids",
        values.crawl_ids,
        "the crawls to delete",
        frozenset({"forget"}),
        positional=True,
        many=True,
        metavar="CRAWL_ID",
    ),
    Option(
        "forget_failed",
        values.boolean,
        "also every failed crawl (an inventory that could not be read: a mistyped site)",
        frozenset({"forget"}),
        ("--failed",),
        switch=True,
    ),
    Option(
        "yes",
        values.boolean,
        "do not ask for confirmation (needed when standard input is not a terminal)",
        frozenset({"forget"}),
        ("-y", "--yes"),
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
        "the symbol, as show takes it: an item key (py:function:json.dumps), a qualified "
        "name or an unambiguous last component",
        frozenset({"history"}),
        positional=True,
        metavar="NAME",
    ),
    Option(
        "query",
        str,
        "a name (qualified, its last component or a prefix) or a few words of a summary; "
        "any characters, matched as plain text",
        frozenset({"search"}),
        positional=True,
        metavar="QUERY",
    ),
    Option(
        "show_name",
        str,
        "an item key (py:function:json.loads), a qualified name or an unambiguous last component",
        frozenset({"show"}),
        positional=True,
        metavar="NAME",
    ),
    Option(
        "project",
        str,
        "crawl, produce: the crawl's project name (default: the inventory's '# Project:' "
        "line; kept by later runs that do not give it); history: the project to read",
        frozenset({"crawl", "produce", "history", "search", "show", "export"}),
        metavar="NAME",
        inherited=True,
        help_for=(
            ("export", "only the crawls of this project, named in any case"),
            ("search", "search this project only, named in any case (default: every project)"),
            ("show", "look in this project only, named in any case (default: every project)"),
        ),
    ),
    Option(
        "version",
        str,
        "the crawl's version (default: the inventory's '# Version:' line; kept by later "
        "runs that do not give it). `invcrawl --version` alone prints invcrawl's version",
        frozenset({"crawl", "produce", "search", "show", "export"}),
        metavar="V",
        inherited=True,
        help_for=(
            ("export", "only the crawls of this version (with --project or alone)"),
            (
                "search",
                "an exact version or an X-range (2.x, 2.1.x: the highest match); never "
                "another one in its place (default: each project's latest finished version)",
            ),
            (
                "show",
                "an exact version or an X-range (2.x, 2.1.x: the highest match); never "
                "another one in its place (default: each project's latest finished version)",
            ),
        ),
    ),
    Option(
        "kind",
        str,
        "only symbols of this role (function, class, method...) or domain:role (py:method)",
        frozenset({"search"}),
        metavar="ROLE",
    ),
    Option(
        "reindex",
        values.boolean,
        "first index the items of every crawl (those committed before the search index "
        "existed have none; idempotent), then search QUERY if given",
        frozenset({"search"}),
        switch=True,
    ),
    Option(
        "explain",
        values.boolean,
        "say under each result why it matched: its name tier, or the words it has, its "
        "lexical and semantic ranks and its priors",
        frozenset({"search"}),
        switch=True,
    ),
    Option(
        "limit",
        values.positive_int,
        "how many results at most (1 to 100)",
        frozenset({"search"}),
        metavar="N",
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
        "crawl_ids",
        values.crawl_id,
        "crawl id (default: derived from the site URL, or the only crawl in Redis), or "
        "PROJECT@VERSION of an existing crawl; consume takes a comma-separated list and "
        "serves those crawls only",
        _REDIS - {"forget", "search", "show"},
        ("--crawl-id",),
        metavar="ID",
        default_text="None",
        variable="INVCRAWL_CRAWL_ID",
        help_for=(
            ("crawl", "crawl id of a single site (default: derived from the site URL)"),
            ("produce", "crawl id of a single site (default: derived from the site URL)"),
            ("consume", "serve only these crawls, comma-separated (default: every open crawl)"),
            ("status", "show this crawl in detail (default: every crawl, one line each)"),
            ("dashboard", "open the page filtered on this crawl"),
            ("reshard", "the crawl to reshard (default: the only crawl in Redis)"),
            *(
                (name, "only this crawl (default: every crawl, each line naming its crawl)")
                for name in _FLEET_READERS
            ),
        ),
    ),
    Option(
        "slots",
        values.positive_int,
        "number of queue slots of a new crawl (an existing crawl keeps its own: see "
        "`invcrawl reshard`)",
        frozenset({"crawl", "produce", "reshard"}),
        metavar="S",
        inherited=True,
        help_for=(("reshard", "the crawl's new number of slots (required)"),),
    ),
    Option(
        "consumer_slots",
        values.slot_selection,
        "slots this consumer serves: 'auto' (shared through Redis) or a list like 0,3",
        frozenset({"consume"}),
        ("--slots",),  # consume has no --slots of its own (that one is a crawl's count)
        metavar="auto|LIST",
        default_text="auto",
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
        "consumer processes to run: at most 4 per CPU, and for a resumed run no more than "
        "the pages left need (fewer start, with a note)",
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
        "directory of the embedded Redis (AOF) and run files: one per user by default, "
        "shared by every command run from any folder",
        _REDIS,
        metavar="DIR",
        default_text=DATA_DIR_DEFAULT,
    ),
    Option(
        "fsync",
        values.choice("always", "everysec"),
        "embedded Redis appendfsync policy, when this command starts it (a command "
        "without this flag starts it with always)",
        _WRITERS,
        metavar="always|everysec",
    ),
    Option(
        "output",
        Path,
        "JSON Lines output file ('-': standard output)",
        frozenset({"crawl", "export", "changes"}),
        ("-o", "--output"),
        metavar="FILE",
        help_for=(
            (
                "crawl",
                "the JSON Lines file of a single site (default: <crawl-id>.jsonl in "
                "--out-dir; '-': standard output)",
            ),
            ("export", "write the items to FILE (default and '-': standard output)"),
            ("changes", "append the events to FILE (default and '-': standard output)"),
        ),
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
        "keep running and write what arrives, until interrupted",
        frozenset({"export", "changes"}),
        switch=True,
        help_for=(
            (
                "export",
                "keep running: append new, updated and removed items as they arrive, "
                "through the consumer group --group (resumes where it stopped)",
            ),
            ("changes", "keep running: print new events as they arrive"),
        ),
    ),
    Option(
        "bind",
        str,
        "address the dashboard listens on (anything but loopback requires --token, or a "
        "Redis user that can only read in --redis); consume: its --metrics-port endpoint's; "
        "mcp: its --http endpoint's",
        frozenset({"dashboard", "consume", "mcp"}),
        metavar="ADDRESS",
        help_for=(
            (
                "consume",
                "address the --metrics-port endpoint listens on (anything but loopback, "
                "such as 0.0.0.0 for a Prometheus on another host or container, requires "
                "--metrics-token)",
            ),
            (
                "mcp",
                "address the --http endpoint listens on (anything but loopback requires "
                "--token, or a Redis user that can only read in --redis)",
            ),
        ),
    ),
    Option(
        "port",
        values.port,
        "port of the dashboard (0: any free port)",
        frozenset({"dashboard"}),
        metavar="N",
    ),
    Option(
        "http",
        values.boolean,
        "serve streamable HTTP at http://BIND:PORT/mcp instead of stdio (the dashboard's "
        "access rules: a token beyond loopback, the Host header checked)",
        frozenset({"mcp"}),
        switch=True,
    ),
    Option(
        "mcp_port",
        values.port,
        "port of the --http endpoint (0: any free port)",
        frozenset({"mcp"}),
        ("--port",),
        metavar="N",
    ),
    Option(
        "mcp_token",
        str,
        "token the --http endpoint asks for (Authorization: Bearer TOKEN); prefer the "
        "variable: flags show in ps",
        frozenset({"mcp"}),
        ("--token",),
        metavar="TOKEN",
    ),
    Option(
        "mcp_max_chars",
        values.answer_chars,
        "characters of a tool's answer at most (its JSON; 2,000 to 1,000,000): a longer "
        "one is cut, with a marker and the offset that reads on",
        frozenset({"mcp"}),
        ("--max-chars",),
        metavar="N",
    ),
    Option(
        "metrics_port",
        values.port,
        "serve Prometheus metrics of this consumer at http://BIND:PORT/metrics (0: any "
        "free port, printed at start)",
        frozenset({"consume"}),
        metavar="PORT",
        default_text="none",
    ),
    Option(
        "metrics_token",
        str,
        "token the --metrics-port endpoint asks for (Authorization: Bearer TOKEN); required "
        "with a --bind beyond loopback; prefer the variable: flags show in ps",
        frozenset({"consume"}),
        metavar="TOKEN",
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
        "with --refresh: fetch and extract every page again (no validators); forget: even "
        "while a consumer holds its pages",
        frozenset({"crawl", "produce", "forget"}),
        switch=True,
        inherited=True,
        help_for=(
            (
                "forget",
                "forget it even while a consumer holds its pages or serves it: deleted at "
                "once, and again one lease later (what they wrote until they let go)",
            ),
        ),
    ),
    Option(
        "every",
        values.every,
        "keep running and refresh every crawl on this period, jittered (e.g. 6h); 'auto': "
        "each crawl on its own interval between --refresh-min and --refresh-max, shortened "
        "when a round found changes and lengthened when it found none",
        frozenset({"crawl", "produce"}),
        metavar="DURATION|auto",
    ),
    Option(
        "refresh_min",
        values.duration,
        "with --every auto: the shortest interval between two refreshes of a crawl",
        frozenset({"crawl", "produce"}),
        metavar="DURATION",
        default_text="1h",
    ),
    Option(
        "refresh_max",
        values.duration,
        "with --every auto: the longest interval between two refreshes of a crawl",
        frozenset({"crawl", "produce"}),
        metavar="DURATION",
        default_text="7d",
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
        "print JSON (crawl: one summary on standard output when done; diff: one JSON line "
        "per symbol that differs)",
        frozenset(
            {"status", "inventory", "report", "dlq", "crawl", "versions", "diff", "history"}
            | {"search", "show"}
        ),
        switch=True,
        help_for=(
            (
                "crawl",
                "print one JSON summary on standard output when done: entries, pages, "
                "items by status, output files, time (one line per round with --every)",
            ),
            ("status", "print the status as JSON (the dashboard's data)"),
            ("inventory", "print the summary as JSON"),
            ("report", "print the coverage as JSON"),
            ("dlq", "print the dead letters as JSON"),
            ("versions", "print the projects and their versions as JSON"),
            ("diff", "print one JSON line per symbol that differs, with its typed changes"),
            ("history", "print the symbol's history as JSON"),
            ("search", "print the results as JSON: {query, results: [{key, name, role, ...}]}"),
            ("show", "print the whole item as JSON (or the candidates, when ambiguous)"),
        ),
    ),
    Option(
        "markdown",
        values.boolean,
        "write release-notes Markdown: a section per module, breaking changes first",
        frozenset({"diff", "show"}),
        switch=True,
        help_for=(("show", "print the symbol as Markdown: its signature and doc_markdown"),),
    ),
    Option(
        "watch",
        values.boolean,
        "redraw every second until every crawl shown is finished or failed",
        frozenset({"status"}),
        switch=True,
    ),
    Option(
        "page",
        values.positive_int,
        "the page to show, 50 a page (status: crawls, open ones first, the totals count every "
        "crawl; versions: projects by name)",
        frozenset({"status", "versions"}),
        ("--page",),
        metavar="N",
    ),
    Option(
        "show_all",
        values.boolean,
        "show every row, not a page of 50 (status reads every crawl: slow with thousands)",
        frozenset({"status", "versions"}),
        ("--all",),
        switch=True,
    ),
    Option(
        "progress",
        values.choice("auto", "bar", "lines", "none"),
        "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or none",
        frozenset({"crawl"}),
        metavar="MODE",
    ),
    Option(
        "log_level",
        values.choice("DEBUG", "INFO", "WARNING", "ERROR"),
        "log level of the Scrapy processes (crawl: their files under DATA_DIR/logs/; -v and "
        "-q set what the terminal shows)",
        _CRAWLERS | {"inventory"},
        metavar="LEVEL",
        inherited=True,
    ),
    Option(
        "quiet",
        values.boolean,
        "print only errors and what was asked for: no progress, notes or summaries",
        COMMAND_NAMES,
        ("-q", "--quiet"),
        switch=True,
    ),
    Option(
        "verbose",
        values.boolean,
        "also print invcrawl's log records from INFO up (produce, consume: Scrapy's too)",
        COMMAND_NAMES,
        ("-v", "--verbose"),
        switch=True,
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
        "docs CDN); by default only the site's own origin. dashboard: host names its page "
        "may be reached by besides loopback ones (a loopback bind checks the Host header); "
        "mcp --http: the same",
        _RUNNERS | {"dashboard", "mcp"},
        ("--allow-host",),
        metavar="HOST[,HOST]",
        inherited=True,
        help_for=(
            (
                "mcp",
                "host names the --http endpoint may be reached by besides loopback ones (a "
                "loopback bind checks the Host header), comma-separated",
            ),
        ),
    ),
    Option(
        "max_crawl_delay",
        values.non_negative_float,
        "cap on a robots.txt Crawl-delay, seconds (status shows a delay it capped)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
    Option(
        "max_doc_chars",
        values.positive_int,
        "characters of an item's doc and of its doc_markdown, each; beyond, cut with a "
        "truncation marker (docs/items.md)",
        _RUNNERS,
        metavar="N",
        inherited=True,
    ),
    Option(
        "max_item_mb",
        values.positive_float,
        "size of one item's JSON; beyond, its longest fields are cut (a page's items "
        "together: 16 times the page, within 1 and 4 items' worth)",
        _RUNNERS,
        metavar="MB",
        inherited=True,
    ),
    Option(
        "extract_budget",
        values.non_negative_float,
        "CPU seconds extracting one page may take (keep it below --lease); a page past it is "
        "retried, then dead-lettered (0: no limit)",
        _RUNNERS,
        metavar="SECONDS",
        inherited=True,
    ),
)

# What crawl's and export's files hold of each item (common/itemfilter.py).
_WRITES_ITEMS = frozenset({"crawl", "export"})
OPTIONS += (
    Option(
        "domain",
        itemfilter.domains,
        "write only the items of these domains, comma-separated (py,std)",
        _WRITES_ITEMS,
        metavar="D[,D]",
    ),
    Option(
        "role",
        itemfilter.roles,
        "write only the items of these roles, comma-separated: a role of any domain "
        "(function) or domain:role (py:method)",
        _WRITES_ITEMS,
        metavar="ROLE[,ROLE]",
    ),
    Option(
        "status",
        itemfilter.statuses,
        "write only the items of these statuses, comma-separated (ok,anchor_missing: "
        "docs/items.md)",
        _WRITES_ITEMS,
        metavar="S[,S]",
    ),
    Option(
        "fields",
        itemfilter.field_names,
        "write only these fields of each item, in this order, comma-separated (key,signature,url)",
        _WRITES_ITEMS,
        metavar="F[,F]",
    ),
    Option(
        "omit_page_text",
        values.boolean,
        "write std:doc and std:label items (whole pages and sections) with an empty doc "
        "and doc_markdown",
        _WRITES_ITEMS,
        switch=True,
    ),
)

OPTIONS_BY_NAME = {o.name: o for o in OPTIONS}
# Where the crawls are: ``--help`` shows these under a group of their own, apart from
# what the command does.
REDIS_CONNECTION = frozenset(
    {"redis", "redis_cluster", "redis_wait", "redis_ca", "redis_cert", "redis_key", "data_dir"}
    | {"fsync"}
)
