"""The Redis sink of the producer: record crawl metadata, enqueue one task per page
(idempotently), and mark the producer done; or record why producing failed."""

from __future__ import annotations

import logging

from common.config import Config
from common.items import bucket_count
from common.plan import Plan
from common.site import local_fetch_url
from common.tasks import Task, TaskEntry
from frontier.session import Frontier
from producer.spider import Fetched

log = logging.getLogger("invcrawl.producer")


def tasks_from_plan(plan: Plan) -> list[Task]:
    tasks = []
    for page in plan.pages:
        entries = tuple(
            TaskEntry(
                t.entry.name,
                t.entry.domain,
                t.entry.role,
                t.entry.priority,
                t.anchor,
                t.entry.dispname,
            )
            for t in page.targets
        )
        tasks.append(
            Task(
                id=page.task_id,
                url=page.page_url,
                entries=entries,
                status=page.status,
                reason=page.reason,
                fetch_url=_fetch_url(page.fetch_url, page.page_url),
            )
        )
    return tasks


def _fetch_url(fetch_url: str, page_url: str) -> str | None:
    url = local_fetch_url(fetch_url)
    return url if url != page_url else None


class RedisSink:
    def __init__(self, frontier: Frontier, crawl_id: str, config: Config, site: str) -> None:
        self.session = frontier.crawl(crawl_id)
        self.config = config
        self.site = site
        self.added = 0
        self.tasks = 0

    async def __call__(self, fetched: Fetched) -> None:
        inv, plan = fetched.inventory, fetched.plan
        tasks = tasks_from_plan(plan)
        fields = {
            "site": self.site,
            "inventory_url": fetched.url,
            "inventory_sha256": fetched.sha256,
            "project": inv.project or "",
            "version": inv.version or "",
            "max_tries": self.config.max_tries,
        }
        layout = await self.session.open(fields, self.config.slots, bucket_count(plan.entries))
        if layout.slots != self.config.slots:
            log.warning(
                "crawl %s keeps its %d slots (use `invcrawl reshard` to change)",
                self.session.crawl_id,
                layout.slots,
            )
        self.added = await self.session.enqueue(tasks)
        self.tasks = len(tasks)
        await self.session.produced(
            {
                "entries": plan.entries,
                "pages": len(tasks),
                "tasks": len(tasks),
                "fetch_pages": plan.fetch_pages,
                "duplicates": len(plan.duplicates),
                "malformed": len(inv.malformed),
            },
            self.added,
        )
        log.info(
            "crawl %s: %d entries on %d pages, %d new tasks",
            self.session.crawl_id,
            plan.entries,
            len(tasks),
            self.added,
        )

    async def failed(self, error: str) -> None:
        """Producing failed: say why where ``status`` and the crawl supervisor read it."""
        await self.session.produce_failed(error, {"site": self.site})
