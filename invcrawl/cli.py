"""``invcrawl`` command line: the parser (built from :data:`common.options.COMMANDS` and
:data:`common.options.OPTIONS`, so every flag has an ``INVCRAWL_*`` variable and the
documented table cannot drift from it), configuration, dispatch to
``invcrawl.commands.cmd_<command>``, and one-line errors. A user mistake (bad URL,
unreachable site or Redis, not an inventory...) prints one line and exits non-zero; a
traceback means a bug in invcrawl.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from common.config import ConfigError, load_config
from common.options import COMMANDS, OPTIONS, Option
from common.secrets import install_log_masking
from invcrawl.errors import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_USAGE, fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="invcrawl",
        description="Crawl a Sphinx documentation site into one structured record per "
        "documented symbol, through sharded, leased Redis queues.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        for option in OPTIONS:
            if command.name in option.commands:
                _add(p, option)
    return parser


def _add(parser: argparse.ArgumentParser, option: Option) -> None:
    help_text = f"{option.help} [{option.env}]"
    if option.positional:
        parser.add_argument(
            option.name,
            nargs="*" if option.many else "?",
            default=None,
            metavar=option.metavar,
            type=_typed(option),
            help=help_text,
        )
        return
    kwargs: dict[str, Any] = {"dest": option.name, "default": None, "help": help_text}
    if option.switch is not None:
        kwargs.update(action="store_const", const=option.switch)
    else:
        kwargs.update(type=_typed(option), metavar=option.metavar)
    parser.add_argument(*option.all_flags, **kwargs)


def _typed(option: Option) -> Any:
    def parse(text: str) -> Any:
        try:
            return option.parse(text)
        except (ValueError, TypeError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.flag.lstrip("-")
    return parse


def cli_values(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags as :func:`common.config.load_config` takes them."""
    values = vars(args)
    for option in OPTIONS:
        parts = values.get(option.name) if option.many else None
        if parts is not None:  # a positional taking many values: one tuple (or unset)
            values[option.name] = tuple(v for part in parts for v in part) or None
    return values


def main(argv: Sequence[str] | None = None) -> int:
    install_log_masking()  # no password of a Redis or proxy URL in any log line
    args = build_parser().parse_args(argv)
    try:
        config = load_config(cli_values(args))
    except ConfigError as exc:
        return fail(str(exc), EXIT_USAGE)
    from invcrawl import commands  # noqa: PLC0415 - keep --help fast

    try:
        code = commands.run(args.command, config)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("invcrawl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return quiet_broken_pipe()


def quiet_broken_pipe() -> int:
    """The reader of standard output went away (``invcrawl ... | head``): end quietly
    with the exit code of a pipe writer killed by SIGPIPE. SIGPIPE itself stays ignored
    (a Redis socket closing must not kill the process); standard output is pointed at
    /dev/null so that the interpreter's final flush does not complain."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
