"""The Redis frontier: every key (``keys``), the Lua scripts (``lua/``, run by
``scripts``), the crawl registry, the typed delivery API (``session``: a
:class:`~invcrawl.frontier.session.Frontier` per process hands out one
:class:`~invcrawl.frontier.session.CrawlSession` per crawl: ``crawl_handle``, ``production``,
``delivery``), the crawl state machine
(``states``), operator actions (``admin``), read-side views (``status``, ``export``,
``report``), the Redis client (``connection``) and riding out its outages
(``reconnect``, ``outages``). Only this package makes Redis calls; the other packages go
through its methods.

Imports redis and the pure ``process`` and ``common`` modules; never Scrapy, Twisted,
``producer``, ``consumer``, ``invcrawl``, or ``localredis`` (the redis-server processes
and files).
"""
