"""Which symbol of which crawl an item's reference names (issue 48, 4). Pure: the reader
(the MCP server's ``get_symbol``) asks Redis which of the :func:`candidate_keys` exist.

An item keeps each link of its doc as the key of an entry of the same page, else as the
URL, the name its anchor gives and the xref role the page wrote
(``common/extract/references.py``). Its keys (:func:`candidate_keys`): the anchor's name
under each object type the xref role may name (Sphinx's ``py:func`` finds a function or
a method), the first that the crawl holds; no role, every Python type. Its crawl: the one
whose site holds the URL (:func:`target_site`: the longest base wins, the item's own
crawl on a tie); else, as sites are crawled from copies (Debian's
``/usr/share/doc/python3.11/html`` for ``https://docs.python.org/3/``), the crawl holding
a candidate key at the same page and anchor (:func:`page_match`: the most trailing parts
of the path in common, the item's own crawl on a tie)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

MAX_SHOWN = 64  # references in an answer
# The object types a Sphinx xref role finds, most likely first (sphinx.domains.python
# and .c: ``object_types``); a role not listed names its own type.
ROLE_TYPES: Mapping[str, tuple[str, ...]] = {
    "py:func": ("function", "method", "classmethod", "staticmethod", "decorator"),
    "py:meth": ("method", "classmethod", "staticmethod", "function"),
    "py:class": ("class", "exception", "type"),
    "py:exc": ("exception", "class"),
    "py:attr": ("attribute", "property", "data"),
    "py:data": ("data", "attribute"),
    "py:const": ("data", "attribute"),
    "py:mod": ("module",),
    "py:type": ("type", "class"),
    "c:func": ("function", "macro"),
    "c:macro": ("macro", "function"),
    "c:type": ("type", "struct", "union", "enum"),
    "c:struct": ("struct", "type"),
    "c:data": ("var", "member", "macro"),
    "c:member": ("member", "var"),
    "c:var": ("var", "member"),
    "std:ref": ("label",),
}
PY_TYPES = (
    "class",
    "function",
    "method",
    "attribute",
    "module",
    "exception",
    "data",
    "property",
    "classmethod",
    "staticmethod",
    "decorator",
)


@dataclass(frozen=True, slots=True)
class Site:
    """A crawl a reference may name a symbol of: its site's base URL without the scheme
    (``//docs.python.org/3/``)."""

    crawl_id: str
    project: str
    version: str
    base: str


def site_base(site: str) -> str:
    """The base of a crawl's SITE as a scheme-less URL: its folder (an ``objects.inv`` or
    page URL: the folder holding it); a local path is a ``file://`` one."""
    site = site.strip().split("#", 1)[0].split("?", 1)[0]
    if "://" not in site:
        site = "file://" + (site if site.startswith("/") else "/" + site)
    rest = site.split("://", 1)[1]
    last = rest.rsplit("/", 1)[-1]
    if "/" in rest and last.endswith((".inv", ".html", ".htm")):
        rest = rest.rsplit("/", 1)[0]
    return "//" + rest.rstrip("/") + "/"


def _bare(url: str) -> str:
    """``url`` without its scheme and fragment (``http`` and ``https`` alike)."""
    return "//" + url.split("://", 1)[-1].split("#", 1)[0]


def target_site(url: str, own: Site, others: Sequence[Site]) -> Site | None:
    """The crawl whose site holds ``url``: among ``own`` (the item's) and ``others`` (one
    crawl of each other project), the longest base, ``own`` on a tie (None: none)."""
    bare = _bare(url)
    holding = [s for s in (own, *others) if bare.startswith(s.base)]
    if not holding:
        return None
    return max(holding, key=lambda s: (len(s.base), s is own))


def page_match(link: str, item_url: str) -> int:
    """How many trailing parts of its path a link shares with an item's URL, the file
    name at least, when both name the same anchor (0: another page or anchor). A link
    to another copy of a site (``https://docs.python.org/3/library/stdtypes.html#str``,
    ``file:///usr/share/doc/python3-doc/html/library/stdtypes.html#str``) names the
    item of a crawl of any copy (``.../python3.11/html/library/stdtypes.html#str``)."""
    link_page, _, link_anchor = link.partition("#")
    item_page, _, item_anchor = item_url.partition("#")
    if unquote(link_anchor) != unquote(item_anchor):
        return 0
    a = _bare(link_page)[2:].split("/")
    b = _bare(item_page)[2:].split("/")
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n] and (n or a[-1]):
        n += 1
    return n


def candidate_keys(reference: Mapping[str, Any]) -> list[str]:
    """The keys ``reference`` may name, the likeliest first: its own key (a symbol of the
    same page), else its name under each type its xref role finds (no role: a module's
    anchor names a module, a ``c.`` anchor a C symbol, any other a Python object or a
    label)."""
    key = reference.get("key")
    if isinstance(key, str) and key:
        return [key]
    name = str(reference.get("name") or "")
    url = str(reference.get("url") or "")
    if not name:
        return []
    role = str(reference.get("role") or "")
    anchor = url.partition("#")[2]
    if role:
        domain = role.partition(":")[0]
        types = ROLE_TYPES.get(role) or (role.partition(":")[2],)
        if domain == "c":
            name = name.removeprefix("c.")
        return [f"{domain}:{t}:{name}" for t in types]
    if anchor.startswith("module-"):
        return [f"py:module:{name}"]
    if name.startswith("c.") and len(name) > 2:
        return [f"c:{t}:{name[2:]}" for t in ("function", "macro", "type", "struct", "var")]
    # a link of no xref: a Python object's anchor, else a section's label (``:ref:``)
    return [*(f"py:{t}:{name}" for t in PY_TYPES), f"std:label:{name}"]


def shown_reference(
    reference: Mapping[str, Any], found: tuple[Site, str] | None, own: Site
) -> dict[str, Any]:
    """A reference as an answer shows it: ``{key, name}`` of a symbol of the item's own
    crawl, with ``project`` and ``crawl_id`` of another one's (``get_symbol`` takes a
    crawl id for a version); ``{name, url}`` of a link no crawl here holds."""
    if found is None:
        return {"name": reference.get("name"), "url": reference.get("url")}
    site, key = found
    shown: dict[str, Any] = {"key": key, "name": key.split(":", 2)[-1]}
    if site.crawl_id != own.crawl_id:
        shown.update(project=site.project, crawl_id=site.crawl_id)
    return shown
