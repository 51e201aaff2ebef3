"""The command handlers, ``cmd_<command>`` for each entry of :data:`common.options.COMMANDS`.
Each returns an exit code; user mistakes raise one of :data:`USER_ERRORS` and are
printed as one line by :func:`run`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import NoPermissionError

from common.config import Config, ConfigError
from common.inventory import InventoryError, inventory_to_dict
from common.secrets import mask_secrets
from common.site import SiteError, inventory_url, parse_sites_file, plan_sites
from frontier.connection import connect
from frontier.scripts import StaleLayout
from frontier.server import RedisServerError, embedded_redis
from frontier.session import CrawlNotFound, CrawlSession, Frontier
from frontier.startup import RedisUnavailable, redis_url, wait_for_redis
from frontier.versions import CrawlRefError, resolve_ref
from invcrawl.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UserError, fail
from invcrawl.outputs import check_crawl_outputs, check_output_file, write_failed
from invcrawl.render import duration

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
        return fail(
            str(exc),
            EXIT_USAGE if isinstance(exc, (ConfigError, SiteError, CrawlRefError)) else EXIT_FAILED,
        )


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

    async def job(frontier: Frontier) -> str:
        return ",".join([await resolve_ref(frontier, ref) for ref in config.crawl_ids])

    return dataclasses.replace(config, crawl_id=with_frontier(config, job))


def preflight(url: str, wait: float) -> None:
    """Check Redis answers before any work starts, retrying for up to ``wait`` seconds
    (a Redis restarting beside us); fail in one line when it does not or cannot."""

    def say(text: str) -> None:
        print(f"invcrawl: {text}", file=sys.stderr, flush=True)

    try:
        asyncio.run(wait_for_redis(url, wait, say))
    except ValueError as exc:
        raise UserError(mask_secrets(str(exc))) from None
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None


def with_frontier(config: Config, job: Callable[[Frontier], Awaitable[T]]) -> T:
    """Run ``job`` on a fresh event loop with the process's one Redis client."""
    assert config.redis

    async def main() -> T:
        frontier = Frontier(connect(config.redis or "", config.redis_cluster))
        try:
            return await job(frontier)
        finally:
            await frontier.aclose()

    return asyncio.run(main())


async def resolve_crawl(frontier: Frontier, config: Config) -> CrawlSession:
    """The crawl a command acts on: ``--crawl-id``, or the only crawl in Redis."""
    if len(config.crawl_ids) > 1:
        raise UserError("this command acts on one crawl: give one --crawl-id")
    if config.crawl_id:
        session = frontier.crawl(await resolve_ref(frontier, config.crawl_id))
        if not await session.exists():
            raise CrawlNotFound(config.crawl_id)
        return session
    crawls = await frontier.registry.known()
    if len(crawls) == 1:
        return frontier.crawl(crawls[0])
    if not crawls:
        raise UserError("no crawl in this Redis yet (run `invcrawl produce SITE` first)")
    raise UserError(
        f"{len(crawls)} crawls in this Redis ({', '.join(crawls)}): pick one with --crawl-id"
    )


