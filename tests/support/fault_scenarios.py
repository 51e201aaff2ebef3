"""The fault scenarios (tests/support/faults.py runs them): what each one does to a crawl.

``redis_kills`` and ``crash_all`` scenarios also run under the shipped Redis
configuration (``Run(..., shipped=True)``: the ACL users of deploy/redis/users.acl.in,
``appendfsync always``), where a restart must load every transaction of the AOF.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    control: str = "none"  # none | ack-first | split (broken variants that must be caught)
    kill_consumers: bool = False
    redis_kills: int = 0
    redis_down: float = 0.0  # seconds Redis stays down at each kill (default 0.3-1 s)
    sigstop: bool = False
    sigterm: bool = False
    poison: bool = False
    flaky: float = 0.0
    crash_all: bool = False
    consumers: int = 2
    delay_ms: int = 0  # every page is served after this pause (keeps leases busy)
    max_tries: int = 5


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "kill-consumers",
            "busy consumers SIGKILLed each time another 2-8% of the pages settled, respawned",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
            # A busy consumer killed every 0.6 s on average gives healthy pages several
            # deliveries; the limit is raised so that this run is about loss and
            # duplicates, not about the DLQ (the poison run tests the limit).
            max_tries=10,
        ),
        Scenario(
            "kill-redis",
            "redis-server SIGKILLed 3 times mid-crawl, restarted from AOF",
            redis_kills=3,
            delay_ms=5,
        ),
        Scenario(
            "redis-outage",
            "redis-server down for 3 leases mid-crawl: consumers wait, expired leases fenced",
            redis_kills=1,
            redis_down=6.0,
            delay_ms=40,
        ),
        Scenario(
            "sigstop",
            "a consumer SIGSTOPped past its lease, then SIGCONTed",
            sigstop=True,
            # Slow enough that the other consumer cannot finish the crawl during the
            # 2.5-lease pause (4 requests in flight per host: ~11 s for 151 pages); a
            # crawl complete before the paused consumer wakes leaves nothing to fence.
            delay_ms=300,
        ),
        Scenario(
            "sigterm",
            "a busy consumer SIGTERMed: it must finish or release its pages and exit 143",
            sigterm=True,
            delay_ms=60,
        ),
        Scenario("poison", "a page that kills its consumer on every delivery", poison=True),
        Scenario(
            "flaky-http",
            "HTTP 500s, resets and hangs on 15% of page requests",
            flaky=0.15,
            max_tries=10,
        ),
        Scenario(
            "crash-all",
            "all consumers and Redis SIGKILLed at once, then restarted",
            crash_all=True,
            delay_ms=5,
        ),
        Scenario(
            "control-ack-first",
            "BROKEN: acknowledge before work, under consumer kills",
            control="ack-first",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
        ),
        Scenario(
            "control-split",
            "BROKEN: items and ack in separate calls, under kills",
            control="split",
            kill_consumers=True,
            consumers=3,
            delay_ms=100,
            max_tries=20,  # the page crashed in the window is redelivered, not dead-lettered
        ),
    )
}
