"""Writing output files: standard output, or a regular file replaced atomically.

Every file a command writes goes through ``OUT.part`` beside ``OUT``
(:class:`PartFile`), moved into place only when complete:

* the ``.part`` file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW``: a symlink
  planted at ``OUT.part`` is never followed, nothing but a fresh regular file is written;
* a ``.part`` left by an earlier run that was killed (a regular file nobody holds a lock
  on) is taken over in place; anything else found there (a symlink, a FIFO, a device)
  is removed, never opened;
* the writer holds an exclusive ``flock`` on it while it writes: a second command
  writing the same output at the same time (two ``crawl``\\ s of one site in one
  directory) writes its own ``OUT.part-PID`` instead of truncating the first one's;
* before the rename, the ``.part`` path must still be the file written (not removed,
  not replaced by another): otherwise :class:`PartFileLost` says what happened;
* the file is flushed and fsynced, renamed over ``OUT``, and the directory fsynced, so a
  finished output survives a crash of the machine as well.

Output paths themselves are checked before any work starts (``invcrawl/output/paths.py``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
from collections.abc import AsyncIterable, Iterable, Iterator
from pathlib import Path
from typing import IO

# Paths that name standard output: written to it, in place (``-o /dev/stdout`` is what
# a user writes when a program wants a file name).
STDOUT_NAMES = frozenset({"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


def is_stdout(path: Path | str | None) -> bool:
    return path is None or str(path) in STDOUT_NAMES


class PartFileLost(OSError):
    """The ``.part`` file being written was removed or replaced by someone else."""


class PartFile:
    """``target``'s ``.part`` file, open for writing (see the module docstring)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.path = target.with_name(target.name + ".part")
        fd = _open_part(self.path)
        if fd is None:  # another process is writing this output right now
            self.path = target.with_name(f"{target.name}.part-{os.getpid()}")
            fd = _open_part(self.path)
            if fd is None:
                raise OSError(errno.EBUSY, f"{self.path} is being written", str(self.path))
        info = os.fstat(fd)
        self.identity = (info.st_dev, info.st_ino)
        # binary: the crawl's file is written from bytes (StreamTail), the rest from text
        self.out: IO[bytes] = open(fd, "wb")  # noqa: SIM115 - closed by us
        self.lines = 0

    def write(self, line: str) -> None:
        """One line (``line`` without its newline)."""
        self.out.write(line.encode("utf-8") + b"\n")
        self.lines += 1

    def write_lines(self, lines: list[bytes]) -> None:
        """Lines as UTF-8 bytes (without their newlines), joined in one write."""
        if lines:
            # (two writes, not ``join + b"\n"``, which would copy the joined lines again)
            self.out.write(b"\n".join(lines))
            self.out.write(b"\n")
            self.lines += len(lines)

    def check(self) -> None:
        """Raise :class:`PartFileLost` unless ``self.path`` is still the file written."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            raise PartFileLost(
                errno.ENOENT, f"{self.path} was removed while it was written"
            ) from None
        if (info.st_dev, info.st_ino) != self.identity:
            raise PartFileLost(errno.ESTALE, f"{self.path} was replaced while it was written")

    def commit(self) -> int:
        """Flush, fsync, check, move into place, fsync the directory; the line count."""
        self.out.flush()
        os.fsync(self.out.fileno())
        self.check()
        os.replace(self.path, self.target)
        _fsync_dir(self.target.parent)
        self.out.close()  # (releases the lock)
        return self.lines

    def keep(self) -> int:
        """Flush, fsync and close the ``.part`` file, left where it is (incomplete: never
        renamed over the output); the line count."""
        with contextlib.suppress(OSError):  # (a full disk: what was written stays)
            self.out.flush()
            os.fsync(self.out.fileno())
        with contextlib.suppress(OSError):
            self.out.close()  # (releases the lock)
        return self.lines

    def abandon(self) -> None:
        """Close and remove the ``.part`` file (if it is still ours)."""
        with contextlib.suppress(OSError):  # a full disk fails the final flush too
            self.out.close()
        with contextlib.suppress(OSError):
            self.check()
            self.path.unlink()


def _open_part(path: Path) -> int | None:
    """A locked, empty, regular ``path`` of ours; None if another process holds it."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(10):  # (another process may create or remove it in between)
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            stale = _stale(path, flags)
            if stale is None:
                continue  # it was not a regular file: removed, create it again
            fd = stale
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        return fd
    raise OSError(errno.EEXIST, f"cannot create {path}", str(path))


def _stale(path: Path, flags: int) -> int | None:
    """Open a ``.part`` left by an earlier run if it is a regular file; remove anything
    else found at its name (never following it) and return None."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):  # (opening a device may act on it: never)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return None
    try:
        # O_NONBLOCK: should it have become a FIFO meanwhile, do not wait for a reader
        fd = os.open(path, flags | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:  # read-only, or replaced by a symlink (ELOOP) meanwhile: ours to remove
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return None
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (found.st_dev, found.st_ino):
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return fd


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # some file systems refuse it; the rename holds
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class _StdoutLines:
    """Standard output as a sink of lines: :class:`PartFile`'s ``write`` and
    ``commit``, nothing to abandon."""

    def __init__(self) -> None:
        self.lines = 0

    def write(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        self.lines += 1

    def commit(self) -> int:
        sys.stdout.flush()
        return self.lines

    def abandon(self) -> None:
        pass


@contextlib.contextmanager
def _lines_to(output: Path | None) -> Iterator[PartFile | _StdoutLines]:
    """Where :func:`write_lines` writes: standard output, or ``output``'s ``.part`` file,
    removed if the writing fails."""
    sink: PartFile | _StdoutLines
    if is_stdout(output):
        sink = _StdoutLines()
    else:
        assert output is not None
        sink = PartFile(output)
    try:
        yield sink
    except BaseException:
        sink.abandon()
        raise


def write_lines(lines: Iterable[str], output: Path | None) -> int:
    """Write ``lines`` to standard output, or atomically to ``output``; the count."""
    with _lines_to(output) as sink:
        for line in lines:
            sink.write(line)
        return sink.commit()


async def write_lines_async(lines: AsyncIterable[str], output: Path | None) -> int:
    """:func:`write_lines` of an asynchronous source."""
    with _lines_to(output) as sink:
        async for line in lines:
            sink.write(line)
        return sink.commit()


@contextlib.contextmanager
def appending(output: Path | None) -> Iterator[IO[str]]:
    """``output`` open for appending (created if needed, never through a symlink), or
    standard output; closed (or flushed) afterwards."""
    if is_stdout(output):
        try:
            yield sys.stdout
        finally:
            sys.stdout.flush()
        return
    assert output is not None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    with open(os.open(output, flags, 0o666), "a", encoding="utf-8") as out:
        yield out


def durable_flush(out: IO[str]) -> None:
    """Flush ``out`` and, unless it is standard output, fsync it."""
    out.flush()
    if out is not sys.stdout:
        os.fsync(out.fileno())


def read_lines(path: Path) -> Iterator[str]:
    """The non-empty lines of an earlier output file (``--base``, a previous ``-o``)."""
    with open(path, encoding="utf-8") as src:
        for line in src:
            if line.strip():
                yield line.rstrip("\n")
