r"""Literal text in inline Markdown (``inline.py``): the shapes of literal roles whose
markup nests, and the literal backticks of the text. Each is written so that it renders
under CommonMark with no stray marker (``tests/unit/test_literal_markdown.py``):

* ``:kbd:`Ctrl-C``` is a compound, ``<kbd class="kbd compound"><kbd>Ctrl</kbd>-<kbd>C
  </kbd></kbd>``: one code span, not a code span per key inside another;
* code spans that touch (``<code>a</code><code>b</code>``) would write ```a``b``: one;
* a placeholder of ``:samp:`issues/{num}``` or ``:file:`` is an ``<em>`` inside the code:
  code, emphasised code, code (```issues/`*`num`*``), since markers inside a code span are
  literal;
* a literal backtick of the text (bs4's ``<em>.foo`</em>``, statsmodels' ``z```) is
  written ``\``` by ``inline.finish``, so that it cannot pair with a code span's.

The input is libxml2's serialisation of a well-formed tree (see ``inline.py``).
"""

from __future__ import annotations

import re

CODE = re.compile(r"<(code|tt|kbd|samp)\b[^>]*>(.*?)</\1>", re.S)
TAG = re.compile(r"<[^>]*>")
TICK = "\ufdd0"  # a Unicode noncharacter: no text holds one (a page may hold "\x07")
_TICK_OR_SKIP = re.compile(r"<(code|tt|kbd|samp)\b[^>]*>.*?</\1>|<[^>]*>|(`)", re.S)
_KBD_COMPOUND = re.compile(
    r"<kbd\b[^>]*\bcompound\b[^>]*>((?:[^<]++|<kbd\b[^>]*>[^<]*+</kbd>)*+)</kbd>"
)
_KBD_TAG = re.compile(r"</?kbd\b[^>]*>")
_ADJACENT_CODE = re.compile(r"</(?:code|tt|samp|kbd)><(?:code|tt|samp|kbd)\b[^>]*>")
_CODE_WITH_EM = re.compile(r"<(?:code|tt|samp)\b[^>]*>[^<]*<(?:em|var)\b")
_EM_PART = re.compile(r"(<(?:em|var)\b[^>]*>.*?</(?:em|var)>)", re.S)


def protect_ticks(s: str) -> str:
    """Literal backticks outside code elements and tags → :data:`TICK`."""
    return _TICK_OR_SKIP.sub(_tick, s)


def _tick(match: re.Match[str]) -> str:
    return TICK if match.group(2) else match.group(0)


def literal_shapes(s: str) -> str:
    """Literal roles whose markup nests: compound keys, touching code spans, placeholders.
    Each pass is gated by a substring test or one C search (most fragments have none)."""
    if "compound" in s:
        s = _KBD_COMPOUND.sub(lambda m: "<kbd>" + _KBD_TAG.sub("", m.group(1)) + "</kbd>", s)
    if "><" in s and _ADJACENT_CODE.search(s):
        s = _ADJACENT_CODE.sub("", s)
    if _CODE_WITH_EM.search(s):
        s = CODE.sub(_placeholders, s)
    return s


def _placeholders(match: re.Match[str]) -> str:
    inner = match.group(2)
    if "<em" not in inner and "<var" not in inner:
        return match.group(0)
    parts = _EM_PART.split(inner)
    if not any(part.strip() for part in parts[::2]):
        return "<code>" + TAG.sub("", inner) + "</code>"  # all emphasised: one code span
    out = []
    for part in parts:
        if part.startswith(("<em", "<var")):
            out.append("<em><code>" + TAG.sub("", part) + "</code></em>")
        elif part:
            out.append("<code>" + part + "</code>")
    return "".join(out)
