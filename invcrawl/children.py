"""The consumer processes ``invcrawl crawl`` starts: their command line and environment
(:func:`child_argv`, :func:`child_env`; their sites and crawls in files when several:
:func:`sites_args`, :func:`crawl_ids_args`), and what they write to their log files
(``DATA_DIR/logs/RUN/consumer-N.log``, one per consumer slot, appended across restarts):

* :func:`last_error`: why one exited (its last ``invcrawl: error:`` line), which the
  supervisor says when it restarts it or stops;
* :class:`LogRelay`: with ``crawl -v``, invcrawl's own log records (from INFO up) shown on
  the terminal as the consumers write them (Scrapy's stay in the files), each line
  naming its consumer: the README's ``-v`` for a command whose work runs in children.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from invcrawl.common.settings.config import SETTINGS_VARIABLE, Config, settings_json
from invcrawl.common.settings.options import OPTIONS
from invcrawl.common.site import parse_sites_file

TAIL_BYTES = 64 * 1024  # the end of a log read for its last error
READ_BYTES = 256 * 1024  # read of one log per tick, at most (a chatty child cannot stall us)
# Scrapy's log format: "2024-05-01 12:00:00 [invcrawl.consumer] INFO: message"
RECORD = re.compile(r"^\S+ \S+ \[(invcrawl[\w.]*)\] (INFO|WARNING|ERROR|CRITICAL): (.*)$")
ERROR_PREFIX = "invcrawl: error: "


PER_CPU = 4  # consumer processes per CPU at most: each already fetches --concurrency pages


def consumers_for(
    requested: int, cpus: int, pages_left: int | None, concurrency: int
) -> tuple[int, str | None]:
    """How many consumer processes to start for ``--consumers requested``, and the note
    that says why when fewer: at most :data:`PER_CPU` per CPU (beyond, processes only
    compete for the CPU, each with its Python and Scrapy start-up and ~100 MB), and, when
    the pages left are known (a resumed run), no more than can get a page
    (``concurrency`` pages at a time each)."""
    count, why = requested, ""
    cap = max(2, PER_CPU * cpus)
    if count > cap:
        count, why = cap, f"{PER_CPU} per CPU on this machine's {cpus}"
    if pages_left is not None:
        useful = max(1, -(-pages_left // concurrency))
        if count > useful:
            count = useful
            why = f"{pages_left} page(s) left, {concurrency} at a time per consumer"
    if count == requested:
        return count, None
    return count, f"starting {count} consumer(s), not {requested}: {why}"


def child_argv(command: str, *extra: str) -> list[str]:
    """The command line of a child process: its command and what names its work
    (``extra``: sites, ``--crawl-id``, ``--consume``, ``--burst``), readable in ``ps``;
    the settings it inherits come in its environment (:func:`child_env`). ``-P``: the
    working directory is not put first on the child's import path, so a folder holding
    its own ``common/`` or ``producer.py`` changes nothing."""
    return [sys.executable, "-P", "-m", "invcrawl", command, *extra]


def sites_args(sites: Sequence[str], folder: Path) -> list[str]:
    """The sites on the producer's command line: after ``--`` (a site is never taken for
    a flag, whatever it starts with), or, for several, in ``folder/sites.txt`` (``--sites
    FILE``: a command line holds a few thousand at most), when each reads back as itself
    (a site holding `` #`` would be cut there)."""
    if len(sites) > 1 and parse_sites_file("\n".join(sites)) == list(sites):
        path = folder / "sites.txt"
        path.write_text("".join(f"{site}\n" for site in sites), encoding="utf-8")
        return ["--sites", str(path)]
    return ["--", *sites]


def crawl_ids_args(crawl_ids: Sequence[str], folder: Path) -> list[str]:
    """The crawls a consumer serves: ``--crawl-id`` for one, for several
    ``folder/crawl-ids.txt`` (``--crawl-ids FILE``)."""
    if len(crawl_ids) == 1:
        return ["--crawl-id", crawl_ids[0]]
    path = folder / "crawl-ids.txt"
    path.write_text("".join(f"{c}\n" for c in crawl_ids), encoding="utf-8")
    return ["--crawl-ids", str(path)]


def child_settings(command: str, embedded: bool = False) -> list[str]:
    """The options a child running ``command`` inherits from this process. With the
    embedded Redis (``embedded``) the child gets no URL but the data dir: it joins the
    server as a user of its own (localredis/embedded.py), reading its password there."""
    names = [
        option.name
        for option in OPTIONS
        if option.inherited and command in option.commands
        if not (embedded and option.name == "redis")
    ]
    return names + (["data_dir", "fsync"] if embedded else [])


def child_env(config: Config, command: str, embedded: bool = False) -> dict[str, str]:
    """The environment of a child process: this one's, and the typed values of the
    settings it inherits (:func:`child_settings`) in INVCRAWL_SETTINGS, which win over
    any INVCRAWL_* variable it sees. A Redis URL with a password is there, never on a
    command line, where any user of the machine could read it."""
    if embedded:  # the child reads the data dir from wherever it runs
        config = dataclasses.replace(config, data_dir=config.data_dir.resolve())
    if config.verbose and config.log_level in ("WARNING", "ERROR"):
        # crawl -v: the consumers log invcrawl's INFO records too, which it shows
        config = dataclasses.replace(config, log_level="INFO")
    settings = settings_json(config, child_settings(command, embedded))
    return {**os.environ, SETTINGS_VARIABLE: settings}


def last_error(log: Path) -> str:
    """The last error line a child wrote to its log, or the last line it wrote, to name
    why it exited."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - TAIL_BYTES))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "no log"
    errors = [line for line in lines if line.startswith(ERROR_PREFIX)]
    if errors:
        return errors[-1].removeprefix(ERROR_PREFIX)
    last = [line.strip() for line in lines if line.strip()]
    return last[-1][:300] if last else "nothing in its log"


class LogRelay:
    """The invcrawl records the consumers append to their logs from now on, handed to
    ``show`` one line each (``consumer N: [logger] LEVEL: message``)."""

    def __init__(self, log_dir: Path, show: Callable[[str], None]) -> None:
        self.log_dir = log_dir
        self.show = show
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        for log in self._logs():  # what earlier runs wrote is not shown
            self._offsets[log] = log.stat().st_size

    def _logs(self) -> list[Path]:
        return sorted(self.log_dir.glob("consumer-*.log"))

    def relay(self) -> int:
        """Show the records written since the last call; how many."""
        shown = 0
        for log in self._logs():
            offset = self._offsets.get(log, 0)
            try:
                with open(log, "rb") as f:
                    f.seek(offset)
                    data = f.read(READ_BYTES)
            except OSError:
                continue
            self._offsets[log] = offset + len(data)
            data = self._partial.pop(log, b"") + data
            *lines, rest = data.split(b"\n")
            if rest:
                self._partial[log] = rest[-READ_BYTES:]
            name = log.stem.replace("-", " ")
            for raw in lines:
                match = RECORD.match(raw.decode("utf-8", "replace"))
                if match:
                    logger, level, message = match.groups()
                    self.show(f"{name}: [{logger}] {level}: {message}")
                    shown += 1
        return shown
