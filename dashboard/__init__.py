"""``invcrawl dashboard``: a read-only live web page of every crawl, host, consumer and
dead letter of a Redis (aiohttp; the page is one static file, ``static/index.html``).
Imports ``common`` and ``frontier``; never Scrapy, the producer, the consumer or the CLI.
"""
