"""Exit codes and the one-line error every command ends with on a user mistake."""

from __future__ import annotations

import sys

from common.secrets import mask_secrets
from invcrawl.render import terminal_safe

EXIT_OK = 0
EXIT_FAILED = 1  # the job ran and failed (e.g. the inventory could not be fetched)
EXIT_USAGE = 2  # the user asked for something impossible (bad flag, bad URL...)
EXIT_DEAD_PAGES = 3  # the crawl finished with dead-lettered pages
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a killed pipe writer


class UserError(Exception):
    """A one-line, actionable error caused by input or environment, not by a bug."""


def fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"invcrawl: error: {terminal_safe(mask_secrets(message))}", file=sys.stderr)
    return code
