"""Output files checked before any work starts, and write failures as one line.

``crawl`` and ``export`` write JSON Lines through a ``.part`` file moved into place at
the end (``invcrawl/output/files.py``). An output is standard output (``-``, or
``/dev/stdout``, written in place) or a regular file the user named: a path that cannot
be written (missing or read-only directory, a directory given as the file) or that is
not a regular file (a symbolic link, a FIFO, a device, a socket: renaming the finished
file over it would replace it) is refused before anything is crawled or read, as a
usage error (exit 2). A write that fails later (a full disk) ends the command with one
line; the crawl's state stays in Redis, so running the same command again writes the
whole file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.errors import UserError
from invcrawl.output.files import PartFileLost, is_stdout


def check_output_file(path: Path | None, flag: str = "-o") -> None:
    """Refuse an output file that cannot be written or is not a regular file: its
    directory must exist (a typo in it is caught before the crawl, not after), and a
    new file must be creatable there."""
    if is_stdout(path):
        return
    assert path is not None
    _regular_or_absent(path, flag)
    parent = path.parent
    if not parent.exists():
        raise ConfigError(f"cannot write {flag} {path}: no such directory {parent}")
    if not parent.is_dir():
        raise ConfigError(f"cannot write {flag} {path}: {parent} is not a directory")
    _probe(parent, f"{flag} {path}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"cannot write {flag} {path}: permission denied")


def check_crawl_outputs(config: Config, crawl_ids: Sequence[str] = ()) -> None:
    """``crawl``'s output: the ``-o`` file, or the ``--out-dir`` folder (created if
    needed) and the ``<crawl-id>.jsonl`` file of each crawl in it."""
    if config.output is not None:
        check_output_file(config.output)
        return
    check_output_dir(config.out_dir)
    for crawl_id in crawl_ids:
        _regular_or_absent(config.out_dir / f"{crawl_id}.jsonl", "--out-dir")


def check_output_dir(path: Path, flag: str = "--out-dir") -> None:
    """An output directory is created if needed, and must take a new file."""
    if path.is_symlink():
        raise ConfigError(
            f"cannot write {flag} {path}: it is a symbolic link (give the directory it "
            f"points to, {os.path.realpath(path)})"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {flag} {path}: {describe(exc)}") from None
    _probe(path, f"{flag} {path}")


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _regular_or_absent(path: Path, flag: str) -> None:
    try:
        info = path.lstat()
    except (FileNotFoundError, NotADirectoryError):  # (the directory check says which)
        return
    except OSError as exc:
        raise ConfigError(f"cannot write {flag} {path}: {describe(exc)}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError(
            f"cannot write {flag} {path}: it is a symbolic link (give the file it points "
            f"to, {os.path.realpath(path)})"
        )
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"cannot write {flag} {path}: it is a directory")
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise ConfigError(
                f"cannot write {flag} {path}: it is {kind}, not a regular file (the "
                "output replaces it; `-o -` writes to standard output)"
            )


def _probe(directory: Path, what: str) -> None:
    """A new file can be created in ``directory`` (created and removed at once)."""
    probe = directory / f".invcrawl-probe-{os.getpid()}"
    probe.unlink(missing_ok=True)  # (left by a killed process of the same pid)
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write {what}: {describe(exc)}") from None
    os.close(fd)
    probe.unlink(missing_ok=True)


def describe(exc: OSError) -> str:
    """``No space left on device`` rather than ``[Errno 28] No space left on device:
    '/x/y.part'``."""
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if isinstance(exc, PartFileLost):
        return str(exc.strerror)
    return (exc.strerror or str(exc)).lower()


def write_failed(path: Path | None, exc: OSError, keep: str) -> UserError:
    """The one line of an output write that failed mid-way (``keep``: what was kept)."""
    where = "standard output" if is_stdout(path) else str(path)
    return UserError(f"cannot write {where}: {describe(exc)}; {keep}")
