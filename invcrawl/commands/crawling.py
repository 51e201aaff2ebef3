"""The handlers of the commands that crawl: ``inventory``, ``produce``, ``consume`` and
``crawl`` (``invcrawl/commands/__init__.py`` dispatches to them).

The modules that load Scrapy (``invcrawl.producer.run``, ``invcrawl.producer.schedule``,
``invcrawl.consumer.run``: ~0.3 s and ~400 modules) are imported by the handlers that
run them, so that loading this module (every command does) costs the readers nothing
(measured with every other import of the CLI loaded first)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from invcrawl import terminal
from invcrawl.adaptive import report_next
from invcrawl.common.inventory import inventory_to_dict
from invcrawl.common.listen import metrics_token
from invcrawl.common.settings.config import Config, ConfigError
from invcrawl.common.settings.parsers import crawl_ids
from invcrawl.common.site import inventory_url, parse_sites_file, plan_sites
from invcrawl.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError, UserError, fail
from invcrawl.frontier.session import Frontier
from invcrawl.frontier.versions import crawl_versions
from invcrawl.live_redis import redis_for
from invcrawl.output.paths import check_crawl_outputs
from invcrawl.process import interrupts
from invcrawl.render import duration, safe
from invcrawl.render_status import render_inventory
from invcrawl.scope import with_frontier
from invcrawl.supervisor import run_crawl

if TYPE_CHECKING:
    from invcrawl.producer.run import Produced


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


def check_identity(config: Config, sites: Sequence[tuple[str, str]]) -> None:
    """Refuse, before any work, a ``--project``/``--version`` that would relabel a crawl
    holding another (its stored and written items would keep saying the old one: the
    label lied), or that names a project@version another crawl already is (two crawls of
    one version make ``PROJECT@VERSION`` ambiguous). Issue 47.3."""
    if config.project is None and config.version is None:
        return

    async def job(frontier: Frontier) -> None:
        crawls = {c.crawl_id: c for c in await crawl_versions(frontier)}
        for _, crawl_id in sites:
            held = crawls.get(crawl_id)
            if held is None or held.failed:
                continue
            for flag, given, stored in (
                ("--project", config.project, held.project),
                ("--version", config.version, held.version),
            ):
                if given is not None and stored and given != stored:
                    raise UsageError(
                        f"crawl {crawl_id} holds {safe(held.project)} {safe(held.version)} (its "
                        f"items say so): {flag} {safe(given)} would relabel it without "
                        f"rewriting them; give another --crawl-id for a crawl of its own, or "
                        f"`invcrawl forget {crawl_id}` first"
                    )
        for _, crawl_id in sites:
            held = crawls.get(crawl_id)
            project = config.project or (held.project if held else None)
            version = config.version or (held.version if held else None)
            if not project or not version:
                continue
            for other in crawls.values():
                same = other.project.casefold() == project.casefold() and other.version == version
                if same and other.crawl_id != crawl_id and not other.failed:
                    raise UsageError(
                        f"{safe(other.project)} {safe(other.version)} is already crawl "
                        f"{other.crawl_id} ({safe(other.site)}): refresh that one "
                        f"(--crawl-id {other.crawl_id}) or give another --version"
                    )

    with_frontier(config, job)


def cmd_inventory(config: Config) -> int:
    from invcrawl.producer.run import Capture, fetch_inventory  # noqa: PLC0415 - Scrapy: see the module's docstring

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
        check_identity(live, _sites(live) if live.crawl_id != config.crawl_id else sites)
        if live.consume:
            if not hasattr(os, "fork"):
                raise UserError(
                    "produce --consume (and so `invcrawl crawl`) needs os.fork(), which this "
                    "platform lacks: run `invcrawl produce` and `invcrawl consume` instead"
                )
            # Imported before the fork: the forked producer starts with Scrapy loaded.
            from invcrawl.consumer.run import run_consumer  # noqa: PLC0415 - Scrapy: see the module's docstring
            from invcrawl.producer.run import produce_and_consume  # noqa: PLC0415 - Scrapy: see the module's docstring

            if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
                sites = _sites(live)
            code, errors = produce_and_consume(live, sites, run_consumer)
            for error in (errors or "").splitlines():
                fail(error)
            return EXIT_FAILED if errors else code
        if live.every is not None:
            from invcrawl.producer.schedule import produce_every  # noqa: PLC0415 - Scrapy: see the module's docstring

            if live.crawl_id != config.crawl_id:  # PROJECT@VERSION named the crawl
                sites = _sites(live)
            produce_every(live, sites, _report_round, report_next)
            return interrupts.exit_code() or EXIT_INTERRUPTED
        from invcrawl.producer.run import produce  # noqa: PLC0415 - Scrapy: see the module's docstring

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
    # (prometheus_client too: 25 ms of start-up every other command need not pay)
    from invcrawl.consumer.metrics import MetricsError  # noqa: PLC0415
    from invcrawl.consumer.run import run_consumer  # noqa: PLC0415 - Scrapy: see the module's docstring

    metrics_token(config)  # a bind beyond loopback without a token: refused before any work
    if config.crawl_ids_file is not None:
        config = dataclasses.replace(config, crawl_ids=config.crawl_ids + _crawl_ids_file(config))
    with redis_for(config, create=True) as live:
        try:
            return run_consumer(live)
        except MetricsError as exc:
            raise UserError(str(exc)) from None


def _crawl_ids_file(config: Config) -> tuple[str, ...]:
    """The crawl ids of ``consume --crawl-ids FILE``: one per line, blank lines ignored."""
    assert config.crawl_ids_file is not None
    path = config.crawl_ids_file
    try:
        return crawl_ids(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read --crawl-ids {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"--crawl-ids {path}: {exc}") from None


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
        check_identity(live, sites)
        return run_crawl(live, sites, embedded=config.redis is None)
