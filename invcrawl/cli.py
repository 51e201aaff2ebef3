"""``invcrawl`` command line: the parser (built from
:data:`invcrawl.common.settings.commands.COMMANDS` and
:data:`invcrawl.common.settings.options.OPTIONS`, so every flag has an ``INVCRAWL_*``
variable and the documented table cannot drift from it), configuration, dispatch to the
command's handler (``invcrawl/commands/__init__.py``: ``HANDLERS``), one-line errors and
the exit codes of the README
(usage 2; stopped by SIGINT 130, by SIGTERM 143, after a graceful stop). A user mistake
(bad URL, unreachable site or Redis, not an inventory...) prints one line and exits
non-zero; a traceback means a bug in invcrawl.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import os
import signal
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any, NoReturn

from invcrawl import terminal
from invcrawl.common.settings.commands import COMMANDS, COMMANDS_BY_NAME
from invcrawl.common.settings.config import (
    Config,
    ConfigError,
    default_of,
    is_given,
    load_config,
)
from invcrawl.common.settings.datadir import holds_index
from invcrawl.common.settings.options import (
    OPTIONS,
    OPTIONS_BY_NAME,
    REDIS_CONNECTION,
    Option,
)
from invcrawl.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Terminated,
    fail,
)
from invcrawl.process import interrupts
from invcrawl.process.secrets import install_log_masking
from invcrawl.usage_hints import with_flag_suggestion, with_suggestion

# numpy's OpenBLAS (the semantic ranker's, common/search/semantic.py) starts a thread per
# CPU when numpy is imported, and they spin between calls: on a busy machine a `search`
# paid ~0.08 CPU-s and often more than its wall time for threads its small products do
# not need (issue 47, 5). One thread, unless the user chose otherwise; set before any
# command imports numpy, and inherited by the processes a command starts.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# A signal handler as signal.getsignal() gives it.
Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

HELP_WIDTH = 79  # descriptions and epilogs are written as they show (the example whole)
# Commands that run Scrapy in this process: Scrapy installs their log handler.
SCRAPY_IN_PROCESS = frozenset({"produce", "consume", "inventory"})


def program_version() -> str:
    # importlib.metadata is imported here, for --version only: with its lookup of the
    # installed distributions it was a fifth of the start-up every invcrawl process
    # (the supervisor, each consumer and producer) paid for a parser option.
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version("invcrawl")
    except metadata.PackageNotFoundError:  # run from a source tree that was not installed
        return "unknown"


class VersionAction(argparse.Action):
    """``--version``: the version looked up when asked for, not when the parser is
    built."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest, default=argparse.SUPPRESS, nargs=0,
            help="show the program's version number and exit",
        )  # fmt: skip

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"invcrawl {program_version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse with the one-line errors of every other invcrawl error: ``invcrawl:
    error: --consumers: expected an integer >= 1, got 'abc'``, exit 2 (no usage dump).
    ``command``: the one the words name, if any: its flag closest to an unknown one, and
    its help, are named."""

    def __init__(self, *args: Any, command: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command

    def error(self, message: str) -> NoReturn:
        message = message.removeprefix("argument ")
        hint = f" (see `{self.prog} --help`)"
        if "the following arguments are required: COMMAND" in message:
            message, hint = "a command is needed", " (see `invcrawl --help`)"
        if message.startswith("unrecognized arguments: ") and self.command is not None:
            hint = f" (see `{self.prog} {self.command} --help`)"
            message = with_flag_suggestion(message, flags_of(self.command))
        message = with_suggestion(message)
        print(f"invcrawl: error: {message}{hint}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with room for the option column, and the example kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def flags_of(command: str) -> list[str]:
    """Every flag ``command`` takes (looked up for a usage error only)."""
    return [
        flag
        for option in OPTIONS
        if command in option.commands and not option.positional
        for flag in option.all_flags
    ]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; ``only``: the options of that command only (the
    others keep their one help line), what running one command needs."""
    parser = Parser(
        prog="invcrawl",
        command=only,
        description=textwrap.fill(
            "Crawl documentation sites that publish an objects.inv (Sphinx, MkDocs with "
            "mkdocstrings, pydoctor) into one structured record per documented symbol, "
            "through sharded, leased Redis queues.",
            HELP_WIDTH,
        ),
        epilog=textwrap.fill(
            "Every flag also has an INVCRAWL_* variable (shown in brackets). Exit codes: 0 "
            "done, 1 failed, 2 usage error, 3 dead-lettered pages, 129 SIGHUP, 130 SIGINT, 143 "
            "SIGTERM.",
            HELP_WIDTH,
        ),
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=textwrap.fill(command.help[0].upper() + command.help[1:] + ".", HELP_WIDTH),
            epilog=f"example:\n  {command.example}",
            formatter_class=Formatter,
        )
        if only is not None and command.name != only:
            continue
        connection = p.add_argument_group(
            "Redis connection", "where the crawls are: a Redis server, or the embedded one"
        )
        for option in OPTIONS:
            if command.name in option.commands:
                where = connection if option.name in REDIS_CONNECTION else p
                _add(where, option, command.name, required=option.name in command.requires)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (its first word that is not a flag), if any."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS_BY_NAME else None


