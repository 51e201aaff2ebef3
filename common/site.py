"""From what a user types (SITE) to the inventory URL to fetch, and a default crawl id.

Pure: no I/O except checking whether a local path exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from invcrawl.process.secrets import mask_url, url_password

INVENTORY_NAME = "objects.inv"


class SiteError(ValueError):
    """SITE cannot be understood (one-line message)."""


def inventory_url(site: str) -> str:
    """The URL of the site's objects.inv.

    - a local file -> its file:// URL; a local directory -> <dir>/objects.inv
    - a URL ending in ``.inv`` -> as given
    - a URL of a page (``.../index.html``) -> objects.inv next to it
    - any other URL -> objects.inv under it (a trailing slash is implied)
    """
    site = site.strip()
    if not site:
        raise SiteError("empty SITE: give a docs URL, an objects.inv URL or a local directory")
    userinfo = re.match(r"^([a-z][a-z0-9+.-]*://)[^/?#]*@", site, re.I)
    if url_password(site) is not None or userinfo:
        # Credentials would travel into the crawl id, Redis and every message (a lone
        # user name may be a token); docs sites are public.
        shown = mask_url(site)
        if userinfo:
            shown = userinfo[1] + "***@" + site[userinfo.end() :]
        raise SiteError(f"{shown}: site URLs with a user name or password are not supported")
    parts = urlsplit(site)
    if parts.scheme in ("http", "https"):
        if not parts.netloc:
            raise SiteError(f"invalid URL {site!r}: no host")
        path = parts.path
        if path.endswith(".inv"):
            return site
        if path.endswith((".html", ".htm")):
            return site.rsplit("/", 1)[0] + "/" + INVENTORY_NAME
        base = site.split("#", 1)[0].split("?", 1)[0]
        return base.rstrip("/") + "/" + INVENTORY_NAME
    if parts.scheme == "file":
        return inventory_url(unquote(parts.path))
    if parts.scheme and len(parts.scheme) > 1:
        raise SiteError(f"unsupported URL scheme {parts.scheme!r} in {site!r}: use http(s)://")
    local = Path(site).expanduser()
    if local.is_dir():
        if not (local / INVENTORY_NAME).exists() and (inner := _built_inside(local)):
            shown = site.rstrip("/") + "/" + inner
            raise SiteError(f"no {INVENTORY_NAME} in {site}; did you mean {shown} ?")
        return (local / INVENTORY_NAME).resolve().as_uri()
    if local.is_file():
        return local.resolve().as_uri()
    if re.match(r"^[\w.-]+\.[a-z]{2,}(/|$)", site):
        raise SiteError(f"{site!r} is not a local path; did you mean https://{site} ?")
    raise SiteError(f"no such file or directory: {site}")


# Where a docs build keeps its site under a project or package folder (Sphinx's
# _build/html, Debian's /usr/share/doc/P/html, MkDocs' site): a folder given without
# its objects.inv is looked in for these, then its direct subfolders.
_BUILT_IN = ("html", "_build/html", "build/html", "docs/_build/html", "site", "doc/html")
_SUBFOLDERS_LOOKED_IN = 100


def _built_inside(folder: Path) -> str | None:
    """The subfolder of ``folder`` (as a relative path) that holds an objects.inv, if
    one does: what a user who gave ``folder`` most likely meant."""
    for inner in _BUILT_IN:
        if (folder / inner / INVENTORY_NAME).is_file():
            return inner
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())[:_SUBFOLDERS_LOOKED_IN]
    except OSError:
        return None
    for child in children:
        if (child / INVENTORY_NAME).is_file():
            return child.name
    return None


def crawl_id_for(site: str) -> str:
    """A readable, stable crawl id: host and path of the docs root, e.g.
    ``docs.python.org-3`` for https://docs.python.org/3/, ``python3.11-html`` for a
    local /usr/share/doc/python3.11/html."""
    url = inventory_url(site)
    parts = urlsplit(url)
    path = unquote(parts.path).rsplit("/", 1)[0]  # the inventory's directory
    segments = [s for s in path.split("/") if s]
    if parts.scheme == "file":
        words = segments[-2:] or ["local"]
    else:
        words = [parts.netloc.replace(":", "-"), *segments]
    text = "-".join(words)
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (text or "site")[:100]


def local_fetch_url(url: str) -> str:
    """For a ``file://`` page that only exists compressed (Debian gzips large pages,
    e.g. python3.11-doc's ``whatsnew/changelog.html.gz``), the URL of the ``.gz``; the
    consumer inflates gzip bodies. Any other URL is returned unchanged."""
    if not url.startswith("file:"):
        return url
    path = Path(url2pathname(urlsplit(url).path))
    if not path.exists() and path.with_name(path.name + ".gz").is_file():
        return url + ".gz"
    return url


_COMMENT = re.compile(r"(?:^|\s)#.*")


def parse_sites_file(text: str) -> list[str]:
    """The sites of a ``--sites`` file: one per line, the whole line (a path may hold
    spaces), without the white space around it; blank lines and ``#`` comments (a whole
    line, or after a site and a space) are ignored. A ``#`` inside a site stays
    (``docs#2/``, a URL's fragment)."""
    sites = []
    for line in text.splitlines():
        site = _COMMENT.sub("", line).strip()
        if site:
            sites.append(site)
    return sites


def plan_sites(sites: list[str], crawl_id: str | None = None) -> list[tuple[str, str]]:
    """(site, crawl id) for every site, each once, in order; ``crawl_id`` names a
    single site's crawl. Every SITE is validated first, so a typo fails before anything
    starts."""
    if not sites:
        raise SiteError(
            "missing SITE: a docs URL, an objects.inv URL or a local directory "
            "(or --sites FILE, or INVCRAWL_SITES)"
        )
    if crawl_id and len(sites) > 1:
        raise SiteError(f"--crawl-id names one crawl, but {len(sites)} sites were given")
    planned: dict[str, str] = {}
    for site in sites:
        cid = crawl_id or crawl_id_for(site)
        if cid in planned and inventory_url(planned[cid]) != inventory_url(site):
            raise SiteError(
                f"{planned[cid]!r} and {site!r} would both be crawl {cid!r}: crawl them "
                "one at a time with --crawl-id"
            )
        planned.setdefault(cid, site)
    return [(site, cid) for cid, site in planned.items()]
