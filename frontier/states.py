"""The crawl state machine, in one place. The Lua scripts write these states (the
transitions below name the script of each); a test checks that every state literal in
``frontier/lua`` is one of these, and that each transition is the one its script makes.

::

                 open.lua            produced.lua            complete.lua
    (new) ─────────────► producing ───────────────► running ───────────────► finished
      │                     │  ▲                        ▲                        │
      │ produce_failed.lua  │  │ open.lua (re-run)      │ produced.lua (pages    │
      ▼                     ▼  │                        │ added), redrive.lua    │
    failed ◄────────────────┘  └── failed               └────────────────────────┘

A refresh (``refresh.lua``) takes a ``finished`` crawl back to ``producing`` for one more
round: the producer enqueues every page again with its validators.

A crawl that is ``running`` or ``finished`` keeps its state when a re-run of its
producer fails: its tasks are still valid. ``producer`` is the state of the latest
production run, independent of the crawl's: completion needs it ``done``.
"""

from __future__ import annotations

from enum import StrEnum


class CrawlState(StrEnum):
    PRODUCING = "producing"  # the producer is reading the inventory and enqueueing
    RUNNING = "running"  # every page is enqueued; consumers are working
    FINISHED = "finished"  # every task committed or dead-lettered (complete.lua)
    FAILED = "failed"  # the producer failed before enqueueing anything (see `error`)

    @property
    def open(self) -> bool:
        """Consumers serve a crawl in this state."""
        return self in (CrawlState.PRODUCING, CrawlState.RUNNING)


class ProducerState(StrEnum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


# (from, to) -> the scripts that make that transition.
TRANSITIONS: dict[tuple[CrawlState | None, CrawlState], tuple[str, ...]] = {
    (None, CrawlState.PRODUCING): ("open",),
    (CrawlState.FAILED, CrawlState.PRODUCING): ("open",),
    (None, CrawlState.FAILED): ("produce_failed",),
    (CrawlState.PRODUCING, CrawlState.FAILED): ("produce_failed",),
    (CrawlState.PRODUCING, CrawlState.RUNNING): ("produced",),
    # a re-run that added pages, or dead letters put back
    (CrawlState.FINISHED, CrawlState.RUNNING): ("produced", "redrive"),
    (CrawlState.RUNNING, CrawlState.FINISHED): ("complete",),
    (CrawlState.FINISHED, CrawlState.PRODUCING): ("refresh",),  # a refresh round
}
