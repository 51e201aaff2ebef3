"""Every Redis key invcrawl uses, in one place.

All keys of crawl ``C`` carry the hash tag ``{C}`` so that every multi-key Lua
script of one crawl runs on a single Redis Cluster node, while many crawls
spread over a cluster. The politeness keys of host ``H`` carry ``{H}``: no script
touches a crawl's keys and a host's keys together. The registry keys (``crawls``,
``active``, ``hosts``) are single keys written by commands of their own. Values are
JSON documents or plain strings; nothing is pickled. ``docs/redis-keys.md`` is the
user-facing copy of this table with a redis-cli cookbook.

==================================  ======  ===================================================
key                                 type    holds
==================================  ======  ===================================================
``invcrawl:crawls``                 SET     crawl ids known to this Redis
``invcrawl:active``                 ZSET    open crawl ids (producing/running) -> server time
                                            they were last listed (``frontier/registry.py``)
``invcrawl:{C}:meta``               HASH    crawl metadata: ``site``, ``inventory_url``,
                                            ``inventory_sha256``, ``project``, ``version``,
                                            (``project_given``, ``version_given``: from
                                            ``--project``/``--version``, kept by later runs),
                                            ``slots``, ``max_slots``, ``buckets``, ``entries``,
                                            ``pages``, ``tasks``, ``producer``
                                            (``running``/``done``/``failed``), ``state``
                                            (``frontier/states.py``), ``error``,
                                            ``created_at``, ``produced_at``, ``started_at``,
                                            ``finished_at``, ``failed_at`` (ms),
                                            ``max_tries``, ``weight``; refresh:
                                            ``round``, ``refreshes``, ``inv_etag``,
                                            ``inv_last_modified``, ``refresh_started_at``,
                                            ``refreshed_at``, ``next_refresh_at`` (ms);
                                            refresh schedule (``frontier/refresh_schedule.py``):
                                            ``refresh_interval`` (s),
                                            ``refresh_adaptive`` (1: ``--every auto``),
                                            ``refresh_changed`` (1/0: the last round's),
                                            ``refresh_base`` (changes before the round);
                                            decoded by ``frontier/meta.CrawlMeta`` only
``invcrawl:{C}:task``               HASH    task id -> task JSON (``docs/delivery.md``); deleted
                                            when the task is committed, kept while dead
``invcrawl:{C}:seen``               SET     task ids ever enqueued (idempotent enqueue, resume)
``invcrawl:{C}:q:<slot>``           LIST    ready task ids of one slot (RPUSH in, LPOP out)
``invcrawl:{C}:delayed:<slot>``     ZSET    task id -> not-before time, ms (retry backoff)
``invcrawl:{C}:inflight:<slot>``    ZSET    task id -> lease deadline, ms (Redis server time)
``invcrawl:{C}:lease``              HASH    task id -> fencing token ``<consumer>:<seq>``
``invcrawl:{C}:tries``              HASH    task id -> deliveries so far
``invcrawl:{C}:reaped``             SET     task ids whose last delivery ended by lease
                                            expiry (suspects: claimed alone)
``invcrawl:{C}:errors``             HASH    task id -> last error JSON (retries and DLQ)
``invcrawl:{C}:dlq``                ZSET    dead task id -> time of death, ms
``invcrawl:{C}:dlq:why``            HASH    dead task id -> JSON ``{reason, error, tries, at}``
``invcrawl:{C}:items``              STREAM  one entry per new, changed or removed item: fields
                                            ``key``, ``sum``, ``kind`` (new/update/removed),
                                            ``task``, ``data`` (a tombstone for removed)
``invcrawl:{C}:pages``              HASH    task id -> the page's refresh validators JSON
                                            (``common/validators.py``), from its last fetch
``invcrawl:{C}:inventory``          STRING  the inventory (objects.inv bytes) the crawl was
                                            last produced from: a refresh diffs against it
                                            (removed keys) and reuses it on a 304
``invcrawl:{C}:isum:<b>``           HASH    item-key digest -> checksum + status letter,
                                            bucketed so each hash stays listpack-encoded
``invcrawl:{C}:srec:<r>``           HASH    search index: item digest -> stream entry id of
                                            its latest item (``common/search/postings.py``)
``invcrawl:{C}:slog:<h>``           STRING  search index: the postings of the terms in
                                            ``h``, appended: 4-byte term tag + 6-byte item
                                            digest each
``invcrawl:{C}:svec``               STRING  search index: the item vectors, appended: 6-byte
                                            item digest + 128 int8 each, zeros for a
                                            removed item (``common/search/vector_log.py``)
``invcrawl:{C}:slnk``               STRING  search index: the link log, appended: per page
                                            a 6-byte page digest, a 2-byte count and the
                                            6-byte digests of the URLs its docs link to
                                            (``common/search/link_log.py``)
``invcrawl:{C}:sterm:<h>``          HASH    the index's first layout (term -> postings in
                                            chunks): deleted by forget, replaced by
                                            ``search --reindex``
``invcrawl:{C}:stats``              HASH    counters: claims, commits, fenced, retries, reaped,
                                            dead, items_new, items_updated, items_unchanged,
                                            items_removed,
                                            ``status:<s>``, pages_done, fence (token sequence)
``invcrawl:{C}:consumers``          ZSET    consumer id -> last heartbeat, ms
``invcrawl:{C}:ring``               ZSET    consumer id -> last heartbeat, ms, of the consumers
                                            with automatic slots (assign.lua shares the slots
                                            between them; pinned consumers are not in it)
``invcrawl:{C}:cinfo``              HASH    consumer id -> JSON ``{host, pid, slots, started}``
``invcrawl:{C}:owner:<slot>``       STRING  owning consumer id, with a PX lease (scheduling
                                            and politeness only; task leases fence correctness)
``invcrawl:{C}:export:<group>``     --      consumer groups live on the items stream itself
``invcrawl:{changes}:crawls``       ZSET    crawl id -> the change sequence number of the last
                                            change of its figures (state, pages, items, dead
                                            letters): what a watcher reads instead of every
                                            crawl (``frontier/registry.py``)
``invcrawl:{changes}:seq``          STRING  the change sequence (INCR by ``changed.lua``)
``invcrawl:hosts``                  ZSET    hosts (``scheme://host:port``) consumers fetched
                                            from -> last time a consumer listed it, ms
``invcrawl:fleet``                  ZSET    consumer id -> last heartbeat, ms, of every consumer
                                            process, serving a crawl or idle
``invcrawl:fleet:info``             HASH    consumer id -> JSON ``{host, pid, started,
                                            lease_ms}``
``invcrawl:host:{H}:permits``       ZSET    permit token -> lease deadline, ms: requests in
                                            flight on host ``H``, fleet-wide
``invcrawl:host:{H}:state``         HASH    ``next_at`` (next start allowed), ``blocked_until``
                                            and ``block_reason`` (429/503 Retry-After),
                                            ``robots_delay_ms`` (Crawl-delay, capped) and
                                            ``robots_delay_asked``, ``limit``, ``delay_ms``,
                                            ``started``, ``blocks``, ``last_at``; expires
                                            (``hosts.STATE_TTL_MS`` after its last write)
``invcrawl:host:{H}:robots``        STRING  robots.txt as JSON ``{status, body, fetched_at}``,
                                            shared by every consumer; expires (EX)
``invcrawl:host:{H}:robots:lock``   STRING  the consumer fetching robots.txt (PX lease)
==================================  ======  ===================================================
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "invcrawl"
CRAWLS = f"{PREFIX}:crawls"
ACTIVE = f"{PREFIX}:active"
HOSTS = f"{PREFIX}:hosts"
FLEET = f"{PREFIX}:fleet"
FLEET_INFO = f"{PREFIX}:fleet:info"
# The change journal: one hash tag of their own, so that changed.lua (INCR the sequence,
# ZADD the crawls) runs on one Redis Cluster node; never inside a crawl's script.
CHANGED = f"{PREFIX}:{{changes}}:crawls"
CHANGES_SEQ = f"{PREFIX}:{{changes}}:seq"
# outside any crawl's hash tag, each written by commands of its own (frontier/registry.py)
REGISTRY_KEYS = (CRAWLS, ACTIVE, HOSTS, FLEET, FLEET_INFO, CHANGED, CHANGES_SEQ)

# Fields of a crawl's meta hash written by the refresh schedule (frontier/refresh_schedule.py).
META_NEXT_REFRESH = "next_refresh_at"
META_REFRESH_INTERVAL = "refresh_interval"
META_REFRESH_ADAPTIVE = "refresh_adaptive"
META_REFRESH_CHANGED = "refresh_changed"
META_REFRESH_BASE = "refresh_base"


class _Bindable:
    """Keys by name for a Lua script: each key's property here bears the name the
    scripts bind it to (``local meta, stats = KEYS[1], KEYS[2]``), and
    :meth:`invcrawl.frontier.scripts.Scripts.run` checks the names against the script's."""

    __slots__ = ()

    def bind(self, *names: str, **keys: str) -> dict[str, str]:
        """The keys ``names`` (properties of this class), plus ``keys`` given by name
        (the per-slot ones: ``bind("meta", inflight=k.inflight(slot))``)."""
        bound: dict[str, str] = {}
        for name in names:
            if not isinstance(getattr(type(self), name, None), property):
                raise AttributeError(f"{type(self).__name__} has no key {name!r}")
            bound[name] = getattr(self, name)
        if clash := bound.keys() & keys.keys():
            raise TypeError(f"keys given twice: {', '.join(sorted(clash))}")
        return bound | keys


