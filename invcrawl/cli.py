"""``invcrawl`` command line: argument parsing, configuration, and one-line errors.

Flags come from :data:`common.config.OPTIONS`, so every flag has an ``INVCRAWL_*``
environment variable and the documented table cannot drift from the parser. A user
mistake (bad URL, unreachable site or Redis, not an inventory...) prints one line and
exits non-zero; a traceback means a bug in invcrawl.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from common.config import OPTIONS, ConfigError, load_config

EXIT_OK = 0
EXIT_FAILED = 1  # the job ran and failed (e.g. the inventory could not be fetched)
EXIT_USAGE = 2  # the user asked for something impossible (bad flag, bad URL...)

COMMANDS = {
    "crawl": "all-in-one: produce, run N consumers, show progress, write JSON Lines",
    "produce": "read a site's objects.inv and enqueue one task per page",
    "consume": "claim page tasks, fetch, extract, commit items (run one per process)",
    "status": "show crawls, progress, per-slot queues, consumers, rate and ETA",
    "export": "write the latest version of every item as JSON Lines",
    "dlq": "list or redrive dead-lettered pages",
    "reshard": "move queued and delayed tasks to a new slot count",
    "report": "extraction coverage per domain:role (statuses, empty signatures/docs)",
    "inventory": "load and summarise an objects.inv (no Redis)",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invcrawl",
        description="Crawl a Sphinx documentation site into one structured record per "
        "documented symbol, through sharded, leased Redis queues.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command, help_text in COMMANDS.items():
        p = sub.add_parser(command, help=help_text, description=help_text)
        if command == "dlq":
            p.add_argument("action", choices=["list", "redrive"], help="what to do")
            p.add_argument(
                "task_ids", nargs="*", metavar="TASK_ID", help="dead task ids to redrive"
            )
            p.add_argument(
                "--all", action="store_true", dest="all_tasks", help="redrive every dead task"
            )
        for option in OPTIONS:
            if command not in option.commands:
                continue
            if option.flag is None:
                p.add_argument(
                    option.name,
                    nargs="?",
                    default=None,
                    metavar=option.metavar,
                    type=option.parse,
                    help=f"{option.help} [{option.env}]",
                )
                continue
            flags = [option.flag]
            if option.flag == "-o":
                flags.append("--output")
            if option.name == "consumer_slots":
                flags = ["--slots"]
            kwargs: dict[str, object] = {
                "dest": option.name,
                "default": None,
                "help": f"{option.help} [{option.env}]",
            }
            if option.is_switch:
                kwargs.update(action="store_const", const=option.name != "robots")
            else:
                kwargs.update(type=_parser_for(option.parse, option.flag), metavar=option.metavar)
            p.add_argument(*flags, **kwargs)  # type: ignore[arg-type]
    return parser


def _parser_for(parse: object, flag: str) -> object:
    def wrapped(text: str) -> object:
        try:
            return parse(text)  # type: ignore[operator]
        except (ValueError, TypeError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    wrapped.__name__ = flag.lstrip("-")
    return wrapped


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = load_config(vars(args))
    except ConfigError as exc:
        return fail(str(exc), EXIT_USAGE)
    from invcrawl.commands import run_command  # noqa: PLC0415 - keep --help fast

    try:
        return run_command(args.command, config, args)
    except KeyboardInterrupt:
        print("invcrawl: interrupted", file=sys.stderr)
        return 130


def fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"invcrawl: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
