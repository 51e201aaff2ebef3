"""Tokens of names and summaries, and the index terms built from them (pure).

An item is indexed under a handful of short *terms* (``frontier/search.py`` keeps a
posting list per term in Redis, docs/search.md): its whole qualified name (hashed), its
last component, the first three characters of that component (the prefix tier), the
other tokens of its name and the words of its summary. A term's first character says
which of these it is, so a word of a summary never passes for a token of a name.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

# Kinds of terms (the first character of each).
FULL_NAME = "="  # the whole qualified name, lower-cased and hashed (names are long)
LAST = "."  # the name's last component, lower-cased
PREFIX = ">"  # the first PREFIX_CHARS characters of the last component
NAME_PART = "~"  # a token of the name (dotted, camel, underscore parts)
WORD = "+"  # a word of the summary, stemmed (:func:`stem`)

PREFIX_CHARS = 3
TERM_BYTES = 48  # a term longer than this is cut (Redis keeps a hash listpack-encoded
# while its fields are at most hash-max-listpack-value, 64 bytes)
SUMMARY_WORDS = 8  # words of a summary indexed, at most
# Tokens of a name indexed, at most (issue 46.6: a 16,000-character name cost 41,943 B of
# index; a real name has a dozen at most: http.server.BaseHTTPRequestHandler.send_error
# has 9), and the characters of a name looked at for them.
NAME_TOKENS = 16
NAME_CHARS = 256
MIN_WORD = 2

_SPLIT = re.compile(r"[^0-9A-Za-z]+")
# camelCase / CamelCase / HTTPServer / utf8Codec -> parts
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"[0-9a-z]+")

# Words too common in summaries to tell items apart (English function words and the
# verbs of nearly every docstring's first line are kept: "return", "parse" matter).
_STOPWORDS_TEXT = """a an and are as at be been but by can for from has have if in into is it
its of on or that the their then there these this those to was were which will with not no
may also such than when where whether"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
# Words of a question that name no API ("how do I ...", "what is the way to ..."): left
# out of a phrase query only (a summary keeps them: an item's doc says "you", rarely).
_QUESTION_TEXT = """how do does did doing done i me my we our you your what why who which way
ways want wanted need needs someone something anything using use used python pythonic
possible best correct proper properly simple simply easy easily just"""
QUESTION_WORDS = frozenset(_QUESTION_TEXT.split())


def last_component(name: str) -> str:
    """``requests.sessions.Session`` → ``Session`` (a name without dots: itself)."""
    return name.rsplit(".", 1)[-1] if "." in name.strip(".") else name


# The components of names (``asyncio``, ``events``: every name of a module starts with
# the same ones) and the words of summaries repeat across items: their tokens and stems
# are computed once a process, while they stay among the WORD_CACHE most recent.
WORD_CACHE = 1 << 15


def name_tokens(name: str) -> list[str]:
    """The lower-cased dotted, underscore and camel-case parts of a name, each once, in
    order: ``http.server.BaseHTTPRequestHandler.send_error`` → http, server, base,
    request, handler, send, error (and ``basehttprequesthandler``, ``send_error``: each
    whole component too, so a query of a component finds it)."""
    out: dict[str, None] = {}
    for component in name[:NAME_CHARS].split("."):
        for token in _component_tokens(component):
            out.setdefault(token, None)
            if len(out) >= NAME_TOKENS:
                return list(out)
    return list(out)


@lru_cache(maxsize=WORD_CACHE)
def _component_tokens(component: str) -> tuple[str, ...]:
    """The tokens of one component of a name (:func:`name_tokens`), in order."""
    out: dict[str, None] = {}
    whole = component.lower()
    if whole and _SPLIT.sub("", whole):
        out.setdefault(whole, None)
    for part in _SPLIT.split(component):
        for piece in _CAMEL.findall(part):
            if len(piece) >= MIN_WORD:
                out.setdefault(piece.lower(), None)
                if len(out) >= NAME_TOKENS:
                    return tuple(out)
    return tuple(out)


