"""The settle pipeline: Scrapy's item pipeline hands every page's settlement (items to
commit, a failure, a postponement: ``consumer/pages.py``) to the one settle step
(``Worker.settle``; a page's items and its task's acknowledgement are one atomic, fenced
Lua call, commit.lua)."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from invcrawl.consumer.pages import SETTLE, PageFailure, PagePostponed, PageResult, Settle


class SettlePipeline:
    def __init__(self, settle: Settle) -> None:
        self.settle = settle

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SettlePipeline:
        return cls(SETTLE.require(crawler.settings))

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, (PageResult, PageFailure, PagePostponed)):
            await self.settle.settle(item)
        return item
