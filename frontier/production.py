"""A crawl produced: its meta created or reopened (``open.lua``), its tasks enqueued
idempotently in batches (``enqueue.lua``), and the producer's end recorded, done
(``produced.lua``) or failed (``produce_failed.lua``), where status and the crawl
supervisor read it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from invcrawl.common.search.postings import term_logs_for
from invcrawl.common.tasks import Task, encode_task
from invcrawl.frontier.crawl_handle import LAYOUT_FIELDS, CrawlHandle, layout_of
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.scripts import KeyIndex
from invcrawl.frontier.states import CrawlState
from invcrawl.frontier.values import Layout
from invcrawl.process.secrets import mask_secrets

ENQUEUE_BATCH = 500


class CrawlProduction(CrawlHandle):
    """A crawl's meta opened, its tasks enqueued, the producer's end recorded."""

    async def open(self, fields: Mapping[str, Any], slots: int, buckets: int) -> Layout:
        """Create the crawl's metadata, or reopen it keeping its slot count, buckets and
        term logs."""
        await self.registry.activate(self.crawl_id)
        reply = await self._scripts.run(
            "open",
            self.keys.bind("meta"),
            [slots, buckets, term_logs_for(buckets), *_pairs(fields)],
        )
        self.layout = layout_of(CrawlMeta.decode(dict(zip(LAYOUT_FIELDS, reply, strict=True))))
        await self.registry.mark_changed([self.crawl_id])  # its consumers may attach now
        return self.layout

    async def enqueue(self, tasks: Sequence[Task]) -> int:
        """Enqueue tasks idempotently, in batches; returns how many were new."""
        added = 0
        for start in range(0, len(tasks), ENQUEUE_BATCH):
            batch = tasks[start : start + ENQUEUE_BATCH]

            async def call(layout: Layout, batch: Sequence[Task] = batch) -> int:
                return await self._enqueue(batch, layout)

            added += await self.with_layout(call)
        return added

    async def _enqueue(self, batch: Sequence[Task], layout: Layout) -> int:
        k = self.keys
        fixed = k.bind("meta", "stats", "task", "seen")
        queues = KeyIndex(len(fixed))
        args: list[Any] = [layout.slots, len(batch)]
        for task in batch:
            args += [task.id, encode_task(task), queues.add(k.queue(self.slot_of(task.id, layout)))]
        return int(await self._scripts.run("enqueue", fixed, args, queues.keys))

    async def produced(self, fields: Mapping[str, Any], added: int) -> CrawlState:
        """Every page is enqueued: record the figures, mark the producer done."""
        state = CrawlState(
            await self._scripts.run("produced", self.keys.bind("meta"), [added, *_pairs(fields)])
        )
        if state.open:
            await self.registry.activate(self.crawl_id)  # (marks it changed)
        else:
            await self.registry.mark_changed([self.crawl_id])
        return state

    async def produce_failed(self, error: str, fields: Mapping[str, Any]) -> CrawlState:
        """Record a producer failure where status and the crawl supervisor read it."""
        await self.registry.add(self.crawl_id)
        state = CrawlState(
            await self._scripts.run(
                "produce_failed",
                self.keys.bind("meta"),
                [mask_secrets(error), *_pairs(fields)],
            )
        )
        await self.registry.mark_changed([self.crawl_id])
        return state


def _pairs(fields: Mapping[str, Any]) -> list[str]:
    """Field/value pairs of a meta update as script arguments (JSON for containers)."""
    out: list[str] = []
    for name, value in fields.items():
        if value is None:
            text = ""
        elif isinstance(value, (dict, list)):
            text = json.dumps(value)
        else:
            text = str(value)
        out += [name, text]
    return out
