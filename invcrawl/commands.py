"""The command handlers. Each returns an exit code; user mistakes raise one of
:data:`USER_ERRORS` and are printed as one line by :func:`run_command`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from common.admin import AdminStore
from common.config import Config, ConfigError
from common.inventory import InventoryError, inventory_to_dict
from common.redis_server import RedisServerError, embedded_redis
from common.redisconn import connect
from common.site import SiteError, crawl_id_for, inventory_url
from common.status import crawl_status, known_crawls
from common.store import CrawlNotFound, StaleSlots, Store
from invcrawl.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail


class UserError(Exception):
    """A one-line, actionable error caused by input or environment, not by a bug."""


USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ConfigError,
    SiteError,
    InventoryError,
    RedisServerError,
    CrawlNotFound,
    StaleSlots,
)


def run_command(command: str, config: Config, args: argparse.Namespace) -> int:
    handler = HANDLERS[command]
    try:
        return handler(config, args)
    except CrawlNotFound as exc:
        return fail(f"no crawl {exc} in this Redis (see `invcrawl status`)", EXIT_USAGE)
    except USER_ERRORS as exc:
        return fail(
            str(exc), EXIT_USAGE if isinstance(exc, (ConfigError, SiteError)) else EXIT_FAILED
        )


# -- Redis ---------------------------------------------------------------------------


@contextlib.contextmanager
def redis_for(config: Config, *, create: bool) -> Iterator[Config]:
    """Yield the config with ``redis`` set: the given URL, or the embedded server of
    ``--data-dir`` (started if needed; ``create=False`` refuses to start an empty one)."""
    if config.redis:
        preflight(config.redis)
        yield config
        return
    data_dir = config.data_dir
    has_data = (data_dir / "appendonlydir").exists() or (data_dir / "appendonly.aof").exists()
    if not create and not has_data:
        raise UserError(
            f"no --redis given and no embedded Redis data in {data_dir}/: pass "
            "--redis URL, or run `invcrawl crawl SITE` first"
        )
    with embedded_redis(data_dir, config.fsync) as url:
        preflight(url)
        yield dataclasses.replace(config, redis=url)


def preflight(url: str) -> None:
    """Fail fast, in one line, when Redis is unreachable or the URL is invalid."""

    async def ping() -> None:
        client = connect(url)
        try:
            await client.ping()
        finally:
            await client.aclose()

    try:
        asyncio.run(ping())
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except (RedisError, OSError) as exc:
        raise UserError(f"cannot connect to Redis at {url}: {exc}") from None


def with_redis(config: Config, job: Callable[[Redis], Any]) -> Any:
    """Run ``job(client)`` on a fresh event loop with the process's one client."""
    assert config.redis

    async def run() -> Any:
        client = connect(config.redis or "")
        try:
            return await job(client)
        finally:
            await client.aclose()

    return asyncio.run(run())


async def resolve_crawl(redis: Redis, config: Config) -> Store:
    if config.crawl_id:
        store = Store(redis, config.crawl_id)
        if not await store.exists():
            raise CrawlNotFound(config.crawl_id)
        return store
    crawls = await known_crawls(redis)
    if len(crawls) == 1:
        return Store(redis, crawls[0])
    if not crawls:
        raise UserError("no crawl in this Redis yet (run `invcrawl produce SITE` first)")
    raise UserError(
        f"{len(crawls)} crawls in this Redis ({', '.join(crawls)}): pick one with --crawl-id"
    )


# -- inventory / produce / consume ---------------------------------------------------------


def cmd_inventory(config: Config, args: argparse.Namespace) -> int:
    from producer.run import Capture, fetch_inventory  # noqa: PLC0415

    url = inventory_url(_site(config))
    capture = Capture()
    error = fetch_inventory(config, url, capture)
    if error or capture.fetched is None:
        return fail(error or "no inventory")
    inv, plan = capture.fetched.inventory, capture.fetched.plan
    summary = inventory_to_dict(inv)
    summary.update(
        url=capture.fetched.url,
        unique_entries=plan.entries,
        pages=len(plan.pages),
        fetch_pages=plan.fetch_pages,
        skipped_entries=plan.skipped_entries,
        offsite_entries=plan.offsite_entries,
        duplicate_keys=len(plan.duplicates),
    )
    if config.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
        return EXIT_OK
    from invcrawl.render import render_inventory  # noqa: PLC0415

    print(render_inventory(summary))
    return EXIT_OK


def cmd_produce(config: Config, args: argparse.Namespace) -> int:
    from producer.enqueue import RedisSink  # noqa: PLC0415
    from producer.run import fetch_inventory  # noqa: PLC0415

    site = _site(config)
    url = inventory_url(site)
    crawl_id = config.crawl_id or crawl_id_for(site)
    with redis_for(config, create=True) as live:
        redis = connect(live.redis or "")
        sink = RedisSink(redis, crawl_id, live, site)
        if live.consume:
            return _produce_and_consume(dataclasses.replace(live, crawl_id=crawl_id), url, sink)
        error = fetch_inventory(live, url, sink)
    if error:
        return fail(error)
    print(f"crawl {crawl_id}: {sink.tasks} page tasks, {sink.added} new", file=sys.stderr)
    return EXIT_OK