@dataclass(frozen=True, slots=True)
class CrawlKeys(_Bindable):
    """Key names of one crawl. Build once per crawl id and pass around."""

    crawl_id: str

    @property
    def base(self) -> str:
        return f"{PREFIX}:{{{self.crawl_id}}}"

    @property
    def meta(self) -> str:
        return f"{self.base}:meta"

    @property
    def task(self) -> str:
        return f"{self.base}:task"

    @property
    def seen(self) -> str:
        return f"{self.base}:seen"

    @property
    def lease(self) -> str:
        return f"{self.base}:lease"

    @property
    def tries(self) -> str:
        return f"{self.base}:tries"

    @property
    def reaped(self) -> str:
        return f"{self.base}:reaped"

    @property
    def errors(self) -> str:
        return f"{self.base}:errors"

    @property
    def dlq(self) -> str:
        return f"{self.base}:dlq"

    @property
    def dlq_why(self) -> str:
        return f"{self.base}:dlq:why"

    @property
    def items(self) -> str:
        return f"{self.base}:items"

    @property
    def stats(self) -> str:
        return f"{self.base}:stats"

    @property
    def pages(self) -> str:
        return f"{self.base}:pages"

    @property
    def inventory(self) -> str:
        return f"{self.base}:inventory"

    @property
    def consumers(self) -> str:
        return f"{self.base}:consumers"

    @property
    def ring(self) -> str:
        return f"{self.base}:ring"

    @property
    def cinfo(self) -> str:
        return f"{self.base}:cinfo"

    def queue(self, slot: int) -> str:
        return f"{self.base}:q:{slot}"

    def delayed(self, slot: int) -> str:
        return f"{self.base}:delayed:{slot}"

    def inflight(self, slot: int) -> str:
        return f"{self.base}:inflight:{slot}"

    def owner(self, slot: int) -> str:
        return f"{self.base}:owner:{slot}"

    def isum(self, bucket: int) -> str:
        return f"{self.base}:isum:{bucket}"

    def search_record(self, bucket: int) -> str:
        return f"{self.base}:srec:{bucket}"

    def search_log(self, bucket: int) -> str:
        return f"{self.base}:slog:{bucket}"

    @property
    def svec(self) -> str:
        """The search index's vector log (``common/search/vector_log.py``)."""
        return f"{self.base}:svec"

    @property
    def slnk(self) -> str:
        """The search index's link log (``common/search/link_log.py``)."""
        return f"{self.base}:slnk"

    def old_search_postings(self, bucket: int) -> str:
        """The postings hashes of the index's first layout (``sterm``): ``forget`` still
        deletes them, ``search --reindex`` replaces them."""
        return f"{self.base}:sterm:{bucket}"

    def pattern(self) -> str:
        """A SCAN pattern matching every key of this crawl (for deletion)."""
        return f"{self.base}:*"


@dataclass(frozen=True, slots=True)
class HostKeys(_Bindable):
    """Key names of one host (``scheme://host:port``), under their own hash tag: no
    script ever mixes a host's keys with a crawl's (Redis Cluster)."""

    origin: str

    @property
    def base(self) -> str:
        return f"{PREFIX}:host:{{{self.origin}}}"

    @property
    def permits(self) -> str:
        return f"{self.base}:permits"

    @property
    def state(self) -> str:
        return f"{self.base}:state"

    @property
    def robots(self) -> str:
        return f"{self.base}:robots"

    @property
    def robots_lock(self) -> str:
        return f"{self.base}:robots:lock"
