"""HTML bytes to an lxml tree, in the right encoding (a BOM, else the HTTP charset, else
the page's ``<meta charset>``, else UTF-8; each only where it decodes the bytes: see
:func:`_encoding`). One parser per encoding and thread: lxml's parsers must not be
shared between threads."""

from __future__ import annotations

import codecs
import re
import threading

from lxml import etree

from .text import Element

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)

_parsers = threading.local()  # lxml parsers must not be shared between threads


def _parser(encoding: str) -> etree.HTMLParser:
    cache: dict[str, etree.HTMLParser] | None = getattr(_parsers, "cache", None)
    if cache is None:
        cache = _parsers.cache = {}
    parser = cache.get(encoding)
    if parser is None:
        parser = etree.HTMLParser(
            encoding=encoding,
            remove_comments=True,
            remove_pis=True,
            no_network=True,
            recover=True,
            default_doctype=False,
        )
        cache[encoding] = parser
    return parser


def _encoding(body: bytes, declared: str | None) -> str:
    """The caller's (HTTP) charset, else the page's <meta charset>, else UTF-8; each only
    if it names a character set that decodes the bytes.

    libxml2 would otherwise default to Latin-1 for pages without a declaration, and it
    stops at the first byte its encoding cannot read: ``charset=us-ascii`` on Sphinx's
    UTF-8 pages (a pilcrow on every one) gave items ``ok`` with empty docs. A label that
    is not a character set (``rot13``, ``zlib``, ``base64``: Python codecs) is ignored, as
    an unknown one is. When the page's own meta names UTF-8 and the bytes are valid UTF-8,
    they win over a header that says otherwise (a server's default Latin-1).
    """
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8"  # a byte order mark outranks every label (as in browsers)
    sniffed = _sniff(body)
    meta = _charset(sniffed) if sniffed else None
    header = _charset(declared) if declared else None
    if header is not None and header not in _UTF8:
        if meta in _UTF8 and not body.isascii() and _valid_utf8(body):
            return "utf-8"
        if not _decodes(body, header):
            header = None
    if header is not None:
        return header
    if meta is not None and (meta in _UTF8 or _decodes(body, meta)):
        return meta  # (UTF-8 is not checked: libxml2 replaces invalid bytes and reads on)
    return "utf-8"


_UTF8 = frozenset(("utf-8", "utf-8-sig"))
# Codecs Python counts as text encodings that are not character sets of a document.
_NOT_CHARSETS = frozenset(
    ("undefined", "unicode-escape", "raw-unicode-escape", "idna", "punycode", "charmap", "utf-7")
)


def _valid_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _charset(label: str) -> str | None:
    """Python's name of the character set ``label`` names; None for anything else."""
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, TypeError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None  # rot13 is str to str, zlib and base64 bytes to bytes
    return info.name


def _decodes(body: bytes, name: str) -> bool:
    """Whether ``body`` is text in the (non UTF-8) character set ``name``."""
    try:
        if body.isascii():  # every ASCII-compatible set reads it; UTF-16 and -32 do not
            return "a".encode(name) == b"a"
        body.decode(name)
    except (UnicodeError, LookupError):
        return False
    return True


def _sniff(body: bytes) -> str | None:
    match = _CHARSET.search(body[:4096])
    return match.group(1).decode("ascii") if match else None


def parse(body: bytes, encoding: str | None = None) -> Element | None:
    """Parse HTML bytes; ``None`` if there is no document at all."""
    if not body or body.isspace():  # isspace() stops at the first non-space; strip() copies
        return None
    enc = _encoding(body, encoding)
    try:
        root = etree.fromstring(body, _parser(enc))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError, LookupError):
        root = None
    if root is None:
        # Last resort: decode ourselves, replacing bad bytes, and let lxml parse the text.
        try:
            root = etree.fromstring(body.decode(enc, "replace"), etree.HTMLParser())
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            return None
    return root