def _produce_and_consume(config: Config, url: str, sink: Any) -> int:
    """``produce --consume``: the producer spider in a forked child (see
    :class:`producer.run.ForkedProducer`), the consumer here. The consumer waits for the
    crawl to exist; if producing fails it stops."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from consumer.run import run_consumer  # noqa: PLC0415
    from producer.run import ForkedProducer  # noqa: PLC0415

    errors: list[str] = []
    if not hasattr(os, "fork"):
        raise UserError(
            "produce --consume (and so `invcrawl crawl`) needs os.fork(), which this "
            "platform lacks: run `invcrawl produce` and `invcrawl consume` instead"
        )
    producer = ForkedProducer(config, url, sink)
    watcher: threading.Thread | None = None

    def beside(process: Any, worker: Any) -> None:
        from twisted.internet import reactor  # noqa: PLC0415 - the one the process installed

        nonlocal watcher
        worker.awaiting_producer = True

        def watch() -> None:
            error = producer.wait()
            if error:
                errors.append(error)
            reactor.callFromThread(worker.producer_finished, error)

        watcher = threading.Thread(target=watch, name="producer-watch", daemon=True)
        watcher.start()

    try:
        code = run_consumer(dataclasses.replace(config, burst=True), sink.store.redis, beside)
    finally:
        # The consumer stopped (SIGTERM) before the crawl was produced: stop the producer
        # too, within a few seconds, and let its outcome decide the exit code.
        producer.stop()
        if watcher is not None:
            watcher.join(5)
            if watcher.is_alive():
                producer.stop(signal.SIGKILL)
                watcher.join(5)
    if errors:
        return fail(errors[0])
    return code


def cmd_consume(config: Config, args: argparse.Namespace) -> int:
    from consumer.run import run_consumer  # noqa: PLC0415

    with redis_for(config, create=True) as live:
        return run_consumer(live)


def _site(config: Config) -> str:
    if not config.site:
        raise UserError(
            "missing SITE: a docs URL, an objects.inv URL or a local directory "
            "(or set INVCRAWL_SITE)"
        )
    return config.site


# -- crawl ----------------------------------------------------------------------------------


def cmd_crawl(config: Config, args: argparse.Namespace) -> int:
    from invcrawl.crawl import run_crawl  # noqa: PLC0415

    site = _site(config)
    inventory_url(site)  # validate SITE before starting anything
    crawl_id = config.crawl_id or crawl_id_for(site)
    config = dataclasses.replace(config, crawl_id=crawl_id)
    with redis_for(config, create=True) as live:
        return run_crawl(live, site)


# -- status / report / export / dlq / reshard -------------------------------------------------


def cmd_status(config: Config, args: argparse.Namespace) -> int:
    from invcrawl.render import watch_status  # noqa: PLC0415

    with redis_for(config, create=False) as live:
        return int(with_redis(live, lambda r: watch_status(r, live)))


def cmd_report(config: Config, args: argparse.Namespace) -> int:
    from common.report import coverage  # noqa: PLC0415
    from invcrawl.render import render_report  # noqa: PLC0415

    async def job(redis: Redis) -> dict[str, Any]:
        store = await resolve_crawl(redis, config)
        return await coverage(store)

    with redis_for(config, create=False) as live:
        report = with_redis(live, job)
    print(json.dumps(report, indent=2) if live.json else render_report(report))
    return EXIT_OK


def cmd_export(config: Config, args: argparse.Namespace) -> int:
    from common.export import export_items, follow_items  # noqa: PLC0415

    async def job(redis: Redis) -> int:
        store = await resolve_crawl(redis, config)
        if config.follow:
            return await follow_items(store, config.output, config.group)
        return await export_items(store, config.output)

    with redis_for(config, create=False) as live:
        count = with_redis(live, job)
    if not live.follow:
        print(f"{count} items written to {live.output or 'stdout'}", file=sys.stderr)
    return EXIT_OK


def cmd_dlq(config: Config, args: argparse.Namespace) -> int:
    async def job(redis: Redis) -> Any:
        store = AdminStore(redis, (await resolve_crawl(redis, config)).crawl_id)
        if args.action == "list":
            return await store.dead_tasks()
        if not args.all_tasks and not args.task_ids:
            raise UserError("dlq redrive needs TASK_ID... or --all")
        return await store.redrive(None if args.all_tasks else args.task_ids)

    with redis_for(config, create=False) as live:
        result = with_redis(live, job)
    if args.action == "redrive":
        print(f"{result} task(s) redriven", file=sys.stderr)
        return EXIT_OK
    if live.json:
        print(json.dumps(result, indent=2))
    else:
        from invcrawl.render import render_dlq  # noqa: PLC0415

        print(render_dlq(result))
    return EXIT_OK


def cmd_reshard(config: Config, args: argparse.Namespace) -> int:
    async def job(redis: Redis) -> tuple[int, int]:
        store = AdminStore(redis, (await resolve_crawl(redis, config)).crawl_id)
        return await store.reshard(config.slots)

    with redis_for(config, create=False) as live:
        queued, delayed = with_redis(live, job)
    print(
        f"resharded to {live.slots} slots: moved {queued} queued and {delayed} delayed task(s)",
        file=sys.stderr,
    )
    return EXIT_OK


HANDLERS: dict[str, Callable[[Config, argparse.Namespace], int]] = {
    "inventory": cmd_inventory,
    "produce": cmd_produce,
    "consume": cmd_consume,
    "crawl": cmd_crawl,
    "status": cmd_status,
    "report": cmd_report,
    "export": cmd_export,
    "dlq": cmd_dlq,
    "reshard": cmd_reshard,
}


async def status_json(redis: Redis, config: Config) -> dict[str, Any]:
    store = await resolve_crawl(redis, config)
    return await crawl_status(store, config.lease_ms)
