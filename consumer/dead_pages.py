"""Items for the entries of dead-lettered pages: each gets an item with status ``failed``
and the dead letter's reason, so that a finished crawl's output still has one item per
inventory entry (docs/items.md).

A consumer writes them for every dead page of a crawl once the crawl is complete, just
before the call that marks it finished (``consumer/crawls.ServedCrawls.retire_complete``):
whoever marks a crawl finished has written them first, whichever consumer dead-lettered
the page, and whether a page died in ``fail.lua`` (a failed delivery) or in ``reap.lua``
(lease expiry on its last try), or its consumer was killed in between.
``dead_items.lua`` is idempotent and skips a page redriven meanwhile.
"""

from __future__ import annotations

import json
import logging

from invcrawl.common.items import CrawlInfo, ItemLayout, ItemStatus, prepare, status_items
from invcrawl.common.tasks import TaskFormatError, decode_task
from invcrawl.frontier.admin import dead_letters
from invcrawl.frontier.session import CrawlSession

log = logging.getLogger("invcrawl.consumer")


async def record_dead_pages(
    session: CrawlSession, info: CrawlInfo, layout: ItemLayout, done: set[str]
) -> int:
    """``failed`` items for the dead pages of the crawl not in ``done`` (the ids this
    consumer already wrote); returns how many pages it wrote."""
    dead = await dead_letters(session, skip=done)
    if not dead:
        return 0
    written = 0
    for task_id, payload, why in dead:
        if payload is None:  # redriven and committed meanwhile
            continue
        try:
            task = decode_task(payload)
        except TaskFormatError as exc:
            log.error("dead task %s has an unreadable payload: %s", task_id, exc)
            done.add(task_id)
            continue
        reason = _reason(why)
        items = status_items(info, task, ItemStatus.FAILED, reason)
        prepared = [prepare(item, layout) for item in items]
        if await session.dead_items(task_id, prepared):
            written += 1
        done.add(task_id)
    return written


def _reason(why: str | None) -> str:
    try:
        doc = json.loads(why or "{}")
    except ValueError:
        return "dead-lettered"
    reason = doc.get("reason") or "dead-lettered"
    return f"{reason} (dead-lettered after {doc.get('tries', '?')} deliveries)"
