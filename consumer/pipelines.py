"""The commit pipeline: a page's items and its task's acknowledgement, in one atomic,
fenced Lua call (commit.lua, through :meth:`consumer.worker.Worker.commit`)."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from consumer.spider import PageResult, PageSpider


class CommitPipeline:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CommitPipeline:
        return cls(crawler)

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageResult):
            return item
        spider = self.crawler.spider
        assert isinstance(spider, PageSpider)
        await spider.worker.commit(item.claim, item.items, item.outcome, item.validators)
        return item
