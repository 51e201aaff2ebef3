"""invcrawl/output/files.py: the ``.part`` file of every output, against what may be found at
its name (a planted symlink, a FIFO, a stale file, another writer) or happen to it while
it is written (removed, replaced)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from invcrawl.output.files import PartFile, PartFileLost, is_stdout, write_lines


def test_a_part_file_is_written_and_moved_into_place(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    part = PartFile(target)
    assert part.path == tmp_path / "out.jsonl.part"
    part.write("a")
    part.write("b")
    assert target.read_text() == "old\n"  # untouched until the commit
    assert part.commit() == 2
    assert target.read_text() == "a\nb\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_a_planted_symlink_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    target = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.part").symlink_to(victim)
    assert write_lines(["x"], target) == 1
    assert victim.read_text() == "precious\n"
    assert target.read_text() == "x\n" and not target.is_symlink()
    assert not (tmp_path / "out.jsonl.part").exists()


def test_a_fifo_at_the_part_name_is_removed_not_opened(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    os.mkfifo(tmp_path / "out.jsonl.part")
    # opening the FIFO for writing would block without a reader: this must not
    done = threading.Event()
    result: list[int] = []

    def write() -> None:
        result.append(write_lines(["x"], target))
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert done.wait(30), "blocked on the FIFO"
    assert result == [1] and target.read_text() == "x\n"


def test_a_stale_part_of_an_earlier_run_is_taken_over(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    stale = tmp_path / "out.jsonl.part"
    stale.write_text("half a line from a killed run")
    stale.chmod(0o444)  # (even read-only: it is ours to replace)
    assert write_lines(["fresh"], target) == 1
    assert target.read_text() == "fresh\n"
    assert not stale.exists()


def test_a_second_writer_of_the_same_output_gets_its_own_part(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    first = PartFile(target)
    second = PartFile(target)
    assert first.path.name == "out.jsonl.part"
    assert second.path.name == f"out.jsonl.part-{os.getpid()}"
    first.write("1")
    second.write("2")
    assert second.commit() == 1
    assert first.commit() == 1
    assert target.read_text() == "1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_a_kept_part_stays_beside_the_output_and_is_taken_over_later(tmp_path: Path) -> None:
    """What a crawl forgotten while it ran had written (``forget --force``) stays in its
    ``.part`` file, closed and unlocked, never renamed over the output."""
    target = tmp_path / "out.jsonl"
    part = PartFile(target)
    part.write("a")
    part.write("b")
    assert part.keep() == 2
    assert part.path.read_text() == "a\nb\n" and not target.exists()
    again = PartFile(target)  # a later run takes it over: it was not locked any more
    assert again.path == part.path
    again.abandon()


def test_a_removed_part_is_reported_and_nothing_is_moved(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    part = PartFile(target)
    part.write("a")
    part.path.unlink()
    with pytest.raises(PartFileLost, match="was removed while it was written"):
        part.commit()
    assert not target.exists()


def test_a_replaced_part_is_reported_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    part = PartFile(target)
    part.write("a")
    other = tmp_path / "other"
    other.write_text("someone else's\n")
    os.replace(other, part.path)
    with pytest.raises(PartFileLost, match="was replaced while it was written"):
        part.check()
    part.abandon()
    assert part.path.read_text() == "someone else's\n"  # not ours: not removed
    assert not target.exists()


def test_a_failed_write_leaves_no_part(tmp_path: Path) -> None:
    def failing() -> Iterator[str]:
        yield "a"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_lines(failing(), tmp_path / "out.jsonl")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("path", "stdout"),
    [("-", True), ("/dev/stdout", True), ("/dev/fd/1", True), ("out.jsonl", False)],
)
def test_names_of_standard_output(path: str, stdout: bool) -> None:
    assert is_stdout(Path(path)) is stdout
    assert is_stdout(None)
