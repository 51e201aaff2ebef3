"""The crawls a consumer serves: discovering open crawls (or waiting for pinned ones),
attaching to a crawl (its session, slot policy, delivery limit, host), which crawl the
next claims come from (``consumer/scheduling.CrawlRotation``), and completion: a crawl
whose claim came back empty and of which nothing is held is checked, and once complete
left (and unlisted from the open crawls)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from invcrawl.common.items import CrawlInfo, ItemLayout
from invcrawl.common.plan import base_of
from invcrawl.consumer.dead_pages import record_dead_pages
from invcrawl.consumer.holdings import Holdings
from invcrawl.consumer.leases import Leases
from invcrawl.consumer.pages import Ending
from invcrawl.consumer.scheduling import CrawlRotation
from invcrawl.consumer.slots import SlotPinning, SlotPolicy
from invcrawl.frontier.delivery import COMPLETE, FAILED_INCOMPLETE, NOT_COMPLETE
from invcrawl.frontier.forget import withdraw
from invcrawl.frontier.hosts import origin_of
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.retry import Outages
from invcrawl.frontier.session import CrawlSession, Frontier
from invcrawl.frontier.states import CrawlState
from invcrawl.frontier.values import CrawlNotFound

log = logging.getLogger("invcrawl.consumer")

DISCOVER_EVERY = 1.0  # seconds between looks for new crawls (when not pinned)
# Between two looks, a glance at the crawl (re)opened last (one ZRANGE of one entry):
# a new crawl or a refresh round is served within this, not within DISCOVER_EVERY (an
# unchanged refresh of a 500-page site takes about half a second).
GLANCE_EVERY = 0.05
# Crawls whose pages this consumer settled are marked in the change journal
# (frontier/registry.py) at most this often, all in one command: the crawl supervisor's
# progress reads only the crawls marked.
MARK_CHANGES_EVERY = 0.25
# A heartbeat beats the crawls this consumer holds pages of, the ones a completion check
# found waiting on others' pages (expired leases to reap), and this many others in turn:
# a beat costs the same at 40 and at 10,000 crawls served, and every crawl served is
# still beaten (its slots refreshed, its expired leases reaped) every N/40 beats.
BEAT_OTHERS = 40


@dataclass(frozen=True, slots=True)
class Serving:
    """What a consumer serves, and until when."""

    crawl_ids: tuple[str, ...]  # --crawl-id: the pinned crawls; (): every open crawl
    slots: SlotPinning
    burst: bool  # stop once no crawl is left to serve
    max_tries: int  # deliveries of a crawl whose metadata does not say


@dataclass(slots=True)
class ServedCrawl:
    """A crawl this consumer serves."""

    session: CrawlSession
    info: CrawlInfo
    layout: ItemLayout
    max_tries: int  # a property of the crawl (its producer's), so all consumers agree
    slots: SlotPolicy
    listed_at: float | None  # its score in the registry when seen (None: pinned)
    origin: str | None  # the host its pages are on (None: a local site)
    base: str = ""  # the inventory's folder: pages outside it are never fetched
    dead_recorded: set[str] = field(default_factory=set)  # dead pages given failed items

    @property
    def crawl_id(self) -> str:
        return self.session.crawl_id


class ServedCrawls:
    """The crawls served (every open crawl of the registry, or the pinned ones), and the
    ones this consumer is done with."""

    def __init__(
        self,
        frontier: Frontier,
        consumer_id: str,
        *,
        serving: Serving,
        leases: Leases,
        outages: Outages,
        held: Holdings,
    ) -> None:
        self._frontier = frontier
        self._serving = serving
        self._leases = leases
        self._consumer_id = consumer_id
        self._outages = outages
        self._held = held
        self.pinned = serving.crawl_ids
        self._pinned_ids: frozenset[str] = frozenset(self.pinned)
        self._served: dict[str, ServedCrawl] = {}
        self._rotation = CrawlRotation()
        self._completed: set[str] = set()
        self._emptied: list[str] = []  # crawls to check for completion
        self._next_discovery = 0.0
        self._next_glance = 0.0
        self._newest_opened = 0.0  # the newest score in the registry at the last glance
        self._changes_seq: int | None = None  # pinned: the journal read up to here
        self._changed: set[str] = set()  # crawls changed here, not marked yet
        self._next_mark = 0.0
        self._beat_next = 0  # where the heartbeat's turn over the crawls served stands
        self._beat_soon: set[str] = set()  # crawls waiting on pages held elsewhere

    # -- what is served --------------------------------------------------------------

    def get(self, crawl_id: str) -> ServedCrawl | None:
        return self._served.get(crawl_id)

    def origin(self, crawl_id: str) -> str | None:
        served = self._served.get(crawl_id)
        return served.origin if served is not None else None

    def __iter__(self) -> Iterator[ServedCrawl]:
        return iter(list(self._served.values()))

    def __len__(self) -> int:
        return len(self._served)

    def to_beat(self, held: set[str], others: int = BEAT_OTHERS) -> list[ServedCrawl]:
        """The crawls a heartbeat beats: those of ``held`` (pages this consumer holds:
        their leases are renewed at every beat), then up to ``others`` more: first those
        a completion check found waiting on pages held elsewhere (their expired leases
        are reaped soon), then the next of the rest in turn."""
        beat = [c for c in sorted(held) if c in self._served]
        soon = [c for c in self._beat_soon if c in self._served and c not in held]
        self._beat_soon = set(soon[others:])  # (their turn at the next beat)
        beat += soon[:others]
        rest = [c for c in self._served if c not in held and c not in self._beat_soon]
        room = others - min(len(soon), others)
        if len(rest) > room:
            start = self._beat_next % max(1, len(rest))
            self._beat_next = start + room
            rest = (rest[start:] + rest[:start])[:room]
        chosen = dict.fromkeys([*beat, *rest])  # (in order, once each)
        return [self._served[c] for c in chosen]

    # -- which crawl next --------------------------------------------------------------

    def turns(self, free: int) -> list[tuple[ServedCrawl, int]]:
        """How many tasks to ask of which crawl, in the order to ask them."""
        return [(self._served[crawl_id], n) for crawl_id, n in self._rotation.turns(free)]

    def claimed(self, crawl_id: str, asked: int, got: int) -> None:
        """A claim's result: a crawl that gave nothing is idle for a while, and checked
        for completion."""
        self._rotation.claimed(crawl_id, asked, got)
        if not got:
            self._emptied.append(crawl_id)

    def host_busy(self, crawl_id: str, turn: int) -> None:
        """Its host cannot take a request soon: idle for a while, not asked."""
        self._rotation.claimed(crawl_id, turn, 0)

    def wake(self, crawl_id: str) -> None:
        """Tasks may have arrived (a retry came due, pages were reaped): ask it now."""
        self._rotation.wake(crawl_id)
        self._changed.add(crawl_id)

    def changed(self, crawl_id: str) -> None:
        """A page of the crawl was settled here: mark it in the change journal soon."""
        self._changed.add(crawl_id)

    async def mark_changes(self, now: bool = False) -> None:
        """Mark the crawls changed here since the last mark, one command for them all, at
        most every :data:`MARK_CHANGES_EVERY` (``now``: at once, the consumer stops)."""
        clock = time.monotonic()
        if not self._changed or (clock < self._next_mark and not now):
            return
        changed, self._changed = self._changed, set()
        self._next_mark = clock + MARK_CHANGES_EVERY
        registry = self._frontier.registry
        await self._outages.call(lambda: registry.mark_changed(changed))

    def emptied(self, crawl_id: str) -> None:
        """Its last page in hand was settled: check the crawl for completion now, not
        after its idle backoff (up to a second at the end of every crawl, measured)."""
        self._emptied.append(crawl_id)

    def idle_for(self) -> float:
        """Seconds until a crawl is worth asking again, or the registry looking at."""
        at = self._next_discovery
        if not self.pinned:
            at = min(at, self._next_glance)
        look = max(0.0, at - time.monotonic())
        return min(self._rotation.next_ready_in(), look)

    # -- discovery -----------------------------------------------------------------------

    async def discover(self, upstream: bool) -> list[ServedCrawl]:
        """Attach to the crawls to serve that are not served yet: every open crawl in the
        registry (a look per DISCOVER_EVERY), or the pinned ones (a look per 0.1 s).
        ``upstream``: a producer of this process runs (a finished crawl may reopen).
        Returns the crawls attached."""
        now = time.monotonic()
        if now < self._next_discovery and not await self._newly_opened(now):
            return []
        self._next_discovery = now + (0.1 if self.pinned else DISCOVER_EVERY)
        if self.pinned:
            wanted: Mapping[str, float | None] = {
                c: None for c in await self._pinned_changed() if c not in self._completed
            }
        else:
            wanted = await self._outages.call(self._frontier.registry.active) or {}
        attached = []
        for crawl_id, listed_at in wanted.items():
            if crawl_id not in self._served:
                served = await self._attach(crawl_id, listed_at, upstream)
                if served is not None:
                    attached.append(served)
        return attached

    async def _pinned_changed(self) -> list[str]:
        """The pinned crawls to look at: all of them the first time, then only those
        marked in the change journal since (a crawl being produced is marked when it is
        opened, produced or fails), so that a consumer pinned to 10,000 crawls waiting
        for their producer reads one key every 0.1 s, not 10,000."""
        registry = self._frontier.registry
        if self._changes_seq is None:
            seq = await self._outages.call(registry.changes_seq)
            if seq is None:
                return []
            self._changes_seq = seq
            return [c for c in self.pinned if c not in self._served]
        since = self._changes_seq
        changed = await self._outages.call(lambda: registry.changed_since(since))
        if changed is None:
            return []
        ids, self._changes_seq = changed
        return [c for c in ids if c in self._pinned_ids and c not in self._served]

    async def _newly_opened(self, now: float) -> bool:
        """Whether a crawl not served here was (re)opened since the last glance."""
        if self.pinned or now < self._next_glance:
            return False
        self._next_glance = now + GLANCE_EVERY
        newest = await self._outages.call(self._frontier.registry.newest)
        if newest is None or newest[1] <= self._newest_opened:
            return False
        self._newest_opened = newest[1]
        return newest[0] not in self._served

    async def _attach(
        self, crawl_id: str, listed_at: float | None, upstream: bool
    ) -> ServedCrawl | None:
        """Start serving a crawl (or, finished, retire it from the registry)."""
        session = self._frontier.crawl(crawl_id)
        meta = await self._outages.call(session.meta) or CrawlMeta()
        state = meta.state
        if state is not None and not state.open and not upstream:
            if listed_at is not None:
                await self._retire(crawl_id, listed_at)
            if self.pinned:  # finished, or failed to produce: nothing to do for it
                self._completed.add(crawl_id)
            return None
        if not meta.opened:
            if self.pinned:  # usually being produced right now: look again soon
                log.debug("waiting for crawl %s to be created by a producer", crawl_id)
            return None
        layout = await self._outages.call(session.refresh_layout)
        assert layout is not None
        inventory_url = meta.inventory_url or ""
        served = ServedCrawl(
            session=session,
            info=CrawlInfo(crawl_id, meta.project or None, meta.version or None),
            layout=ItemLayout(meta.buckets, meta.term_logs),
            max_tries=meta.max_tries or self._serving.max_tries,
            slots=SlotPolicy(
                session, self._consumer_id, self._serving.slots, self._leases, layout.slots
            ),
            listed_at=listed_at,
            origin=origin_of(inventory_url),
            base=base_of(inventory_url) if inventory_url else "",
        )
        self._served[crawl_id] = served
        self._rotation.add(crawl_id, meta.weight)
        origin = served.origin
        if origin:  # listed for status at once (the heartbeat keeps it listed)
            now = await self._outages.call(self._frontier.registry.server_ms) or 0
            await self._outages.call(lambda: self._frontier.hosts.register([origin], now))
        log.info(
            "consumer %s serving crawl %s (%d slots)", self._consumer_id, crawl_id, layout.slots
        )
        return served

    async def _retire(self, crawl_id: str, listed_at: float) -> None:
        await self._outages.call(lambda: self._frontier.registry.retire(crawl_id, listed_at))

    # -- completion ----------------------------------------------------------------------

    def all_done(self) -> bool:
        """Nothing left to serve: the pinned crawls complete, or (``burst``) no open
        crawl at the last look."""
        if self.pinned:
            # (counted, not walked: asked at every claim turn, of up to 10,000 crawls)
            return (
                len(self._completed) >= len(self._pinned_ids)
                and self._pinned_ids <= self._completed
            )
        return self._serving.burst and not self._served and time.monotonic() < self._next_discovery

    async def retire_complete(self) -> None:
        """Crawls to check and of which nothing is held: complete? Then stop serving them
        (and unlist them from the open crawls)."""
        held = self._held.crawl_ids()
        emptied, self._emptied = set(self._emptied), []
        for crawl_id in emptied:
            served = self._served.get(crawl_id)
            if served is None or crawl_id in held:
                continue

            async def record(s: ServedCrawl = served) -> int:
                return await record_dead_pages(s.session, s.info, s.layout, s.dead_recorded)

            async def completion(finish: bool, s: ServedCrawl = served) -> int:
                return await s.session.completion(finish)

            # Asked first without finishing it (one round trip: most checks find pages
            # left); a complete crawl gets its dead pages' items, then is finished, so
            # that the finished crawl has them: consumer/dead_pages.py
            try:
                code = await self._outages.call(
                    lambda: completion(False), give_up_when_stopping=True
                )
                if code == COMPLETE:
                    await self._outages.call(record, give_up_when_stopping=True)
                    code = await self._outages.call(
                        lambda: completion(True), give_up_when_stopping=True
                    )
            except CrawlNotFound:
                await self.forgotten(crawl_id)
                continue
            if code == COMPLETE:
                await self._detach(served, finished=True)
            elif code == NOT_COMPLETE:  # pages held elsewhere: reap any expired soon
                self._beat_soon.add(crawl_id)
            elif code == FAILED_INCOMPLETE:
                # Its producer failed after enqueueing (a re-run's inventory could not
                # be read, or it stopped before recording the crawl produced): nothing
                # will complete it; leave it, as a finished one.
                await self.leave_failed(crawl_id)

    async def _detach(self, served: ServedCrawl, finished: bool) -> None:
        """Stop serving a crawl; ``finished``: it is complete (retired from the registry)."""
        crawl_id = served.crawl_id
        self._rotation.remove(crawl_id)
        del self._served[crawl_id]
        if finished:
            self._completed.add(crawl_id)
            if served.listed_at is not None:
                await self._retire(crawl_id, served.listed_at)
        with contextlib.suppress(Exception):
            await served.slots.leave()
        log.info("crawl %s complete; consumer %s leaves it", crawl_id, self._consumer_id)

    async def leave_failed(self, crawl_id: str) -> None:
        """A crawl whose producer failed (produce_failed.lua made it `failed`, e.g. a
        refresh round whose inventory is cut short) will not complete: leave it, instead
        of waiting for a completion that cannot come."""
        session = self._frontier.crawl(crawl_id)
        if await self._outages.call(session.state) != CrawlState.FAILED:
            return
        served = self._served.get(crawl_id)
        if served is not None:
            await self._detach(served, finished=True)
        else:
            self._completed.add(crawl_id)

    async def forgotten(self, crawl_id: str) -> None:
        """The crawl was deleted while served (``invcrawl forget --force``): stop serving
        it, drop the pages held of it (their commits would be fenced), and take this
        consumer's own entries back out of its keys (a heartbeat may have written them
        after the deletion)."""
        served = self._served.pop(crawl_id, None)
        if served is None:
            return
        self._rotation.remove(crawl_id)
        self._completed.add(crawl_id)
        for claim in self._held.of_crawl(crawl_id):
            self._held.settled(claim, Ending.FORGOTTEN)
        log.warning(
            "crawl %s was forgotten: consumer %s no longer serves it", crawl_id, self._consumer_id
        )
        with contextlib.suppress(Exception):
            await withdraw(served.session, self._consumer_id)

    async def close(self) -> None:
        """Deregister from every crawl's slots (the process is stopping)."""
        for served in self:
            try:
                await served.slots.leave()
            except Exception as exc:
                log.debug("could not deregister from %s: %s", served.crawl_id, exc)
