"""The command handlers, ``cmd_<command>`` for each entry of :data:`common.options.COMMANDS`.
Each returns an exit code; user mistakes raise one of :data:`USER_ERRORS` and are
printed as one line by :func:`run`.

The modules that load Scrapy (``producer.run``, ``producer.schedule``, ``consumer.run``:
~0.3 s and ~400 modules) and aiohttp (``dashboard.server``: ~0.16 s) are imported by the
commands that run them, so that ``status``, ``export`` and the other readers do not pay
for them (measured with every other import of this module loaded first)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import NoPermissionError

from common import interrupts
from common.config import Config, ConfigError
from common.inventory import InventoryError, inventory_to_dict
from common.secrets import mask_secrets
from common.site import SiteError, inventory_url, parse_sites_file, plan_sites
from consumer.metrics import MetricsError
from frontier import admin
from frontier.every_crawl import coverage_all, dead_letters_all, redrive_all
from frontier.export import HistoryTrimmed
from frontier.scripts import StaleLayout
from frontier.session import CrawlNotFound, Frontier
from frontier.startup import RedisUnavailable, redis_url, wait_for_redis
from frontier.status import status_view
from frontier.versions import CrawlRefError, resolve_ref
from invcrawl import terminal, versions_cmd
from invcrawl.adaptive import report_next
from invcrawl.crawl import run_crawl
from invcrawl.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    UserError,
    fail,
)
from invcrawl.exporting import export_all_to, export_to, follow_all_to, follow_to
from invcrawl.operations import forget_crawls, read_changes_of
from invcrawl.outputs import check_crawl_outputs, check_output_file, write_failed
from invcrawl.render import (
    duration,
    render_dlq,
    render_inventory,
    render_reports,
    render_status_view,
)
from invcrawl.scope import crawls_in_scope, resolve_crawl, with_frontier
from localredis.embedded import embedded_redis
from localredis.server import RedisServerError

if TYPE_CHECKING:
    from producer.run import Produced

T = TypeVar("T")

USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ConfigError,
    SiteError,
    InventoryError,
    RedisServerError,
    CrawlNotFound,
    StaleLayout,
    CrawlRefError,
)


def run(command: str, config: Config) -> int:
    handler: Callable[[Config], int] = globals()[f"cmd_{command}"]
    try:
        return handler(config)
    except CrawlNotFound as exc:
        return fail(f"no crawl {exc} in this Redis (see `invcrawl status`)", EXIT_USAGE)
    except NoPermissionError as exc:  # an ACL user without the rights of this command
        return fail(
            f"Redis refused a command to this user: {exc} (deploy/redis/users.acl.in "
            "lists what each invcrawl user may do)"
        )
    except USER_ERRORS as exc:
        usage = isinstance(exc, (ConfigError, SiteError, UsageError, CrawlRefError))
        return fail(str(exc), EXIT_USAGE if usage else EXIT_FAILED)


# -- Redis ---------------------------------------------------------------------------


@contextlib.contextmanager
def redis_for(config: Config, *, create: bool) -> Iterator[Config]:
    """Yield the config with ``redis`` set: the given URL, or the embedded server of
    ``--data-dir`` (started if needed; ``create=False`` refuses to start an empty one)."""
    if config.redis_cluster and not config.redis:
        raise ConfigError(
            "--redis-cluster needs --redis URL of a cluster node (the embedded Redis is one server)"
        )
    if config.redis:
        live = dataclasses.replace(config, redis=redis_url(config))  # TLS options
        preflight(live.redis or "", config.redis_wait)
        yield resolved(live)
        return
    data_dir = config.data_dir
    has_data = (data_dir / "appendonlydir").exists() or (data_dir / "appendonly.aof").exists()
    if not create and not has_data:
        raise UserError(
            f"no --redis given and no embedded Redis data in {data_dir}/: pass "
            "--redis URL, or run `invcrawl crawl SITE` first"
        )
    with embedded_redis(data_dir, config.fsync) as url:
        preflight(url, 0)
        yield resolved(dataclasses.replace(config, redis=url))


def resolved(config: Config) -> Config:
    """``--crawl-id`` with ``PROJECT@VERSION`` parts turned into crawl ids, for the
    commands that hand the config on (crawl, produce, consume); the others resolve it
    where they pick their crawl (``resolve_crawl``, status, diff), all through
    ``frontier.versions.resolve_ref``."""
    if "@" not in (config.crawl_id or ""):
        return config

    async def job(frontier: Frontier) -> tuple[str, ...]:
        return tuple([await resolve_ref(frontier, ref) for ref in config.crawl_ids])

    return dataclasses.replace(config, crawl_ids=with_frontier(config, job))


def preflight(url: str, wait: float) -> None:
    """Check Redis answers before any work starts, retrying for up to ``wait`` seconds
    (a Redis restarting beside us); fail in one line when it does not or cannot."""

    def say(text: str) -> None:
        terminal.say(f"invcrawl: {text}")

    try:
        asyncio.run(wait_for_redis(url, wait, say))
    except ValueError as exc:
        raise UserError(mask_secrets(str(exc))) from None
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None


def _site(config: Config) -> str:
    if not config.site:
        raise UsageError(
            "missing SITE: a docs URL, an objects.inv URL or a local directory "
            "(or set INVCRAWL_SITE)"
        )
    return config.site


def _sites(config: Config) -> list[tuple[str, str]]:
    """(site, crawl id) of every SITE and every line of ``--sites FILE``, validated."""
    sites = list(config.sites)
    if config.sites_file is not None:
        try:
            sites += parse_sites_file(config.sites_file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot read --sites {config.sites_file}: {exc.strerror}") from None
    if len(config.crawl_ids) > 1:
        raise UsageError("--crawl-id names one crawl; several sites get one crawl id each")
    for site in sites:  # a missing directory or a bad URL is a usage error, whatever the flags
        inventory_url(site)
    return plan_sites(sites, config.crawl_id)


# -- inventory / produce / consume / crawl ---------------------------------------------------


def cmd_inventory(config: Config) -> int:
    from producer.run import Capture, fetch_inventory  # noqa: PLC0415 - Scrapy: see the module's docstring

    capture = Capture()
    error = fetch_inventory(config, inventory_url(_site(config)), capture)
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
    print(
        json.dumps(summary, indent=2, ensure_ascii=False)
        if config.json
        else render_inventory(summary)
    )
    return EXIT_OK


def cmd_produce(config: Config) -> int:
    """Read every site's inventory and enqueue its pages, one crawl per site. A site
    that fails is reported in one line and the others go on; the exit code is 1 then.
    With ``--every``, keep running and refresh every crawl on that period."""
    sites = _sites(config)
    if config.every is not None and config.consume:
        raise ConfigError("--every and --consume do not go together (`invcrawl crawl --every`)")
    with redis_for(config, create=True) as live:
        if live.consume:
            if not hasattr(os, "fork"):
                raise UserError(
                    "produce --consume (and so `invcrawl crawl`) needs os.fork(), which this "
                    "platform lacks: run `invcrawl produce` and `invcrawl consume` instead"
                )
            # Imported before the fork: the forked producer starts with Scrapy loaded.
            from consumer.run import run_consumer  # noqa: PLC0415 - Scrapy: see the module's docstring
            from producer.run import produce_and_consume  # noqa: PLC0415 - Scrapy: see the module's docstring

            if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
                sites = _sites(live)
            code, errors = produce_and_consume(live, sites, run_consumer)
            for error in (errors or "").splitlines():
                fail(error)
            return EXIT_FAILED if errors else code
        if live.every is not None:
            from producer.schedule import produce_every  # noqa: PLC0415 - Scrapy: see the module's docstring

            if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
                sites = _sites(live)
            produce_every(live, sites, _report_round, report_next)
            return interrupts.exit_code() or EXIT_INTERRUPTED
        from producer.run import produce  # noqa: PLC0415 - Scrapy: see the module's docstring

        results = produce(live, _sites(live) if live.crawl_id != config.crawl_id else sites)
    _report_produced(results)
    return EXIT_FAILED if any(p.error for p in results) else EXIT_OK


def _report_produced(results: Sequence[Produced]) -> None:
    for produced in results:
        if produced.error:
            fail(produced.error)
        else:
            terminal.say(
                f"crawl {produced.crawl_id}: {produced.tasks} page tasks, {produced.added} new"
            )


def _report_round(results: Sequence[Produced], next_in: float | None) -> None:
    _report_produced(results)
    if next_in is not None:
        terminal.say(f"next refresh in {duration(next_in)}")


def cmd_consume(config: Config) -> int:
    from consumer.run import run_consumer  # noqa: PLC0415 - Scrapy: see the module's docstring

    with redis_for(config, create=True) as live:
        try:
            return run_consumer(live)
        except MetricsError as exc:
            raise UserError(str(exc)) from None


def cmd_crawl(config: Config) -> int:

    sites = _sites(config)
    if config.output is not None and len(sites) > 1:
        raise UsageError(
            f"-o names one output file, but {len(sites)} sites were given: use --out-dir DIR "
            "(one <crawl-id>.jsonl each)"
        )
    if config.json and config.output is not None and str(config.output) == "-":
        raise UsageError("--json prints the summary on standard output: -o - cannot go there")
    check_crawl_outputs(config, [crawl_id for _, crawl_id in sites])  # before any work
    with redis_for(config, create=True) as live:
        if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
            sites = _sites(live)
        return run_crawl(live, sites, embedded=config.redis is None)


# -- status / report / export / dlq / reshard -------------------------------------------------


def cmd_status(config: Config) -> int:
    """One crawl in detail, or all crawls; ``--watch`` refreshes until all are settled."""

    async def job(frontier: Frontier) -> int:
        clear = config.watch and sys.stdout.isatty() and not config.json
        while True:
            crawl_id = await resolve_ref(frontier, config.crawl_id) if config.crawl_id else None
            data, settled = await status_view(frontier, crawl_id, config.lease_ms)
            if config.json:
                text = json.dumps(data.as_dict(), indent=None if config.watch else 2)
            else:
                text = render_status_view(data, terminal.width())
            if clear:
                sys.stdout.write("\x1b[H\x1b[2J")
            print(text, flush=True)
            if not config.watch or settled:
                return EXIT_OK
            await asyncio.sleep(1.0)

    with redis_for(config, create=False) as live, interrupts.interruptible():
        return with_frontier(live, job)


def cmd_report(config: Config) -> int:
    """Coverage of ``--crawl-id`` (one report), or of every crawl (a list of them)."""

    async def job(frontier: Frontier) -> list[dict[str, Any]]:
        return await coverage_all(frontier, await crawls_in_scope(frontier, config))

    with redis_for(config, create=False) as live:
        reports = with_frontier(live, job)
    if live.json:
        print(json.dumps(reports[0] if config.crawl_id else reports, indent=2))
    else:
        print(render_reports(reports))
    return EXIT_OK


def cmd_export(config: Config) -> int:

    async def job(frontier: Frontier) -> int:
        crawls = await crawls_in_scope(frontier, config)
        try:
            if config.crawl_id is None and config.follow:
                return await follow_all_to(frontier, config.output, config.group)
            if config.crawl_id is None:
                if config.base is not None:
                    raise UsageError("--base is the earlier export of one crawl: give --crawl-id")
                return await export_all_to(frontier, crawls, config.output)
            session = frontier.crawl(crawls[0])
            if config.follow:
                return await follow_to(session, config.output, config.group)
            return await export_to(session, config.output, config.base)
        except HistoryTrimmed as exc:
            raise UserError(str(exc)) from None

    check_output_file(config.output)
    if config.base is not None and not config.base.is_file():
        raise ConfigError(f"--base {config.base}: no such file")
    with redis_for(config, create=False) as live, interrupts.interruptible():
        try:
            count = with_frontier(live, job)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError | ConnectionError | TimeoutError):
                raise
            # (the .part file is gone: removed by the writer on failure)
            raise write_failed(config.output, exc, "nothing was changed in Redis") from None
    if not live.follow:
        terminal.say(f"{count} items written to {live.output or 'stdout'}")
    return EXIT_OK


def cmd_changes(config: Config) -> int:
    """The change feed as JSON Lines (of ``--crawl-id``, or of every crawl with each event
    naming its crawl); the cursor to resume from goes to stderr."""

    if config.crawl_id and config.since and "=" in config.since:
        raise UsageError(
            f"--since {config.since} is the cursor of several crawls: give it without "
            "--crawl-id, or the one entry id of this crawl"
        )
    check_output_file(config.output)
    with redis_for(config, create=False) as live, interrupts.interruptible():
        count, cursor = with_frontier(live, lambda frontier: read_changes_of(frontier, config))
    terminal.say(f"{count} change(s); resume with --since {cursor}")
    return EXIT_OK


def cmd_dlq(config: Config) -> int:
    """Dead letters of ``--crawl-id`` or of every crawl; redrive the given ones (found in
    whichever crawl holds them) or all."""

    if config.dlq_action == "redrive" and not (config.all_tasks or config.task_ids):
        raise UsageError("dlq redrive needs TASK_ID... or --all")

    async def job(frontier: Frontier) -> Any:
        crawls = await crawls_in_scope(frontier, config)
        if config.dlq_action == "list":
            return await dead_letters_all(frontier, crawls)
        return await redrive_all(frontier, crawls, None if config.all_tasks else config.task_ids)

    with redis_for(config, create=False) as live:
        result = with_frontier(live, job)
    if config.dlq_action == "redrive":
        per_crawl = "".join(f"\n  crawl {c}: {n}" for c, n in result.items())
        terminal.say(f"{sum(result.values())} task(s) redriven{per_crawl}")
        return EXIT_OK
    if config.crawl_id:  # one crawl's rows, as before: no crawl column
        result = [{k: v for k, v in row.items() if k != "crawl_id"} for row in result]
    if live.json:
        print(json.dumps(result, indent=2))
    else:
        print(render_dlq(result, terminal.width()))
    return EXIT_OK


def cmd_reshard(config: Config) -> int:

    async def job(frontier: Frontier) -> tuple[int, int]:
        return await admin.reshard(await resolve_crawl(frontier, config), config.slots)

    with redis_for(config, create=False) as live:
        queued, delayed = with_frontier(live, job)
    terminal.say(
        f"resharded to {live.slots} slots: moved {queued} queued and {delayed} delayed task(s)"
    )
    return EXIT_OK


# -- redis ------------------------------------------------------------------------------------


def cmd_redis(config: Config) -> int:
    """Run (or join) the embedded Redis and keep it running until interrupted, for
    redis-cli (docs/redis-keys.md): its port and password are files of the data dir."""
    if config.redis:
        raise ConfigError("invcrawl redis runs the embedded Redis: give no --redis")
    with redis_for(config, create=True), interrupts.interruptible():
        data_dir = config.data_dir
        print(
            f"invcrawl: the embedded Redis of {data_dir}/ runs on 127.0.0.1, port in "
            f"{data_dir}/port, password in {data_dir}/password (docs/redis-keys.md); "
            "Ctrl-C to release it",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(3600)


def cmd_forget(config: Config) -> int:
    """Delete crawls from Redis (keys and registry entries), after asking (``--yes``:
    without asking); refused while a consumer holds a crawl's pages, unless ``--force``."""

    if not config.forget_ids:
        raise UsageError("forget needs the CRAWL_ID of the crawl to delete")
    if not config.yes and not sys.stdin.isatty():
        raise UsageError("forget deletes crawls for good: confirm with --yes")
    with redis_for(config, create=False) as live:
        return with_frontier(live, lambda frontier: forget_crawls(frontier, config))


