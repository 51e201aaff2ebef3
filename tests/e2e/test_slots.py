"""Slot assignment with real consumer processes: automatic sharing of S slots by any
number of consumers (join, graceful leave, crash), and pinning.

The bounds under test (docs/deploy.md, with L the task lease): after a consumer joins or
leaves cleanly, every slot has exactly one owner and every live consumer owns its share
within 2L/3; after a crash, within L; and no slot is ever without an owner for longer
than one lease period. Owners are sampled every 20 ms from the test
(``invcrawl:{C}:owner:<s>``).
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
# Sampling and process scheduling add a little to every measured handover.
SLACK = 0.3


def test_consumers_join_and_leave_mid_crawl(redis_url: str, tmp_path: Path) -> None:
    """1 consumer, grow to 3, shrink to 2 (SIGTERM, as `docker compose up --scale`
    does), then crash one (SIGKILL): the crawl completes, the accounting invariant
    holds, and every slot had an owner throughout."""
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
                fully_assigned([id_a]), LEASE + SLACK, "the first consumer to own every slot"
            )

            # Grow to 3.
            second, third = h.start_consumer(), h.start_consumer()
            id_b, id_c = h.wait_joined(second), h.wait_joined(third)
            joined = time.monotonic()
            grown = sampler.wait(
                fully_assigned([id_a, id_b, id_c]), 3 * LEASE, "3 consumers to share the slots"
            )
            assert grown.t - joined <= 2 * LEASE / 3 + SLACK, f"join took {grown.t - joined:.2f}s"
            assert not h.finished(), "the crawl ended before the test could shrink it"

            # Shrink to 2: graceful stop, as docker sends on scale-down (exit 128 + SIGTERM).
            second.terminate()
            assert second.wait(15) == 143, second.tail()
            left = sampler.wait(
                lambda s: id_b not in s.members and id_b not in s.owners,
                LEASE,
                "the stopped consumer to leave",
            )
            shrunk = sampler.wait(
                fully_assigned([id_a, id_c]),
                3 * LEASE,
                "2 consumers to share the slots",
                after=left.t,
            )
            assert shrunk.t - left.t <= 2 * LEASE / 3 + SLACK, (
                f"leave took {shrunk.t - left.t:.2f}s"
            )
            assert not h.finished(), "the crawl ended before the test could crash a consumer"

            # Crash one: its owner leases expire (2L/3), the survivor takes its slots at
            # its next heartbeat (L/3).
            third.kill()
            killed = time.monotonic()
            alone = sampler.wait(
                fully_assigned([id_a]), 3 * LEASE, "the survivor to own every slot", after=killed
            )
            assert alone.t - killed <= LEASE + SLACK, (
                f"takeover after a crash took {alone.t - killed:.2f}s"
            )

            print(
                f"handover: join {grown.t - joined:.2f}s, leave {shrunk.t - left.t:.2f}s, "
                f"crash {alone.t - killed:.2f}s (lease {LEASE}s); pages done before the "
                f"end: {h.pages_done()}/{site.tasks}"
            )
            throttle.delay = 0
            h.wait_finished(60)
            finished = time.monotonic()
        assert h.wait_exited([first], 30) == [0], first.tail()

        gaps = sampler.gaps(owned_all.t, finished)
        print(f"longest time without an owner: {max(gaps.values()):.2f}s")
        assert max(gaps.values()) <= LEASE, f"slots without an owner for too long: {gaps}"
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
            sampler.wait(lambda s: s.owners == want, LEASE + SLACK, "pinned ownership")
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
                2 * LEASE,
                "the automatic consumer to own every slot not pinned",
            )
            h.wait_finished(60)
        assert h.wait_exited() == [0, 0]
        check_accounting(h.redis, crawl, site.keys).assert_ok()
