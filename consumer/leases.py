"""The lease settings a consumer's components share (slot ownership, claims, the
heartbeat, settling), built from ``Config`` by the runner (``consumer/run.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Leases:
    """A claim's lease, renewed by the heartbeat, and a task's hard deadline (seconds)."""

    lease: float
    task_deadline: float

    @property
    def lease_ms(self) -> int:
        return int(self.lease * 1000)