def shown_default(option: Option) -> str | None:
    """The default ``--help`` shows (None: nothing worth showing)."""
    if option.default_text is not None:
        return option.default_text
    if option.switch is not None or option.positional:
        return None
    value = default_of(option.name)
    if value is None or value == () or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _add(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    option: Option,
    command: str,
    required: bool = False,
) -> None:
    help_text = option.help_in(command)
    default = None if required else shown_default(option)
    if default is not None and "(default:" not in help_text:  # said once: its own words
        help_text += f" (default: {default.replace('%', '%%')})"
    help_text += f" [{option.env}]"
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
    """The parsed flags as :func:`invcrawl.common.settings.config.load_config` takes them."""
    values = vars(args)
    for option in OPTIONS:
        parts = values.get(option.name) if option.many else None
        if parts is not None:  # a positional taking many values: one tuple (or unset)
            values[option.name] = tuple(v for part in parts for v in part) or None
    return values


def main(
    argv: Sequence[str] | None = None, starting: Mapping[signal.Signals, Handler] | None = None
) -> int:
    """The command line. ``starting``: the handlers ``python -m invcrawl`` replaced while
    it imported this module (invcrawl/__main__.py), each signal's to put back once
    main's own handling stands."""
    install_log_masking()  # no password of a Redis or proxy URL in any log line
    interrupts.reset()
    # `kill -USR1 PID` prints every thread's stack to stderr: where a stuck command is
    # (not where stderr is no file, as when main() runs inside a test's captured output).
    with contextlib.suppress(AttributeError, OSError, ValueError):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr.fileno(), all_threads=True)
    starting = starting or {}
    # From the first step: a stop signal while the command starts (its imports, the
    # configuration) ends it as one during its work does.
    with terminating(replacing=signal.SIGTERM in starting):
        try:
            for signum, handler in starting.items():
                if signum != signal.SIGTERM:  # (terminating() has put its own)
                    signal.signal(signum, handler)
            return _run(argv)
        except KeyboardInterrupt as exc:
            terminal.say("invcrawl: interrupted")
            default = EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
            return interrupts.exit_code() or default
        except BrokenPipeError:
            return quiet_broken_pipe()


def _run(argv: Sequence[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(only=command_of(words)).parse_args(words)
    values = cli_values(args)
    command = COMMANDS_BY_NAME[args.command]
    for name in command.requires:
        if not is_given(name, values):
            flag = OPTIONS_BY_NAME[name].flag
            return fail(f"{command.name} needs {flag} (see `invcrawl {command.name} --help`)", 2)
    try:
        config = load_config(values)
    except ConfigError as exc:
        return fail(str(exc), EXIT_USAGE)
    terminal.configure(
        quiet=config.quiet,
        verbose=config.verbose,
        logs=command.name not in SCRAPY_IN_PROCESS,
    )
    with prestarted(command.name, config):
        from invcrawl import commands  # noqa: PLC0415 - keep --help fast

        code = commands.run(args.command, config)
    sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    # Stopped by a signal, gracefully (in-flight pages finished, files closed): say so.
    return interrupts.exit_code() or code


@contextlib.contextmanager
def prestarted(command: str, config: Config) -> Iterator[None]:
    """Start the embedded Redis's service, if it must start, before the command's
    imports: redis-server loads the AOF meanwhile (localredis/embedded.prestart). A
    command that ends without joining it lets it go (as when main() runs in a test)."""
    if not uses_embedded_redis(command, config):
        yield
        return
    from invcrawl.localredis import embedded  # noqa: PLC0415
    from invcrawl.localredis.server import RedisServerError  # noqa: PLC0415

    with contextlib.suppress(RedisServerError, OSError):  # (said by the usual path)
        embedded.prestart(config.data_dir, config.fsync)
    try:
        yield
    finally:
        embedded.let_go()


def uses_embedded_redis(command: str, config: Config) -> bool:
    """Whether ``command`` runs on the embedded Redis of a data dir that holds crawls
    (no ``--redis``): its service may start before the command's imports (issue 47, 5)."""
    return (
        command in OPTIONS_BY_NAME["redis"].commands
        and not config.redis
        and not config.redis_cluster
        and holds_index(config.data_dir)
    )


@contextlib.contextmanager
def terminating(replacing: bool = False) -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` where a command has no handler of its own (the
    long-running ones install theirs and record the signal: process/interrupts.py).
    ``replacing``: the handler in place is the start-up one of invcrawl/__main__.py."""
    if not replacing and signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield  # someone embedding us handles it
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        interrupts.record(signum)
        raise Terminated

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
