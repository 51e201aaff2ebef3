"""The command table: every ``invcrawl`` command, what it does (its ``--help`` line and
example) and what it needs. The CLI builds its subcommands from it; which options each
command takes is in the option table (``common/settings/options.py``); each command's
handler is its row of ``invcrawl/commands/__init__.py`` (``HANDLERS``), the CLI's side
(nothing of ``common`` imports the CLI)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Command:
    """One ``invcrawl`` command; its handler is ``HANDLERS[name]`` (``invcrawl/commands/``)."""

    name: str
    help: str  # what it does, one line (``invcrawl --help`` lists them)
    example: str  # one typical command line (``invcrawl NAME --help`` shows it)
    redis: bool = True  # talks to Redis (takes --redis, --data-dir...)
    crawls: bool = False  # runs Scrapy: fetches pages or inventories
    requires: tuple[str, ...] = ()  # options it cannot do without (flag or variable)


COMMANDS: tuple[Command, ...] = (
    Command(
        "crawl",
        "crawl sites start to finish: produce, run N consumers, show progress, write one "
        "JSON Lines file per site; run it again to resume",
        "invcrawl crawl https://docs.python.org/3/ --consumers 4 -o python.jsonl",
        crawls=True,
    ),
    Command(
        "produce",
        "read each site's objects.inv and enqueue one task per page, for consumers started "
        "separately",
        "invcrawl produce https://docs.python.org/3/ --redis redis://localhost:6379/0",
        crawls=True,
    ),
    Command(
        "consume",
        "claim page tasks, fetch, extract and commit their items, until stopped (--burst: "
        "until the crawls are complete)",
        "invcrawl consume --redis redis://localhost:6379/0 --metrics-port 9108",
        crawls=True,
    ),
    Command(
        "status",
        "show every crawl (one line each) and the busy hosts, or one crawl in detail",
        "invcrawl status --crawl-id docs.python.org-3 --watch",
    ),
    Command(
        "export",
        "write the latest version of every live item as JSON Lines",
        "invcrawl export --crawl-id docs.python.org-3 -o python.jsonl",
    ),
    Command(
        "dashboard",
        "serve a read-only live web page of every crawl, host and consumer, and the "
        "fleet's Prometheus gauges at /metrics",
        "invcrawl dashboard --redis redis://localhost:6379/0 --port 8780",
    ),
    Command(
        "changes",
        "print the items added, changed and removed after a cursor (JSON Lines events), "
        "and the cursor to resume from",
        "invcrawl changes --crawl-id docs.python.org-3 --since 1732400000000-0",
    ),
    Command(
        "dlq",
        "list dead-lettered pages with their reason, or redrive them into their queues",
        "invcrawl dlq redrive --all --crawl-id docs.python.org-3",
    ),
    Command(
        "reshard",
        "move a crawl's queued and delayed tasks to a new number of slots",
        "invcrawl reshard --slots 32 --crawl-id docs.python.org-3",
        requires=("slots",),
    ),
    Command(
        "report",
        "show extraction coverage per domain:role: statuses, empty signatures and docs",
        "invcrawl report --crawl-id docs.python.org-3",
    ),
    Command(
        "inventory",
        "download and summarise a site's objects.inv: entries, pages, types (no Redis)",
        "invcrawl inventory https://docs.python.org/3/",
        redis=False,
    ),
    Command(
        "forget",
        "delete a crawl from Redis: its queues, items, counters and registry entries "
        "(output files are kept)",
        "invcrawl forget docs.python.org-3 --yes",
    ),
    Command(
        "redis",
        "keep the embedded Redis of --data-dir running for redis-cli (its port and password "
        "are files of the data dir), until Ctrl-C",
        "invcrawl redis",
    ),
    Command(
        "versions",
        "list the projects in Redis and, for each, its versions (crawls) in version order",
        "invcrawl versions numpy --json",
    ),
    Command(
        "diff",
        "compare two crawls symbol by symbol: typed API changes, breaking first",
        "invcrawl diff numpy@1.26 numpy@2.0 --markdown",
    ),
    Command(
        "history",
        "one symbol across the versions of its project: the typed changes at each step",
        "invcrawl history py:function:numpy.unique --project numpy",
    ),
    Command(
        "search",
        "find symbols by name or words of their summary, in each project's latest version "
        "(or the one named), best first",
        "invcrawl search Session --project requests --version 2.x",
    ),
    Command(
        "show",
        "one symbol whole: signature, parameters, returns, raises, doc; by key, qualified "
        "name or unambiguous last component",
        "invcrawl show json.loads --project Python --markdown",
    ),
    Command(
        "mcp",
        "serve the crawled symbols to coding agents over MCP (stdio; --http: streamable "
        "HTTP): search, symbols, API diffs, histories, the change feed; reads only",
        "invcrawl mcp --redis redis://localhost:6379/0",
    ),
)
COMMANDS_BY_NAME = {c.name: c for c in COMMANDS}
COMMAND_NAMES = frozenset(c.name for c in COMMANDS)