def _site(config: Config) -> str:
    if not config.site:
        raise UserError(
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
            raise UserError(f"cannot read --sites {config.sites_file}: {exc.strerror}") from None
    if len(config.crawl_ids) > 1:
        raise UserError("--crawl-id names one crawl; several sites get one crawl id each")
    for site in sites:  # a missing directory or a bad URL is a usage error, whatever the flags
        inventory_url(site)
    return plan_sites(sites, config.crawl_id)


# -- inventory / produce / consume / crawl ---------------------------------------------------


def cmd_inventory(config: Config) -> int:
    from invcrawl.render import render_inventory  # noqa: PLC0415
    from producer.run import Capture, fetch_inventory  # noqa: PLC0415

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
            from producer.run import produce_and_consume  # noqa: PLC0415

            if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
                sites = _sites(live)
            code, errors = produce_and_consume(live, sites)
            for error in (errors or "").splitlines():
                fail(error)
            return EXIT_FAILED if errors else code
        if live.every is not None:
            from producer.schedule import produce_every  # noqa: PLC0415

            if live.crawl_id != config.crawl_id:
                sites = _sites(live)
            produce_every(live, sites, _report_round)
            return EXIT_INTERRUPTED
        from producer.run import produce  # noqa: PLC0415

        results = produce(live, _sites(live) if live.crawl_id != config.crawl_id else sites)
    _report_produced(results)
    return EXIT_FAILED if any(p.error for p in results) else EXIT_OK


def _report_produced(results: Sequence[Produced]) -> None:
    for produced in results:
        if produced.error:
            fail(produced.error)
        else:
            print(
                f"crawl {produced.crawl_id}: {produced.tasks} page tasks, {produced.added} new",
                file=sys.stderr,
            )


def _report_round(results: Sequence[Produced], next_in: float) -> None:
    _report_produced(results)
    print(f"next refresh in {duration(next_in)}", file=sys.stderr, flush=True)


def cmd_consume(config: Config) -> int:
    from consumer.run import run_consumer  # noqa: PLC0415

    with redis_for(config, create=True) as live:
        return run_consumer(live)


def cmd_crawl(config: Config) -> int:
    from invcrawl.crawl import run_crawl  # noqa: PLC0415

    sites = _sites(config)
    if config.output is not None and len(sites) > 1:
        raise UserError(
            f"-o names one output file, but {len(sites)} sites were given: use --out-dir DIR "
            "(one <crawl-id>.jsonl each)"
        )
    check_crawl_outputs(config)  # before anything is crawled
    with redis_for(config, create=True) as live:
        if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
            sites = _sites(live)
        return run_crawl(live, sites)


# -- status / report / export / dlq / reshard -------------------------------------------------


def cmd_status(config: Config) -> int:
    """One crawl in detail, or all crawls; ``--watch`` refreshes until all are settled."""
    from frontier.status import status_view  # noqa: PLC0415
    from invcrawl.render import render_status_view  # noqa: PLC0415

    async def job(frontier: Frontier) -> int:
        clear = config.watch and sys.stdout.isatty() and not config.json
        while True:
            crawl_id = await resolve_ref(frontier, config.crawl_id) if config.crawl_id else None
            data, settled = await status_view(frontier, crawl_id, config.lease_ms)
            if config.json:
                text = json.dumps(data, indent=None if config.watch else 2)
            else:
                text = render_status_view(data)
            if clear:
                sys.stdout.write("\x1b[H\x1b[2J")
            print(text, flush=True)
            if not config.watch or settled:
                return EXIT_OK
            await asyncio.sleep(1.0)

    with redis_for(config, create=False) as live:
        return with_frontier(live, job)


def cmd_report(config: Config) -> int:
    from frontier.report import coverage  # noqa: PLC0415
    from invcrawl.render import render_report  # noqa: PLC0415

    async def job(frontier: Frontier) -> dict[str, Any]:
        return await coverage(await resolve_crawl(frontier, config))

    with redis_for(config, create=False) as live:
        report = with_frontier(live, job)
    print(json.dumps(report, indent=2) if live.json else render_report(report))
    return EXIT_OK


def cmd_export(config: Config) -> int:
    from frontier.export import HistoryTrimmed, export_items, follow_items  # noqa: PLC0415

    async def job(frontier: Frontier) -> int:
        session = await resolve_crawl(frontier, config)
        try:
            if config.follow:
                return await follow_items(session, config.output, config.group)
            return await export_items(session, config.output, config.base)
        except HistoryTrimmed as exc:
            raise UserError(str(exc)) from None

    check_output_file(config.output)
    if config.base is not None and not config.base.is_file():
        raise ConfigError(f"--base {config.base}: no such file")
    with redis_for(config, create=False) as live:
        try:
            count = with_frontier(live, job)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError | ConnectionError | TimeoutError):
                raise
            if config.output is not None and str(config.output) != "-":
                config.output.with_name(config.output.name + ".part").unlink(missing_ok=True)
            raise write_failed(config.output, exc, "nothing was changed in Redis") from None
    if not live.follow:
        print(f"{count} items written to {live.output or 'stdout'}", file=sys.stderr)
    return EXIT_OK


