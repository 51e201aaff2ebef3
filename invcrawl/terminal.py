"""What the terminal shows, set once per process from ``-q`` / ``-v``:

* notes on standard error (progress, summaries, "N items written", the cursor to resume
  from): :func:`say`, silent with ``-q``; errors always (:func:`invcrawl.errors.fail`);
  a long-running command's notes (:func:`note`: a Redis outage, a forgotten crawl);
* log records: WARNING and up by default, from INFO with ``-v``, ERROR only with ``-q``
  (a Scrapy process sets its own from the same flags: ``Config.scrapy_log_level``);
* the width lines are fitted to: the terminal's, or none at all when the output is piped
  or redirected (a file or a pager gets every line whole): :func:`width`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import IO

from invcrawl.render import terminal_safe

FALLBACK_WIDTH = 80

_quiet = False


def configure(*, quiet: bool, verbose: bool, logs: bool) -> None:
    """``logs``: this process configures logging itself (those that run Scrapy in
    process let Scrapy install its handler, at ``Config.scrapy_log_level``)."""
    global _quiet  # noqa: PLW0603 - one setting per process, set by the CLI once
    _quiet = quiet
    if logs:
        level = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
        logging.basicConfig(
            level=level, stream=sys.stderr, format="invcrawl: %(levelname)s: %(message)s"
        )


def quiet() -> bool:
    return _quiet


def say(text: str) -> None:
    """A note for the user on standard error (nothing with ``-q``)."""
    if not _quiet:
        print(text, file=sys.stderr, flush=True)


def note(text: str) -> None:
    """``say`` with the program's name: a note from a long-running command (a Redis
    outage it rides out, a crawl forgotten under it), one line."""
    say(f"invcrawl: {terminal_safe(' '.join(text.split()))}")


def width(stream: IO[str] | None = None) -> int | None:
    """Columns of the terminal ``stream`` (standard output by default) writes to, or None
    when it is not a terminal: piped output is never cut."""
    stream = sys.stdout if stream is None else stream
    try:
        if not stream.isatty():
            return None
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(fd).columns or FALLBACK_WIDTH
    except OSError:
        return FALLBACK_WIDTH


def confirm(question: str) -> bool:
    """Ask on the terminal; only y or yes goes ahead."""
    print(question, end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")
