"""
Core helpers of the fixture: functions of every parameter kind and a class of every member kind.

The module's own prose continues here, with a L{Widget} reference.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Iterator

from incremental import Version
from twisted.python.deprecate import deprecated

__docformat__ = "epytext"

DEFAULT_SIZE: int = 3
"""The size a L{Widget} gets when none is given."""

_hidden = 1


def every_kind(
    a, b: int, /, c, d: str = "x", *args: int, e, f: float = 1.5, **kwargs: object
) -> bool:
    """
    Take every kind of parameter Python has.

    The second paragraph of the body says more about the function.

    @param a: The first positional-only parameter.
    @param b: The second positional-only parameter.
    @param c: A positional-or-keyword parameter.
    @param d: A parameter with a default.
    @param args: Extra positional values.
    @param e: A keyword-only parameter.
    @param f: A keyword-only parameter with a default.
    @param kwargs: Extra keyword values.
    @return: Whether every value was accepted.
    @raise ValueError: When C{a} is negative.
    @raise TypeError: When C{b} is not an integer.
    """
    return True


def typed_fields(path, mode=None):
    """
    Open a path, with the types given by fields rather than annotations.

    @param path: The path to open.
    @type path: C{str}
    @param mode: The mode to open it in.
    @type mode: C{str} or C{None}
    @return: The opened handle.
    @rtype: C{int}
    """
    return 0


async def fetch(url: str, *, timeout: float = 10.0) -> bytes:
    """
    Fetch a URL asynchronously.

    @param url: The URL to fetch.
    @param timeout: Seconds to wait.
    @return: The body.
    """
    return b""


@deprecated(Version("pdfixture", 1, 2, 0), "pdfixture.core.every_kind")
def old_helper(value: int) -> int:
    """
    Double a value, the old way.

    @param value: The value to double.
    @return: Twice the value.
    @since: 0.5
    """
    return value * 2


def undocumented_function(x, y=2):
    return x


def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
    """
    Wrap a function in nothing at all.

    @param func: The function to wrap.
    @return: The same function.
    """
    return func


class Base:
    """
    The base of every widget.
    """

    def describe(self) -> str:
        """
        Describe the widget in a sentence.

        @return: The description.
        """
        return ""


class Widget(Base):
    """
    A widget with members of every kind.

    The class docstring has a second paragraph about widgets.

    @ivar count: How many times the widget was used.
    @type count: C{int}
    @cvar color: The colour every widget shares.
    """

    color: str = "red"

    def __init__(self, name: str, size: int = DEFAULT_SIZE) -> None:
        """
        Make a widget.

        @param name: The name of the widget.
        @param size: The size of the widget.
        """
        self.name = name
        """The widget's name, as given."""
        self.count = 0

    def resize(self, size: int, *, force: bool = False) -> None:
        """
        Resize the widget.

        @param size: The new size.
        @param force: Resize even when locked.
        @raise RuntimeError: When the widget is locked and C{force} is false.
        """

    @property
    def area(self) -> int:
        """
        The area the widget covers.
        """
        return 0

    @classmethod
    def create(cls, spec: dict[str, Any]) -> Widget:
        """
        Make a widget from a specification.

        @param spec: The specification.
        @return: The new widget.
        """
        return cls("x")

    @staticmethod
    def helper(x: int, y: int = 0) -> int:
        """
        Add two numbers, a static method.

        @param x: The first number.
        @param y: The second number.
        @return: Their sum.
        """
        return x + y

    async def refresh(self, delay: float = 0.0) -> None:
        """
        Refresh the widget asynchronously.

        @param delay: Seconds to wait first.
        """

    def __iter__(self) -> Iterator[int]:
        """
        Iterate over the widget's parts.
        """
        return iter(())

    class Options:
        """
        The options of a widget, a nested class.
        """

        verbose: bool = False
        """Whether the widget talks."""

        def merge(self, other: Widget.Options) -> Widget.Options:
            """
            Merge two sets of options.

            @param other: The other options.
            @return: The merged options.
            """
            return self


class Shape(abc.ABC):
    """
    An abstract shape.
    """

    @abc.abstractmethod
    def sides(self) -> int:
        """
        How many sides the shape has.

        @return: The number of sides.
        """
