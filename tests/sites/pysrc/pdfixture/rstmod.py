"""
A module whose docstrings are reStructuredText.

It documents :class:`Parser` and :func:`parse`.
"""

from __future__ import annotations

__docformat__ = "restructuredtext"


def parse(text: str, strict: bool = True, *extra: str, limit: int | None = None) -> list[str]:
    """
    Parse a text into tokens.

    The parser splits on whitespace.

    :param text: The text to parse.
    :param strict: Refuse unknown tokens.
    :param extra: More texts to parse.
    :param limit: The most tokens to return.
    :returns: The tokens found.
    :raises ValueError: When a token is unknown and ``strict`` is true.
    :raises KeyError: When ``limit`` is negative.

    .. versionadded:: 1.1
    .. versionchanged:: 1.3
       The ``limit`` parameter.
    """
    return []


def legacy(data, encoding="utf-8"):
    """
    Decode data the legacy way.

    :param data: The bytes to decode.
    :type data: bytes
    :param encoding: The encoding.
    :type encoding: str
    :return: The text.
    :rtype: str

    .. deprecated:: 2.0
       Use :func:`parse` instead.
    """
    return ""


class Parser:
    """
    A parser that keeps state between calls.

    :ivar depth: How deep the parser is.
    """

    def __init__(self, depth: int = 0) -> None:
        """
        Make a parser.

        :param depth: The starting depth.
        """
        self.depth = depth

    def feed(self, chunk: str) -> int:
        """
        Feed the parser a chunk.

        :param chunk: The chunk of text.
        :returns: How many tokens the chunk completed.
        :raises EOFError: When the parser was closed.
        """
        return 0
