"""What a request carries for the fetch layer's middlewares (``request.meta`` keys): the
per-request data, set by the spider that makes the request; the middlewares never read
the spider's attributes."""

from __future__ import annotations

# The site a request is for: its host is trusted by the address policy even on an
# internal address (fetch/addresses.py). A page's: its crawl's origin; an inventory's:
# the URL the user gave (kept through the inventory's redirects).
SITE = "invcrawl_site"
# A page request: its redirects and meta refreshes are followed within this origin only
# (fetch/redirects.py); None for a page of a local site, where none is followed.
FOLLOW_WITHIN = "invcrawl_follow_within"

# Set by the middlewares:
HOPS = "invcrawl_redirects"  # the URLs a page request was redirected through
OFFSITE = "invcrawl_offsite"  # why a page is offsite: set on the response's request
DEAD = "invcrawl_redirect_dead"  # why a redirect chain is a dead letter
PERMIT = "invcrawl_permit"  # the host permit a request holds (fetch/politeness.py)