def cmd_changes(config: Config) -> int:
    """The change feed as JSON Lines; the cursor to resume from goes to stderr."""
    from frontier.changes import read_changes  # noqa: PLC0415
    from frontier.export import open_output  # noqa: PLC0415
    from frontier.retention import entry_before, trimmed_before  # noqa: PLC0415

    async def job(frontier: Frontier) -> tuple[int, str]:
        session = await resolve_crawl(frontier, config)
        trimmed = await trimmed_before(session)
        if trimmed and entry_before(config.since or "0-0", trimmed):
            # --retain-items exported: the entries before it were exported and dropped
            what = f"--since {config.since}" if config.since else "the start of the feed"
            raise UserError(
                f"crawl {session.crawl_id} keeps its items only until they are exported "
                f"(--retain-items exported): events before {trimmed} were trimmed, "
                f"{what} is older; read from --since {trimmed} or from the export files"
            )
        with open_output(config.output) as out:

            def emit(event: dict[str, Any]) -> None:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
                if config.follow:
                    out.flush()

            return await read_changes(session, config.since, emit, follow=config.follow)

    with redis_for(config, create=False) as live:
        count, cursor = with_frontier(live, job)
    print(f"{count} change(s); resume with --since {cursor}", file=sys.stderr)
    return EXIT_OK


def cmd_dlq(config: Config) -> int:
    from frontier import admin  # noqa: PLC0415

    if config.dlq_action == "redrive" and not (config.all_tasks or config.task_ids):
        raise UserError("dlq redrive needs TASK_ID... or --all")

    async def job(frontier: Frontier) -> Any:
        session = await resolve_crawl(frontier, config)
        if config.dlq_action == "list":
            return await admin.dead_tasks(session)
        return await admin.redrive(session, None if config.all_tasks else config.task_ids)

    with redis_for(config, create=False) as live:
        result = with_frontier(live, job)
    if config.dlq_action == "redrive":
        print(f"{result} task(s) redriven", file=sys.stderr)
    elif live.json:
        print(json.dumps(result, indent=2))
    else:
        from invcrawl.render import render_dlq  # noqa: PLC0415

        print(render_dlq(result))
    return EXIT_OK


def cmd_reshard(config: Config) -> int:
    from frontier import admin  # noqa: PLC0415

    async def job(frontier: Frontier) -> tuple[int, int]:
        return await admin.reshard(await resolve_crawl(frontier, config), config.slots)

    with redis_for(config, create=False) as live:
        queued, delayed = with_frontier(live, job)
    print(
        f"resharded to {live.slots} slots: moved {queued} queued and {delayed} delayed task(s)",
        file=sys.stderr,
    )
    return EXIT_OK


# -- dashboard ----------------------------------------------------------------------------------


def cmd_dashboard(config: Config) -> int:
    """Serve the read-only web dashboard of the fleet (dashboard/)."""
    from dashboard.server import access_secret, run_dashboard  # noqa: PLC0415

    secret = access_secret(config)  # a bind beyond loopback without a token: refused
    with redis_for(config, create=False) as live:
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
    from invcrawl import versions_cmd  # noqa: PLC0415

    return versions_cmd.versions(config, _reader(config))


def cmd_diff(config: Config) -> int:
    from invcrawl import versions_cmd  # noqa: PLC0415

    return versions_cmd.diff(config, _reader(config))


def cmd_history(config: Config) -> int:
    from invcrawl import versions_cmd  # noqa: PLC0415

    return versions_cmd.history(config, _reader(config))
