"""When the embedded Redis's AOF is compacted before it stops (localredis/aof.py): its
preamble read from either layout, Redis 6's one file and Redis 7's manifest."""

from __future__ import annotations

from pathlib import Path

from invcrawl.localredis import aof


def test_a_redis6_aof_has_a_preamble_when_it_starts_with_an_rdb_image(tmp_path: Path) -> None:
    assert not aof.has_preamble(tmp_path)  # no AOF at all
    (tmp_path / "appendonly.aof").write_bytes(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")
    assert not aof.has_preamble(tmp_path)
    (tmp_path / "appendonly.aof").write_bytes(b"REDIS0009\xfa...")
    assert aof.has_preamble(tmp_path)


def test_a_redis7_aof_has_a_preamble_when_its_base_is_an_rdb(tmp_path: Path) -> None:
    folder = tmp_path / "appendonlydir"
    folder.mkdir()
    manifest = folder / "appendonly.aof.manifest"
    manifest.write_text(
        "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    )
    (folder / "appendonly.aof.1.base.aof").write_bytes(b"*2\r\n$6\r\nSELECT\r\n")
    assert not aof.has_preamble(tmp_path)
    manifest.write_text(
        "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
    )
    (folder / "appendonly.aof.2.base.rdb").write_bytes(b"REDIS0010")
    assert aof.has_preamble(tmp_path)


def test_compaction_is_asked_for_without_a_preamble_or_past_the_growth() -> None:
    mb = 1024 * 1024
    assert aof.needs_compaction(False, 10, 10)  # commands only: always
    assert not aof.needs_compaction(False, 0, 0)  # nothing written
    assert not aof.needs_compaction(True, 100 * mb, 90 * mb)
    assert aof.needs_compaction(True, 200 * mb, 100 * mb)  # grown by half its base
    assert aof.needs_compaction(True, aof.GROWN_BYTES + 2 * mb, mb)
    assert not aof.needs_compaction(True, 3 * mb, mb)
