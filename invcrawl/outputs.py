"""Output files checked before any work starts, and write failures as one line.

``crawl`` and ``export`` write JSON Lines through a ``.part`` file moved into place at
the end. A path that cannot be written (missing or read-only directory, a directory
given as the file) is refused before anything is crawled or read, as a usage error
(exit 2). A write that fails
later (a full disk) ends the command with one line; the crawl's state stays in Redis,
so running the same command again writes the whole file.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from common.config import Config, ConfigError
from invcrawl.errors import UserError


def is_stdout(path: Path | None) -> bool:
    return path is None or str(path) == "-"


def check_output_file(path: Path | None, flag: str = "-o") -> None:
    """Refuse an output file that cannot be written: its directory must exist (a typo
    in it is caught before the crawl, not after), and a probe ``.part`` file must be
    creatable there."""
    if is_stdout(path):
        return
    assert path is not None
    if path.is_dir():
        raise ConfigError(f"cannot write {flag} {path}: it is a directory")
    parent = path.parent
    if not parent.exists():
        raise ConfigError(f"cannot write {flag} {path}: no such directory {parent}")
    if not parent.is_dir():
        raise ConfigError(f"cannot write {flag} {path}: {parent} is not a directory")
    _probe(path.with_name(path.name + ".part"), f"{flag} {path}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"cannot write {flag} {path}: permission denied")


def check_crawl_outputs(config: Config) -> None:
    """``crawl``'s output: the ``-o`` file, or the ``--out-dir`` folder of one file per
    site (created if needed)."""
    if config.output is not None:
        check_output_file(config.output)
    else:
        check_output_dir(config.out_dir)


def check_output_dir(path: Path, flag: str = "--out-dir") -> None:
    """An output directory is created if needed, and must take a new file."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {flag} {path}: {describe(exc)}") from None
    _probe(path / f".invcrawl-probe-{os.getpid()}", f"{flag} {path}")


def _probe(probe: Path, what: str) -> None:
    existed = probe.exists()
    try:
        with open(probe, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write {what}: {describe(exc)}") from None
    if not existed:
        probe.unlink(missing_ok=True)


def describe(exc: OSError) -> str:
    """``No space left on device`` rather than ``[Errno 28] No space left on device:
    '/x/y.part'``."""
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return (exc.strerror or str(exc)).lower()


def write_failed(path: Path | None, exc: OSError, keep: str) -> UserError:
    """The one line of an output write that failed mid-way (``keep``: what was kept)."""
    where = "standard output" if is_stdout(path) else str(path)
    return UserError(f"cannot write {where}: {describe(exc)}; {keep}")
