"""Slot assignment with real consumer processes: automatic sharing of S slots by any
number of consumers (join, graceful leave, crash), and pinning.

The bounds under test (docs/deploy.md, with L the task lease and a heartbeat every L/3):
after a consumer joins or leaves cleanly, every slot has exactly one owner and every live
consumer owns its share within 2L/3 (two beats); after a crash, within L (three); and no
slot is ever without an owner for longer than one lease period. They are checked in
heartbeats, read from the membership in Redis, never in seconds. Owners are sampled every
20 ms from the test (``invcrawl:{C}:owner:<s>``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from support.crawl import (
    Harness,
    OwnerSampler,
    Throttle,
    build_site,
    check_accounting,
    fully_assigned,
)
from support.httpserver import serve

pytestmark = pytest.mark.e2e

LEASE = 2.0
SLOTS = 8
# How long a step may take before the test reports it as stuck: a timeout, not a bound
# (the bounds are counted in heartbeats).
WAIT = 30.0


def test_consumers_join_and_leave_mid_crawl(redis_url: str, tmp_path: Path) -> None:
    """1 consumer, grow to 3, shrink to 2 (SIGTERM, as `docker compose up --scale`
    does), then crash one (SIGKILL): the crawl completes, the accounting invariant
    holds, and every slot had an owner throughout.

    The bounds are counted in heartbeats, as the membership in Redis records them (a
    beat every L/3): a loaded machine delays beats, and so the handover, but not the
    number of beats it takes. Each bound is the documented one plus one beat for the
    phase at which the step began."""
    site = build_site(tmp_path / "site", pages=240, functions=2)
    throttle = Throttle(delay=0.1)  # ~15 pages/s per consumer while membership changes
    crawl = "slots"
    with (
        serve(site.root, throttle) as http,
        Harness(redis_url, crawl, tmp_path / "work", robots=False, lease=LEASE) as h,
    ):
        h.produce(http.url, slots=SLOTS)
        with OwnerSampler(redis_url, crawl, SLOTS, window_ms=int(LEASE * 1000)) as sampler:
            first = h.start_consumer()
            id_a = h.wait_joined(first)
            owned_all = sampler.wait(
                fully_assigned([id_a]), WAIT, "the first consumer to own every slot"
            )

            # Grow to 3: within 2L/3, two beats of each consumer.
            second, third = h.start_consumer(), h.start_consumer()
            id_b, id_c = h.wait_joined(second), h.wait_joined(third)
            joined = sampler.wait(lambda s: True, WAIT, "a sample after the joins")
            grown = sampler.wait(
                fully_assigned([id_a, id_b, id_c]), WAIT, "3 consumers to share the slots"
            )
            join_beats = sampler.slowest_heartbeats([id_a, id_b, id_c], joined.t, grown.t)
            assert join_beats <= 2 + 1, f"join took {join_beats} heartbeats"
            assert not h.finished(), "the crawl ended before the test could shrink it"

            # Shrink to 2: graceful stop, as docker sends on scale-down (exit 128 + SIGTERM).
            second.terminate()
            assert second.wait(WAIT) == 143, second.tail()
            left = sampler.wait(
                lambda s: id_b not in s.members and id_b not in s.owners,
                WAIT,
                "the stopped consumer to leave",
            )
            shrunk = sampler.wait(
                fully_assigned([id_a, id_c]), WAIT, "2 consumers to share the slots", after=left.t
            )
            leave_beats = sampler.slowest_heartbeats([id_a, id_c], left.t, shrunk.t)
            assert leave_beats <= 2 + 1, f"leave took {leave_beats} heartbeats"
            assert not h.finished(), "the crawl ended before the test could crash a consumer"

            # Crash one: its owner keys expire (2L/3: at most two beats of the survivor),
            # the survivor takes its slots at its next beat.
            third.kill()
            killed = sampler.wait(lambda s: True, WAIT, "a sample after the crash")
            alone = sampler.wait(
                fully_assigned([id_a]), WAIT, "the survivor to own every slot", after=killed.t
            )
            crash_beats = sampler.heartbeats(id_a, killed.t, alone.t)
            assert crash_beats <= 3 + 1, f"takeover after a crash took {crash_beats} heartbeats"

            print(
                f"handover: join {join_beats} beats ({grown.t - joined.t:.2f}s), leave "
                f"{leave_beats} ({shrunk.t - left.t:.2f}s), crash {crash_beats} "
                f"({alone.t - killed.t:.2f}s), lease {LEASE}s; pages done before the end: "
                f"{h.pages_done()}/{site.tasks}"
            )
            throttle.delay = 0
            h.wait_finished(60)
            finished = time.monotonic()
        assert h.wait_exited([first], 30) == [0], first.tail()

        # No slot without an owner for longer than a lease: counted in the beats of the
        # consumer that took it next (of the live ones, if none did before the end).
        for slot, start, end, taker in sampler.unowned_spans(owned_all.t, finished):
            later = sampler.window(end)
            takers = [taker] if taker else list(later[0].members if later else ())
            beats = sampler.slowest_heartbeats(takers, start, end) if takers else 0
            assert beats <= 3 + 1, f"slot {slot} had no owner for {beats} heartbeats"
        assert not sampler.errors
        # Every consumer served slots: exactly one owner per slot at each stage.
        for sample in (owned_all, grown, shrunk, alone):
            assert all(sample.owners), sample
        acc = check_accounting(h.redis, crawl, site.keys).assert_ok()
        assert acc.by_status == site.by_status
        assert h.stats().get("claims", 0) >= site.tasks


def test_pinned_consumers(redis_url: str, tmp_path: Path) -> None:
    """`--partition i/n` and `--slots a,b` pin consumers; pinned consumers own exactly
    their slots and together complete the crawl."""
    site = build_site(tmp_path / "site", pages=40, functions=2)
    throttle = Throttle(delay=0.02)
    crawl = "pinned"
    with (
        serve(site.root, throttle) as http,
        Harness(redis_url, crawl, tmp_path / "work", robots=False, lease=LEASE) as h,
    ):
        h.produce(http.url, slots=SLOTS)
        with OwnerSampler(redis_url, crawl, SLOTS) as sampler:
            even = h.start_consumer("--partition", "0/2")
            odd = h.start_consumer("--slots", "1,3,5,7")
            id_even, id_odd = h.wait_joined(even), h.wait_joined(odd)
            want = tuple(id_even if s % 2 == 0 else id_odd for s in range(SLOTS))
            sampler.wait(lambda s: s.owners == want, WAIT, "pinned ownership")
            h.wait_finished(60)
        assert h.wait_exited() == [0, 0]
        check_accounting(h.redis, crawl, site.keys).assert_ok()


def test_pinned_and_automatic_consumers_mixed(redis_url: str, tmp_path: Path) -> None:
    """A consumer pinned to some slots next to automatic consumers: the automatic ones
    cover every other slot, so the crawl completes."""
    site = build_site(tmp_path / "site", pages=40, functions=2)
    crawl = "mixed"
    with (
        serve(site.root, Throttle(delay=0.02)) as http,
        Harness(redis_url, crawl, tmp_path / "work", robots=False, lease=LEASE) as h,
    ):
        h.produce(http.url, slots=SLOTS)
        with OwnerSampler(redis_url, crawl, SLOTS) as sampler:
            pinned = h.start_consumer("--slots", "0,1")
            id_pinned = h.wait_joined(pinned)
            auto = h.start_consumer()
            id_auto = h.wait_joined(auto)
            sampler.wait(
                lambda s: (
                    s.owners[:2] == (id_pinned, id_pinned)
                    and all(o == id_auto for o in s.owners[2:])
                ),
                WAIT,
                "the automatic consumer to own every slot not pinned",
            )
            h.wait_finished(60)
        assert h.wait_exited() == [0, 0]
        check_accounting(h.redis, crawl, site.keys).assert_ok()
