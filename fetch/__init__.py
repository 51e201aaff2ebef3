"""The fetch layer shared by the producer and the consumer processes: their Scrapy
settings, fleet-wide host politeness (``politeness``), robots.txt shared through Redis
(``robots``), the address and redirect policies (``addresses``, ``redirects``), what a
failed download means (``failures``) and the time budget of CPU work on a site's input
(``budget``). It imports ``common`` and ``frontier`` only: never ``producer``,
``consumer`` or ``invcrawl``."""
