"""``python -m invcrawl``: how the tests, the crawl's children and the image start it."""

import os
import signal
import sys
from types import FrameType
from typing import Any

# Its imports take seconds on a loaded machine: a stop signal among them ends the command
# as one during its work does (128 + the signal, one line, no traceback). Signals the
# process was started with ignored stay ignored (process/interrupts.IGNORED_AT_START).
_STARTING: dict[signal.Signals, Any] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
}


def _stopped_while_starting(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"invcrawl: interrupted\n")
    os._exit(128 + signum)


# The handlers replaced, each with what it replaced: main() puts them back once its own
# stand (inside its handling of KeyboardInterrupt, its SIGTERM handler installed), so
# that no moment between the two has the default action (a signal then killed the
# process: -15, not 143).
_REPLACED: dict[signal.Signals, Any] = {}
for _signum, _default in _STARTING.items():
    if signal.getsignal(_signum) == _default:
        signal.signal(_signum, _stopped_while_starting)
        _REPLACED[_signum] = _default

from invcrawl.cli import main  # noqa: E402 - after the handlers above

sys.exit(main(starting=_REPLACED))
