"""The CLI conventions users bring from Scrapy, rq and Unix tools: --version, -q/-v on
every command, --help with defaults and an example, one-line usage errors naming the
flag (exit 2), required flags, help texts that say what each command does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from invcrawl.cli import build_parser, main, program_version
from invcrawl.common.settings import parsers as values
from invcrawl.common.settings.commands import COMMANDS
from invcrawl.common.settings.options import OPTIONS

NUMBERS = {
    values.positive_int,
    values.positive_float,
    values.non_negative_float,
    values.port,
    values.duration,
}


@pytest.fixture(autouse=True)
def wide_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps help at the terminal's width


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([*argv, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"invcrawl {program_version()}"
    assert program_version()[0].isdigit()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_quiet_verbose_defaults_and_an_example(
    command: object, capsys: pytest.CaptureFixture[str]
) -> None:
    name = command.name  # type: ignore[attr-defined]
    text = help_of(capsys, name)
    assert "-q, --quiet" in text and "-v, --verbose" in text
    assert f"example:\n  {command.example}" in text  # type: ignore[attr-defined]
    assert command.example.startswith(f"invcrawl {name}")  # type: ignore[attr-defined]
    if name != "inventory":  # every command with Redis shows e.g. --redis-wait's default
        assert "(default: 60)" in text
    if name == "crawl":
        assert "(default: auto (CPU count, min 2))" in text
        assert "auto (a bar on a terminal, lines otherwise), bar, lines or none" in text


def test_every_command_of_the_table_has_its_handler() -> None:
    """The command table (common/settings/commands.py) and the handler table of the CLI
    (invcrawl/commands/__init__.py) name the same commands."""
    from invcrawl.commands import HANDLERS, handler_of

    assert sorted(HANDLERS) == sorted(c.name for c in COMMANDS)
    for command in HANDLERS:  # each row names a function that exists
        assert callable(handler_of(command)), command


@pytest.mark.parametrize(
    ("command", "handler"),
    [("search", "invcrawl.symbol_cmds"), ("versions", "invcrawl.commands.versions")],
)
def test_a_read_only_command_imports_only_what_it_runs(command: str, handler: str) -> None:
    """`invcrawl search` (in a fresh interpreter) loads its own handler module, not the
    crawling, dashboard or MCP ones, nor Scrapy, Twisted or numpy (the semantic ranker
    imports it when a search runs), nor w3lib's URL patterns (issue 47, 5)."""
    code = (
        f"import sys; from invcrawl import cli, commands; commands.handler_of({command!r}); "
        "print(' '.join(sorted(sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert handler in loaded
    for module in (
        "invcrawl.commands.crawling",
        "invcrawl.commands.administration",
        "invcrawl.commands.serving",
        "invcrawl.dashboard.server",
        "scrapy",
        "twisted",
        "numpy",
        "lxml",
        "w3lib",
        # crawl summaries (the render module names them only as types), --reindex's
        # indexer: not on a read command's path
        "invcrawl.frontier.summary",
        "invcrawl.frontier.search_index",
    ):
        assert module not in loaded, module
    if command == "search":  # versions are ordered by common/version_order: no API diff;
        # an item's content is decoded by `show` alone
        for module in ("invcrawl.common.apidiff", "invcrawl.common.content"):
            assert module not in loaded, module
    if command == "versions":  # the search engine and its ranking: `history` only
        for module in ("invcrawl.frontier.search", "invcrawl.common.search.fusion"):
            assert module not in loaded, module


def test_numpy_runs_one_blas_thread_unless_the_user_chose() -> None:
    """The CLI keeps OpenBLAS to one thread (its spinning threads cost a `search` more
    CPU than its products need, issue 47, 5); a user's own setting stays."""

    code = "import os, invcrawl.cli; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for given, seen in ((None, "1"), ("4", "4")):
        run_env = env if given is None else {**env, "OPENBLAS_NUM_THREADS": given}
        out = subprocess.run(
            [sys.executable, "-c", code], env=run_env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == seen


def test_help_texts_say_what_each_command_does(capsys: pytest.CaptureFixture[str]) -> None:
    helps = [c.help for c in COMMANDS]
    assert len(set(helps)) == len(helps)
    export = help_of(capsys, "export")
    assert "--out-dir" not in export and "standard output" in export
    reshard = help_of(capsys, "reshard")
    assert "new crawl" not in reshard and "new number of slots (required)" in reshard
    assert "(default: 16)" not in reshard  # required: no default shown
    changes = help_of(capsys, "changes")
    assert "each line naming its crawl" in changes


def numeric_flags() -> list[tuple[str, str]]:
    out = []
    for option in OPTIONS:
        if option.parse in NUMBERS and not option.positional:
            command = sorted(option.commands)[0]
            out.append((command, option.flag))
    return out


@pytest.mark.parametrize(("command", "flag"), numeric_flags())
def test_numbers_that_do_not_parse_give_one_line_naming_the_flag(
    command: str, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, flag, "abc"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith(f"invcrawl: error: {flag}: expected ")
    assert "invalid literal" not in line and "could not convert" not in line


def test_usage_errors_exit_2_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reshard", "--redis", "redis://127.0.0.1:1/0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "invcrawl: error: reshard needs --slots (see `invcrawl reshard --help`)"
    )
    assert main(["status", "-q", "-v", "--redis", "redis://127.0.0.1:1/0"]) == 2
    assert "-q and -v do not go together" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["status", "--no-such-flag"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "unrecognized arguments: --no-such-flag" in line
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "invcrawl: error: a command is needed (see `invcrawl --help`)"
    )


def test_help_of_a_reading_command_has_no_crawling_noise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--fsync only where a command writes, --log-level only where Scrapy runs, the Redis
    connection options in a group of their own, and no default said twice."""
    search = help_of(capsys, "search")
    assert "--fsync" not in search and "--log-level" not in search
    options, _, connection = search.partition("\noptions:\n")[2].partition("\nRedis connection:\n")
    assert "--redis-ca" in connection and "--data-dir" in connection
    assert "--redis " not in options and "--redis-ca" not in options
    assert "--fsync" in help_of(capsys, "crawl") and "--log-level" in help_of(capsys, "crawl")
    for command in COMMANDS:
        text = help_of(capsys, command.name)
        for block in text.split("\n  -"):
            assert block.count("(default:") <= 1, (command.name, block)


def test_a_mistyped_command_names_the_closest_one(capsys: pytest.CaptureFixture[str]) -> None:
    """One line, exit 2, the closest command first; a word close to none gets the list
    only (no guess)."""
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["mpc"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("invcrawl: error: COMMAND: invalid choice: 'mpc' (did you mean 'mcp'?")
    assert "'crawl'" in line
    with pytest.raises(SystemExit):
        build_parser().parse_args(["xyzzy"])
    (line,) = capsys.readouterr().err.splitlines()
    assert "did you mean" not in line and "choose from 'crawl'" in line


def test_a_mistyped_flag_names_the_closest_flag_of_its_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The closest flag of the command given, and that command's help; a flag of another
    command is not offered (``search --consumers`` is no typo)."""
    for words, meant in [
        (["crawl", "x", "--consumrs", "2"], "--consumers"),
        (["search", "foo", "--limt=3"], "--limit"),
    ]:
        with pytest.raises(SystemExit) as exc:
            build_parser(only=words[0]).parse_args(words)
        assert exc.value.code == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.endswith(f"(did you mean {meant}?) (see `invcrawl {words[0]} --help`)"), line
    with pytest.raises(SystemExit):
        build_parser(only="search").parse_args(["search", "foo", "--consumers", "2"])
    (line,) = capsys.readouterr().err.splitlines()
    assert "did you mean" not in line and "unrecognized arguments: --consumers 2" in line
