"""The Redis sink of the producer: record crawl metadata, enqueue one task per page
(idempotently), and mark the producer done; or record why producing failed.

With ``--refresh`` it first starts a refresh round of a finished crawl
(``frontier/refresh.py``): the inventory is fetched conditionally, every page task carries
its validators (unless ``--force``), and keys gone from the inventory get tombstones."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from invcrawl.common.inventory import InventoryError, parse_inventory
from invcrawl.common.items import bucket_count
from invcrawl.common.plan import Plan, plan_crawl
from invcrawl.common.site import local_fetch_url
from invcrawl.common.tasks import Task
from invcrawl.frontier.meta import CrawlMeta
from invcrawl.frontier.production import ENQUEUE_BATCH
from invcrawl.frontier.refresh import Refresh, StoredInventory
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import given_names
from invcrawl.producer.spider import Fetched

log = logging.getLogger("invcrawl.producer")


def tasks_from_plan(plan: Plan) -> list[Task]:
    tasks = []
    for page in plan.pages:
        entries = tuple(page.targets)
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


def first_pages_first(tasks: list[Task], first: int = 32) -> list[list[Task]]:
    """The tasks in batches, the first one small: consumers already serving the crawl (a
    refresh round) start on its pages while the rest are being prepared and enqueued."""
    rest = range(first, len(tasks), ENQUEUE_BATCH)
    return [tasks[:first], *(tasks[i : i + ENQUEUE_BATCH] for i in rest)]


def _fetch_url(fetch_url: str, page_url: str) -> str | None:
    url = local_fetch_url(fetch_url)
    return url if url != page_url else None


@dataclass(frozen=True, slots=True)
class SinkSettings:
    """What a producer run gives the crawls it produces (their names, limits and weight
    as given on the command line: None keeps a crawl's own), and whether it is a refresh
    round (``--refresh``; ``--force``: without validators)."""

    slots: int
    max_tries: int
    max_inflated: int  # bytes: the largest inventory inflated
    project: str | None = None
    version: str | None = None
    weight: int | None = None
    retain_items: str | None = None
    refresh: bool = False
    force: bool = False


class RedisSink:
    def __init__(
        self, frontier: Frontier, crawl_id: str, settings: SinkSettings, site: str
    ) -> None:
        self.session = frontier.crawl(crawl_id)
        self.settings = settings
        self.site = site
        self.refresh = Refresh(self.session)
        self.stored = StoredInventory(None, None, None)
        self.added = 0
        self.tasks = 0
        self.removed = 0
        self.round: int | None = None  # the refresh round this run started or resumed

    async def conditional_headers(self) -> dict[str, str]:
        if not self.settings.refresh:
            return {}
        self.round = (await self.refresh.start_round()).number
        self.stored = await self.refresh.stored_inventory()
        return self.stored.conditional_headers()

    async def stored_inventory(self) -> bytes | None:
        return self.stored.body

    async def __call__(self, fetched: Fetched) -> None:
        inv, plan = fetched.inventory, fetched.plan
        tasks = tasks_from_plan(plan)
        # --project / --version name the crawl, else what an earlier run was given, else
        # the inventory's header (docs/versions.md)
        given_project, given_version = await given_names(self.session)
        project = self.settings.project or given_project or inv.project
        version = self.settings.version or given_version or inv.version
        given = {"project_given": self.settings.project, "version_given": self.settings.version}
        # A later run (a refresh) keeps the crawl's own unless given again.
        kept = {"weight": self.settings.weight, "retain_items": self.settings.retain_items}
        fields = CrawlMeta.fields(
            site=self.site,
            inventory_url=fetched.url,
            inventory_sha256=fetched.sha256,
            project=project or "",
            version=version or "",
            max_tries=self.settings.max_tries,
            **{name: value for name, value in given.items() if value},
            **{name: value for name, value in kept.items() if value is not None},
        )
        layout = await self.session.open(fields, self.settings.slots, bucket_count(plan.entries))
        if layout.slots != self.settings.slots:
            log.warning(
                "crawl %s keeps its %d slots (use `invcrawl reshard` to change)",
                self.session.crawl_id,
                layout.slots,
            )
        self.added = 0
        for batch in first_pages_first(tasks):
            ready = (
                await self.refresh.with_validators(batch)
                if self.settings.refresh and not self.settings.force
                else batch
            )
            self.added += await self.session.enqueue(ready)
        self.tasks = len(tasks)
        if self.settings.refresh and not fetched.not_modified:
            self.removed = await self._tombstone(plan, tasks, layout.buckets, fetched.url)
        if not fetched.not_modified:
            await self.refresh.save_inventory(fetched.body, fetched.etag, fetched.last_modified)
        await self.session.produced(
            CrawlMeta.fields(
                entries=plan.entries,
                pages=len(tasks),
                tasks=len(tasks),
                fetch_pages=plan.fetch_pages,
                duplicates=len(plan.duplicates),
                malformed=len(inv.malformed),
            ),
            self.added,
        )
        log.info(
            "crawl %s: %d entries on %d pages, %d new tasks%s",
            self.session.crawl_id,
            plan.entries,
            len(tasks),
            self.added,
            f", refresh round {self.round}, {self.removed} removed" if self.round else "",
        )

    async def _tombstone(self, plan: Plan, tasks: list[Task], buckets: int, url: str) -> int:
        """Tombstones for the keys (and validators of the pages) that the inventory of the
        last round had and this one has not."""
        last = self.stored.body
        if not last:
            return 0
        try:
            old_plan = plan_crawl(
                parse_inventory(last, max_inflated=self.settings.max_inflated), url
            )
        except InventoryError as exc:  # the stored copy is unreadable: no removals known
            log.warning(
                "crawl %s: the last inventory cannot be read (%s)", self.session.crawl_id, exc
            )
            return 0
        keys = {e.key for t in tasks for e in t.entries}
        ids = {t.id for t in tasks}
        removed_keys = {t.key for p in old_plan.pages for t in p.targets} - keys
        removed_pages = [p.task_id for p in old_plan.pages if p.task_id not in ids]
        return await self.refresh.tombstone(removed_keys, removed_pages, buckets)

    async def failed(self, error: str) -> None:
        """Producing failed: say why where ``status`` and the crawl supervisor read it."""
        await self.session.produce_failed(error, CrawlMeta.fields(site=self.site))
