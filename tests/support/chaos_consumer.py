"""``invcrawl consume`` with a fault built in, for the fault harness (support/faults.py).

    python tests/support/chaos_consumer.py MODE consume --redis URL ...

MODE:

* ``none``: the real consumer, unchanged.
* ``poison:<url suffix>``: the process SIGKILLs itself whenever it extracts a page whose
  URL ends with the suffix, as a crash in a native parser would: a poison page.
* ``ack-first`` (broken control): each task is acknowledged as soon as it is claimed
  and its items are written afterwards, outside the fenced commit. A consumer killed
  between the two loses the page.
* ``split`` (broken control): a page's items are appended to the stream in one call
  (a plain at-least-once append, with no dedup state in the same atomic step) and the
  task acknowledged in a second one. A consumer killed or paused between the two gets
  the page redelivered and its items appended again.

The harness's random kills land in a control's broken window only by chance (a CI run of
``split`` once made 10 kills and 14 redeliveries without hitting it), so in both controls
the first process of a run to enter the window also SIGKILLs itself inside it: every
control run crashes there at least once, and must be caught.

The controls exist to prove the harness can see loss and duplication; invcrawl itself
never runs them.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from invcrawl.common.items import PageOutcome, PreparedItem
from invcrawl.consumer import worker
from invcrawl.frontier.connection import connect
from invcrawl.frontier.session import CrawlSession
from invcrawl.frontier.values import Claim, CommitResult


def install_poison(suffix: str) -> None:
    from invcrawl.consumer import spider

    real = spider.extract_page

    def extract(
        body: bytes, url: str, targets: Sequence[Any], **options: Any
    ) -> list[dict[str, Any]]:
        if url.endswith(suffix):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(body, url, targets, **options)  # (encoding, lazy: as the spider asks)

    spider.extract_page = extract  # type: ignore[assignment]


@functools.cache
def raw_client() -> Redis:
    """The broken controls write past the frontier, with a Redis client of their own
    (made on first use, in the consumer's event loop, from its ``--redis`` URL)."""
    return connect(sys.argv[sys.argv.index("--redis") + 1])


async def append_items(
    store: CrawlSession, claim: Claim, items: Sequence[PreparedItem], dedup: bool
) -> None:
    raw = raw_client()
    pipe = raw.pipeline(transaction=False)
    for item in items:
        if dedup and await raw.hget(store.keys.isum(item.bucket), item.field) == item.value:
            continue
        pipe.hset(store.keys.isum(item.bucket), item.field, item.value)
        pipe.xadd(
            store.keys.items,
            {
                "key": item.key,
                "sum": item.value[:12],
                "kind": "new",
                "task": claim.task.id,
                "data": item.data,
            },
        )
    await pipe.execute()


CRASH_MARK = "control-crashed"  # in the working directory: one in-window crash per run


def crash_once_per_run() -> None:
    """SIGKILL this process unless another process of the run already did (the mark is
    created exclusively, so exactly one process of the run crashes here). The mark holds
    the pid: the harness reads it after the run, since a crash near the end may come
    after the crawl already looks finished."""
    try:
        fd = os.open(CRASH_MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def install_ack_first() -> None:
    real_claim, real_commit = CrawlSession.claim, CrawlSession.commit

    async def claim(self: CrawlSession, *args: Any, **kwargs: Any) -> list[Claim]:
        claims = await real_claim(self, *args, **kwargs)
        for c in claims:
            await real_commit(self, c, [], PageOutcome.FETCHED)  # BROKEN: ack before the work
        if claims:
            crash_once_per_run()
        return claims

    async def commit(
        self: CrawlSession,
        claim: Claim,
        items: Sequence[PreparedItem],
        outcome: PageOutcome,
        validators: str = "",
    ) -> CommitResult:
        await append_items(self, claim, items, dedup=True)
        return CommitResult(committed=True, new=len(items))

    async def claim_many(*args: Any, **kwargs: Any) -> list[list[Claim]]:
        # the Worker's claims of a turn, several crawls in one round trip
        got = await real_claim_many(*args, **kwargs)
        for (session, _, _), claims in zip(args[0], got, strict=True):
            for c in claims:
                await real_commit(session, c, [], PageOutcome.FETCHED)  # BROKEN: the same
        if any(got):
            crash_once_per_run()
        return got

    real_claim_many = worker.claim_many
    CrawlSession.claim = claim  # type: ignore[method-assign]
    CrawlSession.commit = commit  # type: ignore[method-assign]
    worker.claim_many = claim_many  # type: ignore[assignment]


def install_split() -> None:
    real_commit = CrawlSession.commit

    async def commit(
        self: CrawlSession,
        claim: Claim,
        items: Sequence[PreparedItem],
        outcome: PageOutcome,
        validators: str = "",
    ) -> CommitResult:
        await append_items(self, claim, items, dedup=False)  # BROKEN: items first...
        if items:
            crash_once_per_run()
        await asyncio.sleep(0.1)
        return await real_commit(self, claim, [], outcome, validators)  # ...the ack apart

    CrawlSession.commit = commit  # type: ignore[method-assign]


def main() -> int:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode.startswith("poison:"):
        install_poison(mode.split(":", 1)[1])
    elif mode == "ack-first":
        install_ack_first()
    elif mode == "split":
        install_split()
    elif mode != "none":
        raise SystemExit(f"unknown mode {mode!r}")
    from invcrawl.cli import main as cli

    return cli(args)


if __name__ == "__main__":
    sys.exit(main())
