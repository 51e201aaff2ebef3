"""A crawl's tasks delivered to its consumers: claimed under a lease (``claim.lua``, which
records the lease in the same step), committed with their items (``commit.lua``), failed
into a retry or the dead letters (``fail.lua``), released, renewed, reaped when their lease
runs out (``reap.lua``), the crawl's completion (``complete.lua``) and the consumers'
ownership of its slots (``assign.lua``). Contract: docs/delivery.md."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from invcrawl.common.items import PageOutcome, PreparedItem
from invcrawl.common.search import link_log, semantic, vector_log
from invcrawl.common.search.postings import posting
from invcrawl.common.tasks import decode_task
from invcrawl.frontier.crawl_handle import CrawlHandle
from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.scripts import KeyIndex, ScriptCall
from invcrawl.frontier.values import Claim, CommitResult, FailResult, Layout
from invcrawl.process.secrets import mask_secrets

# complete.lua's answers (TaskDelivery.completion)
COMPLETE, NOT_COMPLETE, FAILED_INCOMPLETE = 1, 0, -1


def search_index_args(k: CrawlKeys, items: Sequence[PreparedItem], index: KeyIndex) -> list[Any]:
    """The four ARGV of the search index of ``items`` (``index_items`` in _prelude.lua),
    adding the hashes it writes to ``index``: each item's ``srec`` KEYS index, the
    page's term logs with their entry counts, their entries grouped by log, and the
    items' vector log records (:func:`vector_records`). A page's ~350 terms travel as
    three values, not two each: redis-py packs every value in Python, and Lua reads each
    (docs/performance.md, "The commit's arguments")."""
    records = [index.add(k.search_record(item.record)) for item in items]
    logs: dict[int, list[bytes]] = {}  # slog -> its entries, in the items' order
    for item in items:
        mine = posting(item.field)
        for bucket, tag in item.terms:
            entries = logs.get(bucket)
            if entries is None:
                entries = logs[bucket] = []
            entries.append(tag + mine)
    directory: list[int] = []
    for bucket, entries in logs.items():
        directory += (index.add(k.search_log(bucket)), len(entries))
    joined = b"".join(entry for entries in logs.values() for entry in entries)
    return [orjson.dumps(records), orjson.dumps(directory), joined, vector_records(items)]


def vector_records(items: Sequence[PreparedItem]) -> bytes:
    """The vector log records of a page's items (``common/search/vector_log.py``), embedded
    in one numpy pass; none without the model (the crawl's log then misses them)."""
    model = semantic.load()
    if model is None or not items:
        return b""
    vectors = model.embed_many([item.words for item in items])
    return vector_log.records(model.np, [item.field for item in items], vectors)


def _links(items: Sequence[PreparedItem]) -> Iterable[str]:
    for item in items:
        yield from item.links


class TaskDelivery(CrawlHandle):
    """A crawl's tasks claimed, committed, failed, released, renewed and reaped; its
    completion and its slots' owners."""

    async def claim(
        self, consumer: str, slots: Sequence[int], max_tasks: int, busy: bool, lease_ms: int
    ) -> list[Claim]:
        if not slots or max_tasks < 1:
            return []
        call = self.claim_call(consumer, slots, max_tasks, busy, lease_ms)
        return self.claims_of(await self._scripts.run(*call))

    def claim_call(
        self, consumer: str, slots: Sequence[int], max_tasks: int, busy: bool, lease_ms: int
    ) -> ScriptCall:
        """The claim.lua call of :meth:`claim` (``frontier/claims.py`` sends several)."""
        k = self.keys
        fixed = k.bind("meta", "stats", "task", "lease", "tries", "reaped")
        per_slot = [key for s in slots for key in (k.queue(s), k.delayed(s), k.inflight(s))]
        args = [consumer, lease_ms, max_tasks, "1" if busy else "0", *slots]
        return "claim", fixed, args, per_slot

    def claims_of(self, reply: list[Any]) -> list[Claim]:
        claims = []
        for i in range(1, len(reply), 6):
            task_id, token, deliveries, payload, slot, suspect = reply[i : i + 6]
            task = decode_task(payload)
            assert task.id == task_id, (task.id, task_id)
            claims.append(
                Claim(self.crawl_id, task, token, int(deliveries), int(slot), suspect == 1)
            )
        return claims

    async def commit(
        self,
        claim: Claim,
        items: Sequence[PreparedItem],
        outcome: PageOutcome,
        validators: str = "",
    ) -> CommitResult:
        k = self.keys
        fixed = k.bind(
            "meta", "stats", "task", "lease", "tries", "reaped", "errors", "items", "pages",
            "svec", "slnk", inflight=k.inflight(claim.slot),
        )  # fmt: skip
        buckets = KeyIndex(len(fixed))
        args: list[Any] = [claim.task.id, claim.token, outcome.value, len(items), validators]
        for item in items:
            bucket = buckets.add(k.isum(item.bucket))
            args += [bucket, item.field, item.value, item.key, item.status, item.data]
        args += search_index_args(k, items, buckets)
        args.append(link_log.page_record(claim.task.id, claim.task.url, _links(items)))
        code, new, updated, unchanged = await self._scripts.run("commit", fixed, args, buckets.keys)
        return CommitResult(code == 1, new, updated, unchanged, expired=code == -1)

    async def dead_items(self, task_id: str, items: Sequence[PreparedItem]) -> bool:
        """Write the ``failed`` items of a dead-lettered page (False: it is not dead any
        more, e.g. redriven meanwhile)."""
        k = self.keys
        fixed = k.bind("stats", "items", "dlq")
        buckets = KeyIndex(len(fixed))
        args: list[Any] = [task_id, len(items)]
        for item in items:
            args += [buckets.add(k.isum(item.bucket)), item.field, item.value, item.key]
            args += [item.status, item.data]
        written, *_ = await self._scripts.run("dead_items", fixed, args, buckets.keys)
        return bool(written)

    async def fail(
        self,
        claim: Claim,
        error: Mapping[str, Any],
        delay_ms: int,
        max_tries: int,
        dead_now: bool = False,
    ) -> FailResult:
        """Retry later or dead-letter (or neither: the lease was not ours)."""

        async def call(layout: Layout) -> FailResult:
            k = self.keys
            fixed = k.bind(
                "meta", "stats", "lease", "tries", "reaped", "errors", "dlq", "dlq_why",
                inflight=k.inflight(claim.slot),
                delayed=k.delayed(self.slot_of(claim.task.id, layout)),
            )  # fmt: skip
            args = [
                claim.task.id,
                claim.token,
                int(delay_ms),
                max_tries,
                mask_secrets(json.dumps(error, ensure_ascii=False)),
                "1" if dead_now else "0",
                layout.slots,
            ]
            _, outcome, _ = await self._scripts.run("fail", fixed, args)
            return FailResult(str(outcome))

        return await self.with_layout(call)

    async def release(self, claim: Claim, delay_ms: int = 0) -> bool:
        """Give a claimed task back without using a delivery: to the head of its queue,
        or (``delay_ms``) into its delayed set. False when the lease was not ours."""

        async def call(layout: Layout) -> bool:
            k = self.keys
            slot = self.slot_of(claim.task.id, layout)
            fixed = k.bind(
                "meta", "stats", "lease", "tries",
                inflight=k.inflight(claim.slot), queue=k.queue(slot), delayed=k.delayed(slot),
            )  # fmt: skip
            code = await self._scripts.run(
                "release", fixed, [claim.task.id, claim.token, layout.slots, delay_ms]
            )
            return bool(code == 1)

        return await self.with_layout(call)

    async def renew(
        self, consumer: str, claims: Iterable[Claim], lease_ms: int, info: Mapping[str, Any]
    ) -> set[str]:
        """Heartbeat: extend leases; returns the ids of tasks this consumer has lost."""
        k = self.keys
        fixed = k.bind("lease", "consumers", "cinfo")
        sets = KeyIndex(len(fixed))
        triples: list[Any] = []
        for claim in claims:
            triples += [claim.task.id, claim.token, sets.add(k.inflight(claim.slot))]
        args = [consumer, lease_ms, json.dumps(info), len(triples) // 3, *triples]
        reply = await self._scripts.run("renew", fixed, args, sets.keys)
        return set(reply[1:])

    async def reap(self, slot: int, max_tries: int) -> tuple[int, int]:
        """Return expired leases of ``slot`` to their queues (or the DLQ)."""
        expired = await self.expired([slot], await self.server_ms())
        return await self.reap_expired(slot, max_tries, expired.get(slot, []))

    async def expired(self, slots: Sequence[int], now_ms: int) -> dict[int, list[str]]:
        """The tasks of each of ``slots`` whose lease ran out before ``now_ms`` (Redis
        time; an earlier time finds fewer, never a live lease), up to 500 a slot: the
        slots with any. One round trip for all the slots (a heartbeat scans every slot
        of every crawl it serves)."""
        pipe = self._redis.pipeline(transaction=False)
        for slot in slots:
            pipe.zrangebyscore(self.keys.inflight(slot), "-inf", f"({now_ms}", start=0, num=500)
        replies = await pipe.execute() if slots else []
        return {slot: ids for slot, ids in zip(slots, replies, strict=True) if ids}

    async def reap_expired(self, slot: int, max_tries: int, expired: list[str]) -> tuple[int, int]:
        """Return the expired leases ``expired`` of ``slot`` (:meth:`expired`) to their
        queues (or the DLQ); reap.lua checks each one again."""
        if not expired:
            return 0, 0

        async def call(layout: Layout) -> tuple[int, int]:
            k = self.keys
            fixed = k.bind(
                "meta", "stats", "lease", "tries", "reaped", "errors", "dlq", "dlq_why",
                inflight=k.inflight(slot),
            )  # fmt: skip
            queues = KeyIndex(len(fixed))
            args: list[Any] = [max_tries, layout.slots, len(expired)]
            for task_id in expired:
                args += [task_id, queues.add(k.queue(self.slot_of(task_id, layout)))]
            requeued, dead = await self._scripts.run("reap", fixed, args, queues.keys)
            return int(requeued), int(dead)

        return await self.with_layout(call)

    async def is_complete(self) -> bool:
        """Whether every task is settled (complete.lua marks the crawl finished)."""
        return await self.completion(finish=True) == COMPLETE

    async def completion(self, finish: bool) -> int:
        """complete.lua: :data:`COMPLETE` (and, with ``finish``, the crawl marked
        finished), :data:`NOT_COMPLETE`, or :data:`FAILED_INCOMPLETE` (not complete, in
        state ``failed``: nothing will complete it). One round trip: the script checks
        the cached slot layout itself (a reshard in between: refreshed, asked again)."""

        async def call(layout: Layout) -> int:
            k = self.keys
            per_slot = [
                key
                for slot in range(layout.max_slots)
                for key in (k.queue(slot), k.delayed(slot), k.inflight(slot))
            ]
            args = [layout.max_slots, "1" if finish else "0"]
            return int(await self._scripts.run("complete", k.bind("meta"), args, per_slot))

        code = await self.with_layout(call)
        if finish and code == COMPLETE:  # finished now (or before): watchers look
            await self.registry.mark_changed([self.crawl_id])
        return code

    async def assign_slots(
        self,
        consumer: str,
        slot_count: int,
        owner_ms: int,
        cutoff_ms: int,
        pinned: Sequence[int] | None,
    ) -> tuple[int, list[int]]:
        """Heartbeat-time slot ownership (assign.lua): returns (live consumers, owned)."""
        k = self.keys
        args = [
            consumer,
            owner_ms,
            cutoff_ms,
            "pinned" if pinned is not None else "auto",
            ",".join(str(s) for s in pinned or []),
        ]
        reply = await self._scripts.run(
            "assign",
            k.bind("consumers", "ring"),
            args,
            [k.owner(s) for s in range(slot_count)],
        )
        return int(reply[0]), [int(s) for s in reply[1:]]

    async def drop_slots(self, consumer: str, slot_count: int) -> None:
        """Give up every slot this consumer owns (clean exit): assign.lua pinned to no
        slot drops exactly our own owner keys, atomically; then leave the member set."""
        await self.assign_slots(consumer, slot_count, 1, 1, pinned=[])
        await self._redis.zrem(self.keys.consumers, consumer)
