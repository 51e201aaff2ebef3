"""The closest word to a mistyped one in argparse's usage errors: a command or choice
(``invalid choice: 'mpc'``) and a flag (``unrecognized arguments: --consumrs``)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)$")


def with_suggestion(message: str) -> str:
    """argparse's ``invalid choice: 'mpc' (choose from 'crawl', ...)`` with the closest
    choice first, when one is close: ``invalid choice: 'mpc' (did you mean 'mcp'?
    choose from ...)``; any other message as it is."""
    match = _INVALID_CHOICE.search(message)
    if match is None:
        return message
    choices = [choice.strip().strip("'") for choice in match["choices"].split(",")]
    close = difflib.get_close_matches(match["given"], choices, n=1, cutoff=0.6)
    if not close:
        return message
    given, listed = match["given"], match["choices"]
    suggestion = f"invalid choice: '{given}' (did you mean '{close[0]}'? choose from {listed})"
    return message[: match.start()] + suggestion


def with_flag_suggestion(message: str, flags: Sequence[str]) -> str:
    """argparse's ``unrecognized arguments: --consumrs 2`` with the flag of ``flags``
    closest to each unknown one: ``(did you mean --consumers?)``."""
    _, found, words = message.partition("unrecognized arguments: ")
    if not found:
        return message
    meant = []
    for word in words.split():
        given = word.partition("=")[0]
        if given.startswith("--"):
            meant += difflib.get_close_matches(given, flags, n=1, cutoff=0.75)
    return message + (f" (did you mean {', '.join(meant)}?)" if meant else "")
