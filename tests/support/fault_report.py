"""What a fault run measured (:class:`Report`) and the table ``support/fault_cli.py`` prints."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    scenario: str
    pages: int = 0
    entries: int = 0
    consumers_killed: int = 0
    redis_restarts: int = 0
    executions: int = 0
    fenced: int = 0
    items_expected: int = 0
    items_written: int = 0
    duplicates: int = 0
    lost: int = 0
    dead_pages: int = 0
    failed_items: int = 0  # items of dead pages' entries (status failed)
    unexpected_exits: int = 0
    refused_on_load: int = 0  # NOPERM/CRITICAL lines logged while Redis loaded its AOF
    seconds: float = 0.0
    completed: bool = False
    accounting_ok: bool = False
    control: bool = False
    verdict: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict in ("ok", "caught")


COLUMNS = (
    "scenario",
    "pages",
    "entries",
    "consumers_killed",
    "redis_restarts",
    "executions",
    "fenced",
    "items_expected",
    "items_written",
    "duplicates",
    "lost",
    "dead_pages",
    "failed_items",
    "seconds",
    "verdict",
)
HEADERS = (
    "scenario",
    "pages",
    "entries",
    "killed",
    "redis",
    "execs",
    "fenced",
    "expected",
    "written",
    "dups",
    "lost",
    "dead",
    "failed",
    "secs",
    "verdict",
)


def table(reports: list[Report]) -> str:
    rows = [HEADERS] + [tuple(str(getattr(r, c)) for c in COLUMNS) for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [
        "  ".join(
            cell.ljust(w) if i in (0, 14) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    for r in reports:
        for note in r.notes:
            lines.append(f"  {r.scenario}: {note}")
    return "\n".join(lines)
