"""Exit codes (the README's table) and the one-line error every command ends with on a
user mistake."""

from __future__ import annotations

import signal
import sys

from invcrawl.process.secrets import mask_secrets
from invcrawl.render import terminal_safe

EXIT_OK = 0
EXIT_FAILED = 1  # the job ran and failed (e.g. the inventory could not be fetched)
EXIT_USAGE = 2  # the user asked for something impossible (bad flag, bad URL...)
EXIT_DEAD_PAGES = 3  # the crawl finished with dead-lettered pages
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130: stopped by SIGINT (Ctrl-C)
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143: stopped by SIGTERM (docker stop, kill)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a killed pipe writer


class UserError(Exception):
    """A one-line, actionable error caused by input or environment, not by a bug."""


class UsageError(UserError):
    """A :class:`UserError` in how the command was asked for (exit 2): a combination of
    flags that cannot work, a missing flag, a crawl to pick."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that the same clean-up runs
    (embedded Redis stopped, partial files removed); the exit code is 143."""


def fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"invcrawl: error: {terminal_safe(mask_secrets(message))}", file=sys.stderr)
    return code
