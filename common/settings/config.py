"""Typed configuration, built once per process: CLI flags > INVCRAWL_* env vars > defaults.

* :class:`Config`: every setting with its type and its default (written only here);
* :func:`load_config`: each value from its flag, else its variable (parsed by the
  option's parser, ``common/settings/parsers.py``), else the :class:`Config` default;
* the commands and options themselves (flags, variables, help) are the tables of
  ``common/settings/options.py``; ``docs/configuration.md`` is generated from them and the
  defaults here (a test keeps the document in sync);
* :func:`settings_json`: typed values handed to a child process (``invcrawl crawl``'s
  consumers) in :data:`SETTINGS_VARIABLE`, which its :func:`load_config` reads back as
  they were, without a trip through text flags.

This module is the only place in invcrawl that reads ``os.environ``.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from invcrawl.common.itemfilter import ItemFilter
from invcrawl.common.settings.datadir import default_data_dir
from invcrawl.common.settings.options import OPTIONS, OPTIONS_BY_NAME
from invcrawl.process.secrets import register_secret, register_url


class ConfigError(ValueError):
    """A user-facing, one-line configuration error."""


# -- the settings ----------------------------------------------------------------------


def _default_consumers() -> int:
    return max(2, os.cpu_count() or 2)


def _default_data_dir() -> Path:
    # one per user (common/settings/datadir.py), read when no flag or variable names one
    return default_data_dir(os.environ, Path.cwd())


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved settings of one process. Build it with :func:`load_config`."""

    site: str | None = None
    sites: tuple[str, ...] = ()
    sites_file: Path | None = None
    redis: str | None = None
    redis_cluster: bool = False
    crawl_ids: tuple[str, ...] = ()  # --crawl-id: one crawl, or several (consume)
    crawl_ids_file: Path | None = None  # consume --crawl-ids FILE: read by its handler
    project_name: str | None = None
    old_crawl: str | None = None
    new_crawl: str | None = None
    symbol: str | None = None
    query: str | None = None  # search QUERY
    show_name: str | None = None  # show NAME
    kind: str | None = None
    limit: int = 10
    reindex: bool = False
    explain: bool = False
    project: str | None = None  # None: the inventory's (or what an earlier run was given)
    version: str | None = None
    markdown: bool = False
    slots: int = 16
    consumer_slots: tuple[int, ...] = ()  # (): automatic ("auto")
    partition: tuple[int, int] | None = None  # (i, n): the slots s with s % n == i
    burst: bool = False
    consume: bool = False
    consumers: int = field(default_factory=_default_consumers)
    concurrency: int = 8
    host_concurrency: int = 4
    host_delay: float = 0.0
    weight: int | None = None  # None: the crawl's own (1 for a new crawl)
    retain_items: str | None = None  # None: the crawl's own ("all" for a new crawl)
    lease: float = 30.0
    task_deadline: float = 300.0
    max_tries: int = 5
    backoff_base: float = 2.0
    backoff_max: float = 300.0
    robots: bool = True
    download_timeout: float = 30.0
    user_agent: str = "invcrawl/0.1 (+https://github.com/invcrawl/invcrawl)"
    data_dir: Path = field(default_factory=_default_data_dir)
    fsync: str = "always"
    output: Path | None = None
    out_dir: Path = field(default_factory=lambda: Path("."))
    follow: bool = False
    group: str = "export"
    base: Path | None = None
    json: bool = False
    watch: bool = False
    page: int = 1  # status, versions: the page shown (PAGE_ROWS a page)
    show_all: bool = False  # status, versions: every row, not a page
    progress: str = "auto"
    log_level: str = "WARNING"
    quiet: bool = False
    verbose: bool = False
    max_inflated_mb: int = 64
    dlq_action: str = "list"
    task_ids: tuple[str, ...] = ()
    all_tasks: bool = False
    forget_ids: tuple[str, ...] = ()
    forget_failed: bool = False  # forget --failed
    yes: bool = False
    bind: str = "127.0.0.1"
    port: int = 8780
    metrics_port: int | None = None
    dashboard_token: str | None = field(default=None, repr=False)  # a secret
    metrics_token: str | None = field(default=None, repr=False)  # a secret
    http: bool = False
    mcp_port: int = 8781
    mcp_token: str | None = field(default=None, repr=False)  # a secret
    mcp_max_chars: int = 40_000  # mcpserver/bounded.DEFAULT_MAX_CHARS
    refresh: bool = False
    force: bool = False
    every: float | str | None = None  # seconds, or "auto" (common/refresh_interval.py)
    refresh_min: float = 3600.0
    refresh_max: float = 7 * 86400.0
    since: str | None = None
    redis_wait: float = 60.0
    redis_ca: Path | None = None
    redis_cert: Path | None = None
    redis_key: Path | None = None
    allow_hosts: tuple[str, ...] = ()
    extract_budget: float = 15.0
    max_crawl_delay: float = 60.0
    max_doc_chars: int = 4_000_000
    max_item_mb: float = 16.0
    domain: tuple[str, ...] = ()  # crawl, export: the items written (common/itemfilter.py)
    role: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    omit_page_text: bool = False

    @property
    def item_filter(self) -> ItemFilter:
        """What ``crawl`` and ``export`` write of each item."""
        return ItemFilter(self.domain, self.role, self.status, self.fields, self.omit_page_text)

    @property
    def lease_ms(self) -> int:
        return int(self.lease * 1000)

    @property
    def scrapy_log_level(self) -> str:
        """What a Scrapy process logs on the terminal: ``--log-level``, down to INFO with
        ``-v``, up to ERROR with ``-q``."""
        order = ("DEBUG", "INFO", "WARNING", "ERROR")
        level = order.index(self.log_level)
        if self.verbose:
            level = min(level, order.index("INFO"))
        if self.quiet:
            level = max(level, order.index("ERROR"))
        return order[level]

    @property
    def crawl_id(self) -> str | None:
        """``--crawl-id`` as given: one crawl's id (or reference), several joined by
        commas; None when not given."""
        return ",".join(self.crawl_ids) or None


