"""Site-provided strings never reach the terminal raw: an inventory's Project and
Version, its domain:role names, URLs, reasons and errors pass through render.safe, and
every render function's text through terminal_safe (ESC, BEL, carriage returns, C1
controls and bidirectional overrides are shown escaped)."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from invcrawl.frontier.summary import CrawlStatus, FleetStatus
from invcrawl.render import safe, terminal_safe
from invcrawl.render_status import (
    render_dlq,
    render_fleet,
    render_inventory,
    render_report,
    render_status,
)
from support.cli import clean_env

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x9b1m\u202eevil\u2066"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2066")


def _clean(text: str) -> None:
    assert not any(c in text for c in RAW), repr(text)


def test_every_renderer_escapes_what_a_site_wrote() -> None:
    status: dict[str, Any] = {
        "crawl_id": "c",
        "state": "running",
        "project": HOSTILE,
        "version": HOSTILE,
        "site": "http://h/" + HOSTILE,
        "error": HOSTILE,
        "pages_done": 1,
        "pages_dead": 0,
        "pages_total": 2,
        "entries_total": 3,
        "items": 1,
        "stream_entries": 1,
        "items_by_status": {"ok": 1},
        "rate_pages_s": 1.0,
        "elapsed_s": 1,
        "eta_s": 1,
        "consumers_alive": [],
        "counters": {},
        "per_slot": [],
    }
    _clean(render_status(CrawlStatus.from_dict(status)))
    assert "\\x1b]0;pwned" in render_status(CrawlStatus.from_dict(status))  # shown, escaped
    fleet = {
        "crawls": [status | {"rate_pages_s": 0.0}],
        "hosts": [
            {
                "host": HOSTILE,
                "in_flight": 0,
                "limit": 4,
                "delay_s": 60.0,
                "robots_delay_s": 60.0,
                "robots_delay_capped_from": 1e20,
                "blocked_until": 2_000_000_000_000,
                "block_reason": HOSTILE,
            }
        ],
        "totals": {
            "crawls": 1,
            "open": 1,
            "pages_done": 1,
            "pages_total": 2,
            "pages_dead": 0,
            "items": 1,
            "rate_pages_s": 1.0,
        },
    }
    _clean(render_fleet(FleetStatus.from_dict(fleet)))
    assert "Crawl-delay 1e+20s capped to 60s" in render_fleet(FleetStatus.from_dict(fleet))
    inventory = {
        "url": HOSTILE,
        "project": HOSTILE,
        "version": HOSTILE,
        "format": "v2",
        "compressed_size": 1,
        "inflated_size": 1,
        "body_lines": 1,
        "parsed": 1,
        "malformed": 0,
        "blank_lines": 0,
        "unique_entries": 1,
        "duplicate_keys": 0,
        "skipped_entries": 0,
        "offsite_entries": 0,
        "pages": 1,
        "fetch_pages": 1,
        "types": {HOSTILE: 1},
        "malformed_examples": [{"lineno": 1, "reason": "x", "text": HOSTILE}],
    }
    _clean(render_inventory(inventory))
    _clean(render_dlq([{"id": "t", "tries": 1, "died_at": 0, "reason": HOSTILE, "url": HOSTILE}]))
    _clean(render_report({"crawl_id": "c", "roles": {HOSTILE: {}}, "totals": {}}))


@given(st.text())
def test_safe_text_has_no_control_character_and_one_line(text: str) -> None:
    out = safe(text)
    assert "\n" not in out
    _clean(out)
    assert terminal_safe(text).count("\n") == text.count("\n")


def test_the_inventory_command_prints_project_and_version_inert(tmp_path: Path) -> None:
    """``invcrawl inventory`` wrote the header's escape sequences to the terminal raw."""
    header = f"# Sphinx inventory version 2\n# Project: {HOSTILE}\n# Version: {HOSTILE}\n"
    header += "# The remainder of this file is compressed using zlib.\n"
    body = zlib.compress(b"a py:function 1 a.html#$ -\n")
    (tmp_path / "objects.inv").write_bytes(header.encode() + body)
    proc = subprocess.run(
        [sys.executable, "-m", "invcrawl", "inventory", str(tmp_path / "objects.inv")],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pwned" in proc.stdout
    _clean(proc.stdout + proc.stderr)