def words(text: str, limit: int | None = None) -> list[str]:
    """The lower-cased words of ``text`` (letters and digits), stopwords and one-letter
    words left out, each once, in order; at most ``limit``."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) >= MIN_WORD and word not in STOPWORDS:
            out.setdefault(word, None)
            if limit is not None and len(out) >= limit:
                break
    return list(out)


def words_all(text: str) -> list[str]:
    """The lower-cased words of ``text`` as :func:`words`, repeats kept (a word's count
    in a field is what BM25 weighs)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) >= MIN_WORD and w not in STOPWORDS]


@lru_cache(maxsize=WORD_CACHE)
def stem(word: str) -> str:
    """A light stem of a lower-cased English word, so that a summary's "Parses the
    directories" and a query's "parse a directory" share their words: plural ``s``,
    ``ies``, ``ed``, ``ing`` and a final ``e`` go (``parse``, ``parses``, ``parsed``,
    ``parsing`` → ``pars``). Words of 3 letters or fewer and words with digits stay."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ing") and len(word) >= 7:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 6:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def summary_words(text: str, limit: int | None = None) -> list[str]:
    """The stems of the words of ``text`` (:func:`words`), each once, at most ``limit``."""
    out: dict[str, None] = {}
    seen: set[str] = set()
    # words(text) inlined, so that the words after the limit are never looked at
    for word in _WORD.findall(text.lower()):
        if len(word) < MIN_WORD or word in STOPWORDS or word in seen:
            continue
        seen.add(word)
        out.setdefault(stem(word), None)
        if limit is not None and len(out) >= limit:
            break
    return list(out)


def cut(term: str) -> str:
    if len(term) <= TERM_BYTES and term.isascii():  # one byte a character: no need to encode
        return term
    data = term.encode("utf-8")
    if len(data) <= TERM_BYTES:
        return term
    return data[:TERM_BYTES].decode("utf-8", "ignore")


def full_name_term(name: str) -> str:
    """The term of a whole name (case-insensitive), hashed: 9 bytes however long."""
    return FULL_NAME + hashlib.sha1(name.strip().lower().encode("utf-8")).hexdigest()[:8]


def last_term(name: str) -> str:
    return cut(LAST + last_component(name).lower())


def prefix_term(text: str) -> str | None:
    """The prefix term of a last component (None: too short to have one)."""
    text = text.lower()
    return PREFIX + text[:PREFIX_CHARS] if len(text) >= PREFIX_CHARS else None


@lru_cache(maxsize=WORD_CACHE)
def _name_part_terms(component: str) -> tuple[tuple[str, str], ...]:
    """Each token of one component of a name with its NAME_PART term, cut: components
    repeat across items (a page's module and class), so each is looked at once a
    process."""
    return tuple((token, cut(NAME_PART + token)) for token in _component_tokens(component))


@lru_cache(maxsize=WORD_CACHE)
def _word_term(stemmed: str) -> str:
    """The WORD term of a summary word's stem, cut (made once a process)."""
    return cut(WORD + stemmed)


def index_terms(name: str, summary: str) -> list[str]:
    """Every term an item of this name and summary is indexed under, each once: its
    whole name's, its last component's and that one's prefix, a NAME_PART for each of
    :func:`name_tokens` (its loop here, over each component's cached terms: a consumer
    indexes every item it commits) but the last component's own, then a WORD for each of
    :func:`summary_words` (SUMMARY_WORDS at most)."""
    out: dict[str, None] = {}
    if "." in name.strip("."):
        out[full_name_term(name)] = None
    last = last_component(name)
    out[last_term(name)] = None
    prefix = prefix_term(last)
    if prefix is not None and len(last) > PREFIX_CHARS:
        out[prefix] = None
    last_lower = last.lower()
    parts = 0
    for component in name[:NAME_CHARS].split("."):
        for token, term in _name_part_terms(component):
            if token != last_lower and parts < NAME_TOKENS:
                parts += 1
                out[term] = None
    for stemmed in summary_words(summary, SUMMARY_WORDS):
        out[_word_term(stemmed)] = None
    return list(out)