def default_of(name: str) -> Any:
    """The default of a :class:`Config` field (the only place defaults are written)."""
    spec = Config.__dataclass_fields__[name]
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def load_config(
    cli: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Resolve every option: a CLI value that is not None wins, then the parent's value
    handed down in :data:`SETTINGS_VARIABLE`, then INVCRAWL_<NAME>, then the
    :class:`Config` default.

    CLI values arrive already typed (argparse applies the same parsers); environment
    values are parsed here, and a bad one raises ConfigError naming the variable.
    """
    cli = cli or {}
    env = os.environ if environ is None else environ
    handed = _handed_down(env.get(SETTINGS_VARIABLE) or "")
    values: dict[str, Any] = {}
    for spec in fields(Config):
        option = OPTIONS_BY_NAME[spec.name]
        if cli.get(option.name) is not None:
            values[option.name] = cli[option.name]
        elif option.name in handed:
            values[option.name] = handed[option.name]
        elif option.env in env and env[option.env] != "":
            try:
                values[option.name] = option.from_env(env[option.env])
            except ValueError as exc:
                raise ConfigError(f"{option.env}: {exc}") from None
    config = Config(**values)
    register_secrets(config, env)
    if config.backoff_max < config.backoff_base:
        raise ConfigError("--backoff-max must be at least --backoff-base")
    if config.refresh_max < config.refresh_min:
        raise ConfigError("--refresh-max must be at least --refresh-min")
    if config.quiet and config.verbose:
        raise ConfigError("-q and -v do not go together")
    return config


# The settings a parent process hands its children (invcrawl/supervisor.py), as JSON: each
# value typed as in Config (a path or a tuple as its JSON string or list). It is not an
# option: a user sets the INVCRAWL_<NAME> variables.
SETTINGS_VARIABLE = "INVCRAWL_SETTINGS"


def settings_json(config: Config, names: Iterable[str]) -> str:
    """The values of ``names`` as :func:`load_config` reads them back from
    :data:`SETTINGS_VARIABLE`."""
    return json.dumps({name: _plain(getattr(config, name)) for name in names})


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def _handed_down(text: str) -> dict[str, Any]:
    """The settings of :data:`SETTINGS_VARIABLE`, each of its Config field's type."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{SETTINGS_VARIABLE}: not JSON: {exc}") from None
    kinds = _field_kinds()
    if not isinstance(raw, dict) or not set(raw) <= set(kinds):
        raise ConfigError(f"{SETTINGS_VARIABLE}: expected an object of Config fields")
    return {name: _typed(kinds[name], value) for name, value in raw.items()}


@cache
def _field_kinds() -> dict[str, type]:
    """Each Config field's type, without its ``| None``: what a JSON value becomes."""
    kinds = {}
    for name, hint in get_type_hints(Config).items():
        kind = hint
        if isinstance(hint, types.UnionType):
            kind = next(a for a in get_args(hint) if a is not type(None))
        kinds[name] = get_origin(kind) or kind
    return kinds


def _typed(kind: type, value: Any) -> Any:
    if value is None:
        return None
    if kind is tuple:
        return tuple(value)
    if kind is Path:
        return Path(value)
    return value


# Proxy variables Scrapy and urllib read: their passwords are masked like Redis's.
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def register_secrets(config: Config, env: Mapping[str, str]) -> None:
    """Mask this process's secrets in every message from now on, whatever characters
    they hold: the Redis password, the dashboard's and metrics' tokens, proxy passwords."""
    register_url(config.redis)
    register_secret(config.dashboard_token)
    register_secret(config.metrics_token)
    register_secret(config.mcp_token)
    for name in PROXY_VARIABLES:
        register_url(env.get(name) or env.get(name.upper()))


def is_given(name: str, cli: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> bool:
    """Whether option ``name`` was given, as a flag or as its variable (not defaulted)."""
    env = os.environ if environ is None else environ
    return cli.get(name) is not None or env.get(OPTIONS_BY_NAME[name].env, "") != ""


def configuration_table() -> str:
    """The Markdown table of every option (docs/configuration.md embeds it)."""
    rows = [
        "| flag | environment variable | default | commands | meaning |",
        "|---|---|---|---|---|",
    ]
    for o in OPTIONS:
        default = o.default_text or default_of(o.name)
        if isinstance(default, tuple):
            default = " ".join(default) or "none"
        rows.append(
            f"| `{o.flag}` | `{o.env}` | `{default}` | {', '.join(sorted(o.commands))} | "
            f"{o.help.replace('%%', '%')} |"
        )
    return "\n".join(rows) + "\n"


def update_configuration_doc(text: str) -> str:
    """``docs/configuration.md`` with its option table regenerated (the table runs from
    its header row to the first blank line)."""
    start = text.index("| flag | environment variable |")
    end = text.find("\n\n", start)
    return text[:start] + configuration_table() + (text[end + 1 :] if end != -1 else "")


if __name__ == "__main__":  # python -m invcrawl.common.settings.config docs/configuration.md
    import sys

    doc = Path(sys.argv[1])
    doc.write_text(update_configuration_doc(doc.read_text(encoding="utf-8")), encoding="utf-8")
