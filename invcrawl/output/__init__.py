"""Every file the CLI writes: ``paths`` (outputs checked before any work), ``files``
(the ``.part`` file, fsync, atomic rename, standard output), ``export`` (``export``,
``export --follow`` and the incremental export, from what ``frontier/export`` and
``frontier/every_crawl`` read) and ``crawl_files`` (one file per crawl of an ``invcrawl
crawl`` run, final as soon as its crawl is)."""
