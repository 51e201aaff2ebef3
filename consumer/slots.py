"""Which slots a consumer serves: pinned (``--slots 0,3`` / ``--partition i/n``) or
automatic through Redis membership and slot-owner leases (``assign.lua``)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from invcrawl.consumer.leases import Leases
from invcrawl.frontier.session import CrawlSession

# Every this many heartbeats a consumer also reaps the slots it does not own: reaping is
# idempotent, and this guarantees progress for slots whose owner vanished, or slots left
# over from a reshard, whatever the ownership state.
FULL_REAP_EVERY = 5


@dataclass(frozen=True, slots=True)
class SlotPinning:
    """The slots a consumer is pinned to: ``--slots 0,3``, ``--partition i/n``, or
    neither (automatic assignment)."""

    slots: tuple[int, ...] = ()
    partition: tuple[int, int] | None = None  # (i, n): the slots s with s % n == i

    def pinned(self, slot_count: int) -> list[int] | None:
        """The pinned slots of a crawl of ``slot_count`` slots; None: automatic."""
        if self.partition:
            index, total = self.partition
            return [s for s in range(slot_count) if s % total == index]
        if self.slots:
            return list(self.slots)
        return None


class SlotPolicy:
    def __init__(
        self,
        session: CrawlSession,
        consumer: str,
        pinning: SlotPinning,
        leases: Leases,
        slot_count: int,
    ) -> None:
        self.session = session
        self.consumer = consumer
        self.pinning = pinning
        self.leases = leases
        self.slot_count = slot_count
        self.pinned = pinning.pinned(slot_count)
        self.owned: list[int] = list(self.pinned) if self.pinned is not None else []
        self._rotation = itertools.count()
        self._beats = itertools.count()

    @property
    def owner_ms(self) -> int:
        # Owner leases outlive two missed heartbeats (beat = lease/3) and expire within
        # one task lease of a crash, so a dead consumer's slots are re-owned in time.
        return int(self.leases.lease_ms * 2 / 3)

    async def refresh(self) -> None:
        layout = await self.session.refresh_layout()
        if layout.slots != self.slot_count:
            self.slot_count = layout.slots
            self.pinned = self.pinning.pinned(layout.slots)
        pinned = None if self.pinned is None else [s for s in self.pinned if s < self.slot_count]
        _, owned = await self.session.assign_slots(
            self.consumer, self.slot_count, self.owner_ms, self.owner_ms, pinned
        )
        self.owned = pinned if pinned is not None else owned

    def claim_order(self) -> list[int]:
        """Owned slots, rotated on every call so no slot starves the others."""
        if not self.owned:
            return []
        start = next(self._rotation) % len(self.owned)
        return self.owned[start:] + self.owned[:start]

    def steal_order(self) -> list[int]:
        """Slots an idle automatic consumer may also claim from: every slot it does not
        own, rotated. Ownership only steers scheduling (task leases keep correctness),
        and while a crashed consumer's owner keys run out, or before a new consumer is
        given slots, its share would otherwise sit idle. Pinned consumers never steal:
        their pinning is deliberate."""
        if self.pinned is not None:
            return []
        others = [s for s in range(self.slot_count) if s not in self.owned]
        if not others:
            return []
        start = next(self._rotation) % len(others)
        return others[start:] + others[:start]

    def reap_order(self) -> list[int]:
        if next(self._beats) % FULL_REAP_EVERY == 0:
            layout = self.session.layout
            return list(range(layout.max_slots if layout else self.slot_count))
        return list(self.owned)

    async def leave(self) -> None:
        await self.session.drop_slots(self.consumer, self.slot_count)
