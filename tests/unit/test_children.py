"""The consumer processes of `invcrawl crawl` (invcrawl/children.py): how many start for a
`--consumers` (bounded by the CPUs and the pages left), why one exited (its last error
line), and the invcrawl records of their logs shown with `crawl -v`."""

from __future__ import annotations

from pathlib import Path

from invcrawl.children import PER_CPU, LogRelay, consumers_for, last_error


def test_consumers_are_bounded_by_the_cpus_and_the_pages_left() -> None:
    assert consumers_for(4, cpus=2, pages_left=None, concurrency=8) == (4, None)
    count, note = consumers_for(100_000, cpus=2, pages_left=None, concurrency=8)
    assert count == PER_CPU * 2
    assert (
        note == f"starting {count} consumer(s), not 100000: {PER_CPU} per CPU on this machine's 2"
    )
    assert consumers_for(100_000, cpus=1, pages_left=None, concurrency=8)[0] == max(2, PER_CPU)
    # a resumed run: no more than can get a page (8 at a time each)
    count, note = consumers_for(6, cpus=16, pages_left=20, concurrency=8)
    assert count == 3 and note is not None and "20 page(s) left, 8 at a time" in note
    assert consumers_for(6, cpus=16, pages_left=0, concurrency=8)[0] == 1
    assert consumers_for(2, cpus=16, pages_left=5000, concurrency=8) == (2, None)


def test_the_last_error_of_a_log(tmp_path: Path) -> None:
    log = tmp_path / "consumer-0.log"
    assert last_error(log) == "no log"
    log.write_text("")
    assert last_error(log) == "nothing in its log"
    log.write_text(
        "invcrawl: error: an earlier one\n2024-05-01 12:00:00 [scrapy] INFO: x\n"
        "invcrawl: error: no such file or directory: /srv/site\nbye\n"
    )
    assert last_error(log) == "no such file or directory: /srv/site"
    log.write_text("Traceback (most recent call last):\n  ...\nMemoryError\n\n")
    assert last_error(log) == "MemoryError"


def test_verbose_shows_the_consumers_invcrawl_records_as_they_come(tmp_path: Path) -> None:
    earlier = "2024-05-01 11:00:00 [invcrawl.consumer] INFO: an earlier run\n"
    (tmp_path / "consumer-0.log").write_text(earlier)
    shown: list[str] = []
    relay = LogRelay(tmp_path, shown.append)
    assert relay.relay() == 0  # what earlier runs wrote is not shown
    with open(tmp_path / "consumer-0.log", "a") as log:
        log.write(
            "2024-05-01 12:00:00 [scrapy.core.engine] INFO: Spider opened\n"
            "2024-05-01 12:00:01 [invcrawl.consumer] INFO: crawl c complete; consumer x leaves it\n"
            "2024-05-01 12:00:02 [invcrawl.reconnect] WARNING: Redis unav"  # being written
        )
    (tmp_path / "consumer-1.log").write_text(
        "2024-05-01 12:00:03 [invcrawl.producer] INFO: crawl c: 40 pages enqueued\n"
    )
    assert relay.relay() == 2
    assert shown == [
        "consumer 0: [invcrawl.consumer] INFO: crawl c complete; consumer x leaves it",
        "consumer 1: [invcrawl.producer] INFO: crawl c: 40 pages enqueued",
    ]
    with open(tmp_path / "consumer-0.log", "a") as log:
        log.write("ailable\n")
    assert relay.relay() == 1
    assert shown[-1] == "consumer 0: [invcrawl.reconnect] WARNING: Redis unavailable"