# -- dashboard ----------------------------------------------------------------------------------


def cmd_dashboard(config: Config) -> int:
    """Serve the read-only web dashboard of the fleet (dashboard/)."""
    from dashboard.server import access_secret, run_dashboard  # noqa: PLC0415 - aiohttp

    secret = access_secret(config)  # a bind beyond loopback without a token: refused
    with redis_for(config, create=False) as live, interrupts.interruptible():
        try:
            return run_dashboard(live, secret)
        except OSError as exc:
            raise UserError(
                f"cannot listen on {live.bind}:{live.port}: {exc.strerror or exc}"
            ) from None


# -- versions / diff / history (invcrawl/versions_cmd.py) -------------------------------------


def _reader(config: Config) -> Callable[[Callable[[Frontier], Awaitable[Any]]], Any]:
    """Run one read job on the frontier of the configured Redis."""

    def read(job: Callable[[Frontier], Awaitable[Any]]) -> Any:
        with redis_for(config, create=False) as live:
            return with_frontier(live, job)

    return read


def cmd_versions(config: Config) -> int:

    return versions_cmd.versions(config, _reader(config))


def cmd_diff(config: Config) -> int:

    return versions_cmd.diff(config, _reader(config))


def cmd_history(config: Config) -> int:

    return versions_cmd.history(config, _reader(config))
