"""The search's appended logs (the vector log ``svec``, the link log ``slnk``) as a
process keeps them: per Redis client, each crawl's state read from the offset it read
to, with one pipelined ``GETRANGE`` for every crawl of a search (it replies nothing when
no crawl changed; a one-shot command reads the logs whole). A crawl forgotten and made
again (another ``created_at``) starts from nothing."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.stream import RAW
from invcrawl.frontier.versions import CrawlVersion


class Tail(Protocol):
    """A crawl's state of one log: how far it has read, and what folds more in."""

    @property
    def offset(self) -> int: ...

    def merge(self, data: bytes) -> None: ...


T = TypeVar("T", bound=Tail)


class LogTails(Generic[T]):
    """One log of every crawl (``log_of`` its key), each crawl's state made by ``new``."""

    def __init__(self, log_of: Callable[[CrawlKeys], str], new: Callable[[], T]) -> None:
        self._log_of = log_of
        self._new = new
        self._cache: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, T]]]
        self._cache = weakref.WeakKeyDictionary()

    async def read(self, frontier: Frontier, crawls: Sequence[CrawlVersion]) -> dict[str, T]:
        """Each crawl's state, by crawl id, read to the end of its log."""
        known = self._cache.setdefault(frontier.commands, {})
        for crawl in crawls:
            have = known.get(crawl.crawl_id)
            if have is None or have[0] != crawl.created_at:  # forgotten, made again
                known[crawl.crawl_id] = (crawl.created_at, self._new())
        pipe = frontier.pipeline(transaction=False)
        for crawl in crawls:
            log = self._log_of(CrawlKeys(crawl.crawl_id))
            pipe.execute_command("GETRANGE", log, known[crawl.crawl_id][1].offset, -1, **RAW)
        replies = await pipe.execute()
        for crawl, reply in zip(crawls, replies, strict=True):
            known[crawl.crawl_id][1].merge(bytes(reply or b""))
        return {crawl.crawl_id: known[crawl.crawl_id][1] for crawl in crawls}

    def forget(self, frontier: Frontier) -> None:
        """Drop this client's states (tests)."""
        self._cache.pop(frontier.commands, None)
